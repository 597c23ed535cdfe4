import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../lib/cli/exit-codes.js';
import type { Queryable } from '../../../lib/db/database.js';
import type { ReportDocument } from '../../../lib/report/document.js';
import { runCliJson } from '../../support/cli-run.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession } from '../../support/frames.js';
import { deleteSessionKeepingRows, insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

async function addCost(db: Queryable, id: string, session: string, task: string, subcents: number): Promise<void> {
  await addCostEvent(db, { id, session, task, subcents, at: T(1) });
}

describe.each(TARGETS)('report sessions and cost attribution on %s', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const report = async (...args: string[]): Promise<ReportDocument> => {
    const run = await runCliJson(
      ['report', '--database-url', t.url, '--grace-seconds', '0', '--json', ...args],
      t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {},
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    return run.json as ReportDocument;
  };

  it('R4-7: sessions counts rows of task_sessions; rows of a deleted session are orphan_rows, still subagents, never a session', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: T(1) },
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'b', observed_at: T(2) },
      { task_session_id: 's2', task_id: 't1', tool_call_id: 'c', observed_at: T(3) },
    ]);
    await seedSession(t.db, 's3', 't1');
    await deleteSessionKeepingRows(t.db, 's2');

    const totals = (await report()).totals;
    // s1 and s3 exist; s2 is gone: 2 sessions, 3 subagents, 5 contexts
    expect(totals).toMatchObject({ subagents: 3, sessions: 2, orphan_rows: 1, contexts: 5 });

    const byTask = await report('--by', 'task');
    expect(byTask.groups.map((g) => [g.key, g.subagents, g.sessions, g.orphan_rows, g.contexts])).toEqual([
      ['t1', 3, 2, 1, 5],
    ]);
    expect(byTask.completeness.notes.join(' ')).toMatch(/1 row\(s\) in scope belong to a session that is no longer/);

    const bySession = await report('--by', 'session');
    expect(bySession.groups.map((g) => [g.key, g.subagents, g.sessions, g.orphan_rows, g.contexts])).toEqual([
      ['s1', 2, 1, 0, 3],
      ['s2', 1, 0, 1, 1],
      ['s3', 0, 1, 0, 1],
    ]);

    // the turn's rows are in s1 (exists) and s2 (gone): one session
    const byTurn = await report('--by', 'turn');
    expect(byTurn.groups.map((g) => [g.key, g.sessions, g.orphan_rows])).toEqual([['u1', 1, 1]]);

    const session2 = await report('--session', 's2');
    expect(session2.totals).toMatchObject({ subagents: 1, sessions: 0, orphan_rows: 1, contexts: 1 });
  });

  it("R4-7: a cost event with task_id '' is its session's task, the same under every filter and grouping", async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 'T1', tool_call_id: 'a', observed_at: T(1) },
      { task_session_id: 's2', task_id: 'T2', tool_call_id: 'b', observed_at: T(2) },
    ]);
    await addCost(t.db, 'e1', 's1', 'T1', 100);
    await addCost(t.db, 'e2', 's1', '', 50);
    await addCost(t.db, 'e3', 's2', 'T2', 7);

    const cost = (doc: ReportDocument) => doc.groups.map((g) => [g.key, g.cost_subcents]);
    expect(cost(await report('--by', 'session'))).toEqual([
      ['s1', 150],
      ['s2', 7],
    ]);
    expect(cost(await report('--by', 'session', '--task', 'T1'))).toEqual([['s1', 150]]);
    expect(cost(await report('--by', 'task'))).toEqual([
      ['T1', 150],
      ['T2', 7],
    ]);
    expect((await report('--task', 'T1')).totals.cost_subcents).toBe(150);
    expect((await report('--session', 's1')).totals.cost_subcents).toBe(150);
    expect((await report()).totals.cost_subcents).toBe(157);
  });
});
