import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../../lib/health/checkpoint.js';
import { buildReport } from '../../../lib/report/build.js';
import type { GroupBy } from '../../../lib/report/document.js';
import { reportDocument } from '../../../lib/report/document.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession } from '../../support/frames.js';
import { insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { seedMessage } from '../health/seed.js';

const us = (text: string) => parseRfc3339(text)!;
const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.000001Z`;
const NOW = us('2026-08-13T00:00:00Z');

/** Nearest rank, written independently of the SQL: the value at rank ⌈p/100 · n⌉ of the sorted values. */
function nearestRank(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p * sorted.length) / 100) - 1]!;
}

const rows = (n: number, make: (i: number) => Partial<StoredRow>): StoredRow[] =>
  Array.from({ length: n }, (_, i) => ({ tool_call_id: `c${i}`, observed_at: T(i % 60), ...make(i) }));

async function setMeta(db: Queryable, key: string, value: string) {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);
}

async function addCost(
  db: Queryable,
  id: string,
  e: { session: string; task: string; turn: string | null; subcents: number; estimated?: 0 | 1; at?: string },
) {
  await addCostEvent(db, { id, ...e, at: e.at ?? T(0) });
}

describe.each(TARGET_FIXTURES)('report figures on %s, %s host schema', (target, fixture) => {
  // R3-3: on the host's real DDL the table is the host's own, with no object of ours on it.
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const report = (options: Parameters<typeof buildReport>[1] = {}) => buildReport(t.db, { now: NOW, ...options });

  it('R3-6: all metrics NULL → every sum is null with reported 0, and no percentile', async () => {
    await insertRows(
      t.db,
      rows(3, () => ({})),
    );
    const { totals } = await report();
    expect(totals.tokens).toEqual({ sum: null, reported: 0, p50: null, p95: null, max: null });
    expect(totals.tool_uses).toEqual({ sum: null, reported: 0 });
    expect(totals.duration_ms).toEqual({ reported: 0, p50: null, p95: null, max: null });
    expect(totals.subagents).toBe(3);
  });

  it('R3-6: a reported 0 is a sum of 0 with reported 1, never dropped', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', total_tokens: 0, tool_use_count: 0, duration_ms: 0, observed_at: T(1) },
      { tool_call_id: 'b', observed_at: T(2) },
    ]);
    const { totals } = await report();
    expect(totals.tokens).toEqual({ sum: 0, reported: 1, p50: 0, p95: 0, max: 0 });
    expect(totals.tool_uses).toEqual({ sum: 0, reported: 1 });
    expect(totals.duration_ms).toEqual({ reported: 1, p50: 0, p95: 0, max: 0 });
  });

  it.each([
    [['unknown'], 0, 1],
    [['unknown', 'unknown'], 0, 2],
    [['unknown', 'e1', 'e2', 'e2'], 2, 1],
  ])(
    "R3-6: executions %j → %d executions, %d unknown_execution ('unknown' is not an identity)",
    async (executions, distinct, unknown) => {
      await insertRows(
        t.db,
        executions.map((e, i) => ({ tool_call_id: `c${i}`, agent_execution_id: e, observed_at: T(i) })),
      );
      const { totals } = await report();
      expect(totals.executions).toBe(distinct);
      expect(totals.unknown_execution).toBe(unknown);
    },
  );

  it.each([1, 2, 19, 20, 21])('R3-6: duration p50 and p95 are nearest-rank for n = %d', async (n) => {
    // A scrambled order: the SQL must sort, not read insertion order.
    const values = Array.from({ length: n }, (_, i) => ((i * 7) % n) * 1000 + 17);
    await insertRows(
      t.db,
      rows(n, (i) => ({ duration_ms: values[i]! })),
    );
    const { totals } = await report();
    expect(totals.duration_ms).toEqual({
      reported: n,
      p50: nearestRank(values, 50),
      p95: nearestRank(values, 95),
      max: Math.max(...values),
    });
  });

  it('R3-6: percentiles with ties, and over reported rows only', async () => {
    const values = [5, 5, 5, 7, 7, 9, 9, 9, 9, 100];
    await insertRows(t.db, [
      ...rows(values.length, (i) => ({ duration_ms: values[i]! })),
      ...rows(5, (i) => ({ tool_call_id: `unreported${i}` })),
    ]);
    const { totals } = await report();
    expect(totals.duration_ms).toEqual({ reported: 10, p50: 7, p95: 100, max: 100 });
    expect(nearestRank(values, 50)).toBe(7);
  });

  it('R3-5: nested rows, async, live/backfill, settled, failed and models, counted apart', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', model: 'm1', is_async: 1, observed_at: T(1) },
      { tool_call_id: 'b', turn_id: 'u1', parent_tool_call_id: 'a', model: 'm1', observed_at: T(2) },
      { tool_call_id: 'c', turn_id: 'u1', parent_tool_call_id: '', model: 'm2', observed_at: T(3) },
      {
        tool_call_id: 'd',
        turn_id: 'u2',
        source: 'backfill',
        agent_execution_id: 'unknown',
        tool_status: 'failed',
        settled_at: T(9),
        observed_at: T(4),
      },
      { tool_call_id: 'e', turn_id: 'u2', tool_status: 'cancelled', settled_at: T(9), observed_at: T(5) },
      { tool_call_id: 'f', turn_id: 'u2', tool_status: 'complete', settled_at: T(9), observed_at: T(6) },
      { tool_call_id: 'g', turn_id: 'u3', tool_status: 'error', settled_at: T(9), observed_at: T(7) },
    ]);
    const { totals } = await report();
    expect(totals).toMatchObject({
      subagents: 7,
      top_level: 6,
      nested: 1,
      async: 1,
      live: 6,
      backfill: 1,
      settled: 4,
      failed: 3,
      turns: 3,
      models: {
        counts: [
          { model: 'm1', subagents: 2 },
          { model: 'm2', subagents: 1 },
        ],
        unreported: 4,
      },
      // u1: a and c top-level (b nested under a); u2: three; u3: one
      fan_out: [
        { top_level: 1, turns: 1 },
        { top_level: 2, turns: 1 },
        { top_level: 3, turns: 1 },
      ],
      first_observed_at: T(1),
      last_observed_at: T(7),
    });
  });

  it('R3-7: a task’s sessions are its rows in task_sessions (with or without subagents); contexts = sessions + subagents', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: T(1) },
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'b', observed_at: T(2) },
      { task_session_id: 's3', task_id: 't2', tool_call_id: 'c', observed_at: T(3) },
    ]);
    await seedSession(t.db, 's2', 't1');
    await seedSession(t.db, 's4', 't3');
    const doc = await report({ by: 'task' });
    expect(doc.totals).toMatchObject({ sessions: 4, contexts: 7, subagents: 3 });
    expect(doc.groups.map((g) => [g.key, g.sessions, g.subagents, g.contexts])).toEqual([
      ['t1', 2, 2, 4],
      ['t2', 1, 1, 2],
      ['t3', 1, 0, 1],
    ]);
    const bySession = await report({ by: 'session' });
    expect(bySession.groups.map((g) => [g.key, g.sessions, g.contexts])).toEqual([
      ['s1', 1, 3],
      ['s3', 1, 2],
      ['s2', 1, 1],
      ['s4', 1, 1],
    ]);
  });

  it.each<GroupBy>(['type', 'model', 'day'])(
    'R3-7: groups by %s have no sessions, contexts or cost of their own (null, with the reason)',
    async (by) => {
      await insertRows(t.db, [{ tool_call_id: 'a', model: 'm', observed_at: T(1) }]);
      const doc = await report({ by });
      expect(doc.groups).toHaveLength(1);
      expect(doc.groups[0]).toMatchObject({ sessions: null, contexts: null, cost_subcents: null });
      expect(doc.totals.sessions).toBe(1);
      expect(doc.completeness.notes.join(' ')).toMatch(new RegExp(`groups by ${by} have no sessions`));
    },
  );

  it('R3-5: --by turn, type and model give the NULL key its own group; --by day the UTC day', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: null, subagent_type: null, observed_at: '2026-08-12T23:59:59.999999Z' },
      { tool_call_id: 'b', turn_id: 'u1', subagent_type: 'Explore', observed_at: '2026-08-13T00:00:00Z' },
      { tool_call_id: 'c', turn_id: 'u1', subagent_type: 'Explore', observed_at: '2026-08-13T01:00:00+01:00' },
    ]);
    const byTurn = await report({ by: 'turn' });
    expect(byTurn.groups.map((g) => [g.key, g.subagents])).toEqual([
      ['u1', 2],
      [null, 1],
    ]);
    const byType = await report({ by: 'type' });
    expect(byType.groups.map((g) => [g.key, g.subagents])).toEqual([
      ['Explore', 2],
      [null, 1],
    ]);
    const byDay = await report({ by: 'day', sort: 'key' });
    expect(byDay.groups.map((g) => [g.key, g.subagents])).toEqual([
      ['2026-08-12', 1],
      ['2026-08-13', 2],
    ]);
  });

  it('R3-5: --since/--until bound observed_at as [since, until), --task and --session the rows', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: '2026-08-12T13:00:00.000000Z' },
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'b', observed_at: '2026-08-12T13:00:00.000001Z' },
      { task_session_id: 's2', task_id: 't2', tool_call_id: 'c', observed_at: '2026-08-12T13:00:00.000002Z' },
    ]);
    const window = await report({ since: us('2026-08-12T13:00:00.000001Z'), until: us('2026-08-12T13:00:00.000002Z') });
    expect(window.totals.subagents).toBe(1);
    expect(window.totals.first_observed_at).toBe('2026-08-12T13:00:00.000001Z');
    expect((await report({ task: 't1' })).totals).toMatchObject({ subagents: 2, sessions: 1 });
    expect((await report({ session: 's2' })).totals).toMatchObject({ subagents: 1, sessions: 1, contexts: 2 });
  });

  it('R3-5: --sort and --limit choose and order the groups', async () => {
    await insertRows(t.db, [
      ...rows(3, (i) => ({ task_session_id: 's1', task_id: 't1', tool_call_id: `a${i}`, total_tokens: 10 })),
      ...rows(2, (i) => ({ task_session_id: 's2', task_id: 't2', tool_call_id: `b${i}`, total_tokens: 100 })),
      ...rows(1, (i) => ({ task_session_id: 's3', task_id: 't3', tool_call_id: `c${i}` })),
    ]);
    const keys = async (sort: 'subagents' | 'tokens' | 'key', limit?: number) =>
      (await report({ by: 'task', sort, limit })).groups.map((g) => g.key);
    expect(await keys('subagents')).toEqual(['t1', 't2', 't3']);
    expect(await keys('tokens')).toEqual(['t2', 't1', 't3']);
    expect(await keys('key', 2)).toEqual(['t1', 't2']);
  });

  it('R3-8: completeness carries capture_since, backfill_through and the health checkpoint, read-only', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T12:00:00.123456000Z');
    await setMeta(t.db, BACKFILL_THROUGH_KEY, '2026-08-12T11:59:00.5Z');
    await setMeta(t.db, CHECKPOINT_KEY, '2026-08-12T23:00:00.000000000Z');
    const { completeness } = await report({ graceSeconds: 0 });
    expect(completeness).toMatchObject({
      capture_since: '2026-08-12T12:00:00.123456Z',
      backfill_through: '2026-08-12T11:59:00.500000Z',
      verified_through: '2026-08-12T23:00:00.000000Z',
      lower_bound_sessions: 0,
    });
  });

  it('R3-8: not activated → no shortfall checked, and a note that says so', async () => {
    const { completeness } = await report();
    expect(completeness).toMatchObject({
      capture_since: null,
      backfill_through: null,
      verified_through: null,
      shortfall: { open: false, count: 0, checked: false },
      missing: [],
    });
    expect(completeness.notes.join(' ')).toMatch(/not activated/);
  });

  it('R3-8, R3-3: an open shortfall is counted with up to 20 missing keys (the health check’s own statement), on a store the host activated too', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T12:00:00.000000000Z');
    for (let i = 0; i < 22; i++) {
      await seedMessage(t.db, {
        createdAt: us(`2026-08-12T13:00:${String(i).padStart(2, '0')}Z`),
        toolCallId: `m${i}`,
      });
    }
    await insertRows(t.db, [{ tool_call_id: 'm0', observed_at: '2026-08-12T13:00:01Z' }]);
    // A checkpoint at capture_since: nothing verified yet, the window is the whole time since.
    await setMeta(t.db, CHECKPOINT_KEY, '2026-08-12T12:00:00.000000000Z');
    const { completeness } = await report({ graceSeconds: 0 });
    expect(completeness.shortfall).toEqual({ open: true, count: 21, checked: true });
    expect(completeness.missing).toHaveLength(20);
    expect(completeness.missing[0]).toEqual({ task_session_id: 's1', tool_call_id: 'm1' });
    // Behind the checkpoint, the scheduled check has verified (or an operator accepted) it: not open.
    await t.db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [
      '2026-08-12T13:00:30.000000000Z',
      CHECKPOINT_KEY,
    ]);
    expect((await report({ graceSeconds: 0 })).completeness.shortfall).toEqual({
      open: false,
      count: 0,
      checked: true,
    });
  });

  it('R4-12: with no health checkpoint the shortfall is not checked (the full audit is health’s), and a note names the command', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T12:00:00.000000000Z');
    await seedMessage(t.db, { createdAt: us('2026-08-12T13:00:00Z'), toolCallId: 'm0' });
    const { completeness } = await report({ graceSeconds: 0 });
    expect(completeness.shortfall).toEqual({ open: false, count: 0, checked: false });
    expect(completeness.missing).toEqual([]);
    expect(completeness.notes.join(' ')).toMatch(/no checkpoint.*not checked.*`subagent-context health`/);
  });

  it('R3-6, AC-25: a group whose session has activity before capture_since is a lower bound, and counted', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T12:00:00.000000000Z');
    await seedMessage(t.db, { session: 's1', createdAt: us('2026-08-12T11:59:59.999999Z'), metadata: '{}' });
    await seedMessage(t.db, { session: 's2', createdAt: us('2026-08-12T12:00:00Z'), metadata: '{}' });
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: T(1) },
      { task_session_id: 's2', task_id: 't1', tool_call_id: 'b', observed_at: T(2) },
    ]);
    const doc = await report({ by: 'session', graceSeconds: 0 });
    expect(doc.groups.map((g) => [g.key, g.lower_bound])).toEqual([
      ['s1', true],
      ['s2', false],
    ]);
    expect(doc.completeness.lower_bound_sessions).toBe(1);
    expect(doc.completeness.notes.join(' ')).toMatch(/lower bound/);
  });

  it.runIf(fixture === 'host')(
    'R3-7: cost from the host’s office_cost_events per task, session and turn and in the totals; cost per context rounds half away from zero (R6-11)',
    async () => {
      await insertRows(t.db, [
        { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'a', observed_at: T(1) },
        { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'b', observed_at: T(2) },
        { task_session_id: 's2', task_id: 't2', turn_id: 'u2', tool_call_id: 'c', observed_at: T(3) },
      ]);
      await addCost(t.db, 'e1', { session: 's1', task: 't1', turn: 'u1', subcents: 1000 });
      await addCost(t.db, 'e2', { session: 's1', task: 't1', turn: null, subcents: 501, estimated: 1 });
      await addCost(t.db, 'e3', { session: 's2', task: 't2', turn: 'u2', subcents: 3 });
      const doc = await report({ by: 'task' });
      // totals: 1504 subcents over 2 sessions + 3 subagents = 300.8 → 301
      expect(doc.totals).toMatchObject({
        cost_subcents: 1504,
        estimated_cost_subcents: 501,
        contexts: 5,
        cost_per_context_subcents: 301,
      });
      // t1: 1501 / 3 = 500.33 → 500; t2: 3 / 2 = 1.5 → 2 (half away from zero)
      expect(
        doc.groups.map((g) => [g.key, g.cost_subcents, g.estimated_cost_subcents, g.cost_per_context_subcents]),
      ).toEqual([
        ['t1', 1501, 501, 500],
        ['t2', 3, 0, 2],
      ]);
      const byTurn = await report({ by: 'turn' });
      expect(byTurn.groups.map((g) => [g.key, g.cost_subcents, g.contexts])).toEqual([
        ['u1', 1000, 3],
        ['u2', 3, 2],
      ]);
      // A window: cost occurred in it (none here), rows observed in it, sessions started in it (s1, s2 at 13:24:58).
      const bySession = await report({ by: 'session', since: us(T(3)) });
      expect(bySession.totals.cost_subcents).toBeNull();
      expect(bySession.groups.map((g) => [g.key, g.subagents, g.sessions])).toEqual([
        ['s2', 1, 1],
        ['s1', 0, 1],
      ]);
    },
  );

  it.runIf(fixture === 'host')(
    'R3-7: titles from tasks.title, session starts from task_sessions.started_at',
    async () => {
      await insertRows(t.db, [{ task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: T(1) }]);
      await t.db.query("UPDATE tasks SET title = 'Fix the login page' WHERE id = 't1'");
      const byTask = await report({ by: 'task' });
      expect(byTask.groups[0]).toMatchObject({
        key: 't1',
        title: 'Fix the login page',
        started_at: '2026-08-12T13:24:58.000000Z',
      });
      const bySession = await report({ by: 'session' });
      expect(bySession.groups[0]).toMatchObject({ key: 's1', title: null, started_at: '2026-08-12T13:24:58.000000Z' });
    },
  );

  it.runIf(fixture === 'minimal')(
    'R3-7: without office_cost_events, cost is null and the report says why',
    async () => {
      await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1) }]);
      const doc = await report({ by: 'task' });
      expect(doc.totals).toMatchObject({
        cost_subcents: null,
        estimated_cost_subcents: null,
        cost_per_context_subcents: null,
      });
      expect(doc.groups[0]).toMatchObject({ title: null, started_at: null, cost_subcents: null });
      expect(doc.completeness.notes.join(' ')).toMatch(/no office_cost_events table/);
    },
  );

  it('R3-5: the document parses with its own schema (version 1)', async () => {
    await insertRows(
      t.db,
      rows(4, (i) => ({ duration_ms: i * 10, model: i % 2 ? 'm' : null })),
    );
    for (const by of [undefined, 'task', 'session', 'turn', 'type', 'model', 'day'] as const) {
      const doc = await report({ by, trees: 2, pageData: true });
      expect(reportDocument.safeParse(doc).success).toBe(true);
    }
  });
});
