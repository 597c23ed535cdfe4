import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../../lib/health/checkpoint.js';
import { buildReport } from '../../../lib/report/build.js';
import type { GroupBy } from '../../../lib/report/document.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { seedMessage } from '../health/seed.js';

/*
 * The report's edges that a plausible bug moves (issue 30, items 1-6): each test is one behaviour
 * of docs/report.md with its expected value written by hand, on every target and host schema.
 */

const us = (text: string) => parseRfc3339(text)!;
const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.000001Z`;
const NOW = us('2026-08-13T00:00:00Z');

async function setMeta(db: Queryable, key: string, value: string) {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);
}

async function addCost(
  db: Queryable,
  columns: 'with turn_id' | 'without turn_id',
  e: { id: string; session: string; task: string; turn?: string; subcents: number; at: string },
) {
  const d = db.dialect;
  const at = d.encodeTimestamp(us(e.at));
  if (columns === 'with turn_id')
    await db.query(
      `INSERT INTO office_cost_events (id, session_id, task_id, turn_id, cost_subcents, estimated, occurred_at, created_at)
       VALUES ($1, $2, $3, $4, $5, 0, ${d.timestampParam(6)}, ${d.timestampParam(6)})`,
      [e.id, e.session, e.task, e.turn ?? null, e.subcents, at],
    );
  else
    await db.query(
      `INSERT INTO office_cost_events (id, session_id, task_id, cost_subcents, estimated, occurred_at)
       VALUES ($1, $2, $3, $4, 0, ${d.timestampParam(5)})`,
      [e.id, e.session, e.task, e.subcents, at],
    );
}

describe.each(TARGET_FIXTURES)('report edges on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const report = (options: Parameters<typeof buildReport>[1] = {}) => buildReport(t.db, { now: NOW, ...options });
  const keys = async (options: Parameters<typeof buildReport>[1]) =>
    (await report(options)).groups.map((g) => [g.key, g.subagents]);

  it.each<[GroupBy, 'model' | 'subagent_type']>([
    ['model', 'model'],
    ['type', 'subagent_type'],
  ])(
    "R3-5: --by %s gives a key stored as '' and a key never reported (NULL) two groups, never one",
    async (by, column) => {
      await insertRows(t.db, [
        { tool_call_id: 'a', [column]: '', observed_at: T(1) },
        { tool_call_id: 'b', [column]: null, observed_at: T(2) },
        { tool_call_id: 'c', [column]: null, observed_at: T(3) },
      ]);
      expect(await keys({ by })).toEqual([
        [null, 2],
        ['', 1],
      ]);
    },
  );

  it('R3-5: on a tie the NULL key sorts last (after every key, in code-unit order)', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', model: 'b', observed_at: T(1) },
      { tool_call_id: 'b', model: null, observed_at: T(2) },
      { tool_call_id: 'c', model: 'B', observed_at: T(3) },
      { tool_call_id: 'd', model: 'a', observed_at: T(4) },
    ]);
    expect(await keys({ by: 'model' })).toEqual([
      ['B', 1],
      ['a', 1],
      ['b', 1],
      [null, 1],
    ]);
  });

  it('R3-5: --sort key orders keys ascending with the NULL key last, whatever their figures', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', model: null, observed_at: T(1) },
      { tool_call_id: 'b', model: null, observed_at: T(2) },
      { tool_call_id: 'c', model: null, observed_at: T(3) },
      { tool_call_id: 'd', model: 'z', observed_at: T(4) },
      { tool_call_id: 'e', model: 'm', observed_at: T(5) },
      { tool_call_id: 'f', model: 'm', observed_at: T(6) },
    ]);
    expect(await keys({ by: 'model', sort: 'key' })).toEqual([
      ['m', 2],
      ['z', 1],
      [null, 3],
    ]);
    // the figure order, for contrast: most subagents first
    expect(await keys({ by: 'model' })).toEqual([
      [null, 3],
      ['m', 2],
      ['z', 1],
    ]);
  });

  it('R3-8: a message newer than now − grace is not a shortfall yet (60 s old at grace 900 s); at grace 30 s it is', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T00:00:00.000000000Z');
    // R4-12: the report computes the shortfall from a checkpoint (here one that verified nothing yet)
    await setMeta(t.db, CHECKPOINT_KEY, '2026-08-12T00:00:00.000000000Z');
    await seedMessage(t.db, { createdAt: NOW - 60_000_000n, toolCallId: 'late' });
    expect((await report({ graceSeconds: 900 })).completeness).toMatchObject({
      shortfall: { open: false, count: 0, checked: true },
      missing: [],
    });
    expect((await report({ graceSeconds: 30 })).completeness).toMatchObject({
      shortfall: { open: true, count: 1, checked: true },
      missing: [{ task_session_id: 's1', tool_call_id: 'late' }],
    });
  });

  it("R3-8, AC-24f: backfill_through = '' reads as none (null, no note), while a value that is no instant is noted", async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T00:00:00.000000000Z');
    await setMeta(t.db, BACKFILL_THROUGH_KEY, '');
    const empty = (await report({ graceSeconds: 0 })).completeness;
    expect(empty.backfill_through).toBeNull();
    expect(empty.notes.filter((n) => n.includes(BACKFILL_THROUGH_KEY))).toEqual([]);
    await t.db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', ['yesterday', BACKFILL_THROUGH_KEY]);
    const garbage = (await report({ graceSeconds: 0 })).completeness;
    expect(garbage.backfill_through).toBeNull();
    expect(garbage.notes.filter((n) => n.includes(BACKFILL_THROUGH_KEY))).toEqual([
      `kandev_meta key ${BACKFILL_THROUGH_KEY} holds "yesterday", which is not an instant: it is reported as null (migrate and health say how to repair it).`,
    ]);
  });

  it.runIf(fixture === 'host')(
    'R3-7: a cost event exactly at --since is in the window (occurred_at in [since, until)); one a microsecond earlier is not',
    async () => {
      await insertRows(t.db, [{ tool_call_id: 'a', turn_id: 'u1', observed_at: T(5) }]);
      await addCost(t.db, 'with turn_id', {
        id: 'at',
        session: 's1',
        task: 't1',
        turn: 'u1',
        subcents: 1000,
        at: T(5),
      });
      await addCost(t.db, 'with turn_id', {
        id: 'before',
        session: 's1',
        task: 't1',
        turn: 'u1',
        subcents: 7,
        at: '2026-08-12T13:00:05.000000Z',
      });
      const doc = await report({ since: us(T(5)) });
      expect(doc.totals.cost_subcents).toBe(1000);
      expect((await report({ since: us(T(5)), by: 'task' })).groups.map((g) => [g.key, g.cost_subcents])).toEqual([
        ['t1', 1000],
      ]);
      expect((await report()).totals.cost_subcents).toBe(1007);
    },
  );

  it.runIf(fixture === 'minimal')(
    'R3-7: a cost ledger without turn_id gives --by turn null cost and a note (no SQL error); task cost is still summed',
    async () => {
      await t.db.query(`CREATE TABLE office_cost_events (
        id TEXT PRIMARY KEY, session_id TEXT, task_id TEXT, cost_subcents INTEGER NOT NULL,
        estimated INTEGER NOT NULL DEFAULT 0, occurred_at TIMESTAMP NOT NULL)`);
      await insertRows(t.db, [{ tool_call_id: 'a', turn_id: 'u1', observed_at: T(1) }]);
      await addCost(t.db, 'without turn_id', { id: 'e1', session: 's1', task: 't1', subcents: 1000, at: T(1) });
      const byTurn = await report({ by: 'turn' });
      expect(byTurn.groups.map((g) => [g.key, g.subagents, g.cost_subcents, g.cost_per_context_subcents])).toEqual([
        ['u1', 1, null, null],
      ]);
      expect(byTurn.totals.cost_subcents).toBe(1000);
      expect(byTurn.completeness.notes).toContain(
        'cost per turn is null: office_cost_events has no turn_id column (a host before its turn attribution).',
      );
      const byTask = await report({ by: 'task' });
      expect(byTask.groups.map((g) => [g.key, g.cost_subcents])).toEqual([['t1', 1000]]);
      expect(byTask.completeness.notes.join(' ')).not.toMatch(/cost per turn/);
      // R5-3: a turn's cost cannot be read either, in any report
      expect(byTask.fan_out_cost).toBeNull();
      expect(byTask.completeness.notes).toContain(
        'fan_out_cost is null: office_cost_events has no turn_id column (a host before its turn attribution).',
      );
    },
  );
});
