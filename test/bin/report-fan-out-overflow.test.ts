import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import type { ReportDocument } from '../../lib/report/document.js';
import { parseRfc3339 } from '../../lib/time.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { addCostEvent } from '../support/cost-events.js';
import { insertRows } from '../support/subagent-rows.js';
import { POSTGRES_TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * R4-3 / issue 57 #4 and #15 through the CLI, on the host's real schema: one turn whose cost is
 * beyond 2^53 − 1 costs its bucket's cost figures (null, with a note), as the totals' overflow
 * does, never the report; and with a window, a turn whose start is NULL is not reported, not
 * counted as unreadable. An event's cost is at most 2^31 − 1 (the host's INTEGER), so the turn
 * holds 2^22 + 1 such events: 2^53 + 2^31 − 2^22 − 1 in all. That store is written on SQLite only
 * (about 30 s, and the report over it 20 s; on PGlite it takes minutes): the statement is one
 * text for both dialects (lib/report/fan-out-cost-sql.ts) and read by one reader.
 */

const EVENTS = 2 ** 22 + 1;
const MAX_EVENT = 2 ** 31 - 1;

describe('R4-3 / issue 57 #4: a turn cost beyond 2^53 − 1 on sqlite', () => {
  const t = useTestDatabase('sqlite', { fixture: 'host', subagentTable: false });

  it('R4-3 / issue 57 #4: report --json gives the bucket’s cost figures as null with a note; the other bucket is exact', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'a', observed_at: '2026-08-12T13:00:00Z' },
      { task_session_id: 's1', task_id: 't1', turn_id: 'u2', tool_call_id: 'b', observed_at: '2026-08-12T13:00:00Z' },
      { task_session_id: 's1', task_id: 't1', turn_id: 'u2', tool_call_id: 'c', observed_at: '2026-08-12T13:00:01Z' },
    ]);
    // the host's own columns, as its writer fills them, in one statement
    const at = t.db.dialect.encodeTimestamp(parseRfc3339('2026-08-12T13:00:00Z')!);
    await t.db.query(
      `INSERT INTO office_cost_events (id, session_id, task_id, turn_id, cost_subcents, estimated, cost_source, occurred_at, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${EVENTS})
       SELECT 'big' || i, 's1', 't1', 'u1', ${MAX_EVENT}, 0, 'provider_reported', $1, $1 FROM n`,
      [at],
    );
    await addCostEvent(t.db, {
      id: 'e3',
      session: 's1',
      task: 't1',
      turn: 'u2',
      subcents: 25,
      source: 'provider_reported',
      at: '2026-08-12T13:00:00Z',
    });
    const run = await runCliJson(['report', '--database-url', t.url, '--json']);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const doc = run.json as ReportDocument;
    expect(doc.fan_out_cost!.buckets[1]).toMatchObject({
      fan_out: '1',
      turns: 1,
      costed_turns: 1,
      cost_subcents: null,
      mean_subcents: null,
      median_subcents: null,
      p95_subcents: null,
    });
    expect(doc.fan_out_cost!.buckets[2]).toMatchObject({
      fan_out: '2',
      costed_turns: 1,
      cost_subcents: 25,
      median_subcents: 25,
    });
    expect(doc.totals.cost_subcents).toBeNull();
    expect(doc.completeness.notes).toContain(
      "the fan-out cost of 1 bucket(s) (1) is null: a turn's cost or the bucket's sum exceeds 2^53 − 1, beyond what a JSON reader keeps exactly.",
    );
  }, 240_000);
});

/*
 * issue 57 #15: the host's DDL makes started_at NOT NULL; a store whose column allows NULL (an
 * older host, a hand-made store) is made so on PostgreSQL, where a column's NOT NULL can be dropped.
 */
describe.each(POSTGRES_TARGETS)('R4-3 / issue 57 #15: a NULL turn start on %s', (target) => {
  const t = useTestDatabase(target, { fixture: 'host', subagentTable: false });

  it('R4-3 / issue 57 #15: with a window, a turn whose started_at is NULL is not counted in unreadable_started_at; one that is no instant is', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'a', observed_at: '2026-08-12T13:00:00Z' },
      { task_session_id: 's1', task_id: 't1', turn_id: 'u2', tool_call_id: 'b', observed_at: '2026-08-12T13:00:00Z' },
    ]);
    await t.db.query('ALTER TABLE task_session_turns ALTER COLUMN started_at DROP NOT NULL');
    await t.db.query("UPDATE task_session_turns SET started_at = NULL WHERE id = 'u1'");
    await t.db.query("UPDATE task_session_turns SET started_at = 'infinity' WHERE id = 'u2'");
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    const run = await runCliJson(
      ['report', '--database-url', t.url, '--json', '--since', '2026-08-01'],
      testProxyEnv(),
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect((run.json as ReportDocument).fan_out_cost!.unreadable_started_at).toBe(1);
  });
});
