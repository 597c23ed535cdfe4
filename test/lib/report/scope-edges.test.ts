import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { buildReport, type ReportOptions } from '../../../lib/report/build.js';
import { type GroupBy, seriesGroupOf } from '../../../lib/report/document.js';
import { CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession } from '../../support/frames.js';
import { deleteSessionKeepingRows, insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { seedMessage } from '../health/seed.js';

/*
 * The report's scope where its SQL branches (lib/report/sql.ts): the window's bounds [since,
 * until) with rows, sessions and cost events placed on them, a window bounded on one side
 * only, --task with --session, a cost event whose occurred_at is no instant, a ledger without
 * turn_id under the groupings that are not made of sessions, a session that started before
 * capture_since with no message before it (with and without the host's (task_session_id,
 * created_at) index), and a cut --by beside the page's task rows. Every expected value is written
 * by hand or read from the same report uncut.
 */

const NOW = parseRfc3339('2026-09-01T00:00:00Z')!;
const us = (text: string) => parseRfc3339(text)!;
const EARLY = '2026-08-12T09:00:00.000000Z';
const SINCE = '2026-08-12T10:00:00.000000Z';
const INSIDE = '2026-08-12T10:30:00.000000Z';
const UNTIL = '2026-08-12T11:00:00.000000Z';
const LATE = '2026-08-12T12:00:00.000000Z';

/** Capture activated at SINCE (kandev_meta's key form), as migrate records it. */
const activateCapture = (db: Queryable) =>
  db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [
    CAPTURE_SINCE_KEY,
    '2026-08-12T10:00:00.000000000Z',
  ]);

describe.each(TARGETS)('report scope edges on %s, host schema', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const report = (options: ReportOptions = {}) => buildReport(t.db, { now: NOW, graceSeconds: 0, ...options });
  const at = (text: string) => t.db.dialect.encodeTimestamp(us(text));
  // what the host's column can hold that is no instant: text on SQLite, infinity on PostgreSQL
  const noInstant = target === 'sqlite' ? "'garbage'" : "'infinity'";

  async function startSession(session: string, task: string, started: string) {
    await seedSession(t.db, session, task);
    await t.db.query(`UPDATE task_sessions SET started_at = ${t.db.dialect.timestampParam(1)} WHERE id = $2`, [
      at(started),
      session,
    ]);
  }

  const addCost = (id: string, session: string, task: string, subcents: number, occurred: string) =>
    addCostEvent(t.db, { id, session, task, subcents, at: occurred });
  const window = { since: us(SINCE), until: us(UNTIL) };

  it('R3-7: a session started at --since is in the window’s sessions, one started at --until is not', async () => {
    await startSession('s-since', 't1', SINCE);
    await startSession('s-until', 't1', UNTIL);
    await startSession('s-after', 't1', LATE);
    const doc = await report({ by: 'session', ...window });
    expect(doc.totals.sessions).toBe(1);
    expect(doc.groups.map((g) => [g.key, g.sessions])).toEqual([['s-since', 1]]);
  });

  it('R3-7: a cost event at --until is outside the window (one at --since inside), in the totals and its task', async () => {
    await insertRows(t.db, [{ task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE }]);
    await addCost('c-since', 's1', 't1', 7, SINCE);
    await addCost('c-until', 's1', 't1', 100, UNTIL);
    expect((await report(window)).totals.cost_subcents).toBe(7);
    expect((await report({ by: 'task', ...window })).groups.map((g) => [g.key, g.cost_subcents])).toEqual([['t1', 7]]);
  });

  it.each([
    ['--since and --until', window],
    ['--since alone', { since: us(SINCE) }],
    ['--until alone', { until: us(UNTIL) }],
  ])(
    'R3-5, R4-3: with %s a row whose observed_at is no instant is in no group, at any level (counted as unreadable)',
    async (_, bounds) => {
      await insertRows(t.db, [
        { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'in', observed_at: INSIDE },
        { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'odd', observed_at: INSIDE },
        { task_session_id: 's2', task_id: 't2', turn_id: 'u2', tool_call_id: 'odd-alone', observed_at: INSIDE },
      ]);
      await t.db.query(
        `UPDATE task_session_subagents SET observed_at = ${noInstant} WHERE tool_call_id IN ('odd', 'odd-alone')`,
      );
      for (const by of ['task', 'session', 'turn', 'type', 'model'] as GroupBy[]) {
        const doc = await report({ by, ...bounds });
        expect(doc.completeness.unreadable.observed_at, `--by ${by}`).toBe(2);
        expect(doc.totals.subagents, `--by ${by}`).toBe(1);
        expect(
          doc.groups.map((g) => g.subagents).reduce((a, b) => a + b, 0),
          `--by ${by}`,
        ).toBe(1);
        // (a session started in the window is a group without rows: only the groups with rows count here)
        expect(
          doc.groups.filter((g) => g.subagents > 0).map((g) => g.subagents),
          `--by ${by}`,
        ).toEqual([1]);
      }
    },
  );

  it.each([
    ['--since alone', { since: us(SINCE) }, ['s-inside', 's-late']],
    ['--until alone', { until: us(UNTIL) }, ['s-early', 's-inside']],
  ])('R3-7: with %s the sessions are those started on its side of the bound', async (_, window, expected) => {
    await startSession('s-early', 't1', EARLY);
    await startSession('s-inside', 't1', INSIDE);
    await startSession('s-late', 't1', LATE);
    const doc = await report({ by: 'session', ...window });
    expect(doc.groups.map((g) => g.key).sort()).toEqual(expected);
    expect(doc.totals.sessions).toBe(2);
  });

  it('R3-5, R3-7: --task and --session together keep the rows and the cost of both', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE },
      { task_session_id: 's2', task_id: 't1', tool_call_id: 'b', observed_at: INSIDE },
      { task_session_id: 's3', task_id: 't2', tool_call_id: 'c', observed_at: INSIDE },
    ]);
    await addCost('e1', 's1', 't1', 10, INSIDE);
    await addCost('e2', 's2', 't1', 200, INSIDE);
    await addCost('e3', 's3', 't2', 3000, INSIDE);
    const doc = await report({ task: 't1', session: 's1' });
    expect(doc.totals).toMatchObject({ subagents: 1, sessions: 1, cost_subcents: 10 });
  });

  it('R3-7, R4-12: under --task a row’s session counts though task_sessions files it under another task; unfiltered every session counts once', async () => {
    await startSession('s-moved', 't2', INSIDE);
    await startSession('s-idle', 't1', INSIDE);
    // the row names t1, its session is t2's in task_sessions
    await insertRows(t.db, [{ task_session_id: 's-moved', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE }]);
    const underTask = await report({ task: 't1' });
    expect(underTask.totals.sessions).toBe(2);
    const whole = await report();
    expect(whole.totals.sessions).toBe(2);
    expect(whole.totals.contexts).toBe(3);
  });

  it('R3-7, R4-3: without a window a cost event whose occurred_at is no instant is still its task’s cost; a window leaves it out', async () => {
    await insertRows(t.db, [{ task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE }]);
    await addCost('e1', 's1', 't1', 10, INSIDE);
    await addCost('e2', 's1', 't1', 200, INSIDE);
    await t.db.query(`UPDATE office_cost_events SET occurred_at = ${noInstant} WHERE id = 'e2'`);
    const whole = await report({ by: 'task' });
    expect(whole.groups.map((g) => [g.key, g.cost_subcents])).toEqual([['t1', 210]]);
    expect(whole.completeness.unreadable.occurred_at).toBe(1);
    const windowed = await report({ by: 'task', since: us(SINCE), until: us(UNTIL) });
    expect(windowed.groups.map((g) => [g.key, g.cost_subcents])).toEqual([['t1', 10]]);
    // the totals read every event (to count the unreadable ones) and sum only those in the window
    expect([windowed.totals.cost_subcents, windowed.completeness.unreadable.occurred_at]).toEqual([10, 1]);
  });

  it('R3-7: --task alone keeps its own cost events, not another task’s', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE },
      { task_session_id: 's2', task_id: 't2', tool_call_id: 'b', observed_at: INSIDE },
    ]);
    await addCost('e1', 's1', 't1', 10, INSIDE);
    await addCost('e2', 's2', 't2', 200, INSIDE);
    expect((await report({ task: 't1' })).totals.cost_subcents).toBe(10);
  });

  it('R3-7: a grouping not made of sessions has no cost, though a key of it is also a turn with cost', async () => {
    // the type 'u1' and the turn 'u1': the ledger's turns are no type
    await insertRows(t.db, [
      {
        task_session_id: 's1',
        task_id: 't1',
        turn_id: 'u1',
        subagent_type: 'u1',
        tool_call_id: 'a',
        observed_at: INSIDE,
      },
    ]);
    await addCostEvent(t.db, { id: 'e1', session: 's1', task: 't1', turn: 'u1', subcents: 50, at: INSIDE });
    const doc = await report({ by: 'type' });
    expect(doc.totals.cost_subcents).toBe(50);
    expect(doc.groups.map((g) => [g.key, g.cost_subcents])).toEqual([['u1', null]]);
  });

  it('R4-7: every row of a session no longer in task_sessions is an orphan row, however many (their sum, not one row’s)', async () => {
    await insertRows(t.db, [
      { task_session_id: 's-gone', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE },
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'b', observed_at: INSIDE },
      { task_session_id: 's-gone', task_id: 't1', tool_call_id: 'c', observed_at: INSIDE },
    ]);
    await deleteSessionKeepingRows(t.db, 's-gone');
    const doc = await report({ by: 'task' });
    expect(doc.totals.orphan_rows).toBe(2);
    expect(doc.groups.map((g) => [g.key, g.orphan_rows])).toEqual([['t1', 2]]);
  });

  it.each([
    ['with', true],
    ['without', false],
  ])(
    'R3-6, AC-25: a session started before capture_since is a lower bound though no message precedes it (%s the host’s (task_session_id, created_at) index)',
    async (_, index) => {
      if (!index) await t.db.query('DROP INDEX idx_messages_session_created');
      await activateCapture(t.db);
      await startSession('s-early', 't1', EARLY);
      await startSession('s-late', 't2', LATE);
      // each session's only message comes after capture_since
      await seedMessage(t.db, { session: 's-early', createdAt: us(LATE), metadata: '{}' });
      await seedMessage(t.db, { session: 's-late', createdAt: us(LATE), metadata: '{}' });
      await insertRows(t.db, [
        { task_session_id: 's-early', task_id: 't1', tool_call_id: 'a', subagent_type: 'x', observed_at: LATE },
        { task_session_id: 's-late', task_id: 't2', tool_call_id: 'b', subagent_type: 'y', observed_at: LATE },
      ]);
      const bySession = await report({ by: 'session' });
      expect(bySession.groups.map((g) => [g.key, g.lower_bound]).sort()).toEqual([
        ['s-early', true],
        ['s-late', false],
      ]);
      expect(bySession.completeness.lower_bound_sessions).toBe(1);
      // a grouping not made of sessions reads the same sessions
      const byType = await report({ by: 'type' });
      expect(byType.groups.map((g) => [g.key, g.lower_bound]).sort()).toEqual([
        ['x', true],
        ['y', false],
      ]);
    },
  );

  it('R3-6: a group not made of sessions is a lower bound when any of its rows’ sessions is, whatever the rows’ order', async () => {
    await activateCapture(t.db);
    await startSession('s-early', 't1', EARLY);
    await startSession('s-late', 't1', LATE);
    await seedMessage(t.db, { session: 's-late', createdAt: us(LATE), metadata: '{}' });
    // type x: the early session's row first, type y: last (SQL gives each group one value, of all its rows)
    await insertRows(t.db, [
      { task_session_id: 's-early', task_id: 't1', tool_call_id: 'x1', subagent_type: 'x', observed_at: LATE },
      { task_session_id: 's-late', task_id: 't1', tool_call_id: 'x2', subagent_type: 'x', observed_at: LATE },
      { task_session_id: 's-late', task_id: 't1', tool_call_id: 'y1', subagent_type: 'y', observed_at: LATE },
      { task_session_id: 's-early', task_id: 't1', tool_call_id: 'y2', subagent_type: 'y', observed_at: LATE },
      { task_session_id: 's-late', task_id: 't1', tool_call_id: 'z1', subagent_type: 'z', observed_at: LATE },
    ]);
    const byType = await report({ by: 'type' });
    expect(byType.groups.map((g) => [g.key, g.lower_bound]).sort()).toEqual([
      ['x', true],
      ['y', true],
      ['z', false],
    ]);
  });

  it('R3-6: on a host whose task_sessions has no started_at, the (task_session_id, created_at) index finds a message before capture_since', async () => {
    await activateCapture(t.db);
    await seedMessage(t.db, { session: 's-early', createdAt: us(EARLY), metadata: '{}' });
    await seedMessage(t.db, { session: 's-late', createdAt: us(LATE), metadata: '{}' });
    await insertRows(t.db, [
      { task_session_id: 's-early', task_id: 't1', tool_call_id: 'a', observed_at: LATE },
      { task_session_id: 's-late', task_id: 't1', tool_call_id: 'b', observed_at: LATE },
    ]);
    // the seeds write started_at; the host's table then loses it
    await t.db.query('ALTER TABLE task_sessions DROP COLUMN started_at');
    const bySession = await report({ by: 'session' });
    expect(bySession.groups.map((g) => [g.key, g.lower_bound]).sort()).toEqual([
      ['s-early', true],
      ['s-late', false],
    ]);
  });

  // SQLite stores text: a message time another writer stored with a `T` still precedes capture_since
  it.runIf(target === 'sqlite')(
    'R3-6, AC-25: a message stored as 2026-08-12T09:00:00Z (a T, not a space) before capture_since makes its session a lower bound',
    async () => {
      await activateCapture(t.db);
      await startSession('s1', 't1', LATE);
      await seedMessage(t.db, { session: 's1', createdAt: us(LATE), metadata: '{}' });
      await t.db.query(
        "UPDATE task_session_messages SET created_at = '2026-08-12T09:00:00Z' WHERE task_session_id = 's1'",
      );
      await insertRows(t.db, [{ task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: LATE }]);
      const doc = await report({ by: 'session' });
      expect(doc.groups.map((g) => [g.key, g.lower_bound])).toEqual([['s1', true]]);
    },
  );

  it('R4-12: --by session --limit 2 beside the page’s task rows: each holds its own first groups', async () => {
    await insertRows(
      t.db,
      ['a', 'b', 'c', 'd'].flatMap((k, i) =>
        Array.from({ length: 4 - i }, (_, j) => ({
          task_session_id: `s-${k}`,
          task_id: `t-${k}`,
          tool_call_id: `${k}${j}`,
          observed_at: INSIDE,
        })),
      ),
    );
    const sessions = (await report({ by: 'session' })).groups;
    const tasks = (await report({ by: 'task' })).groups;
    const doc = await report({ by: 'session', limit: 2, pageData: true, pageTasks: 3 });
    expect(doc.groups).toEqual(sessions.slice(0, 2));
    expect(doc.series?.task).toEqual(tasks.slice(0, 3).map(seriesGroupOf));
    expect(doc.series?.task_groups).toBe(4);
  });
});

describe.each(TARGETS)('a ledger without turn_id on %s, minimal schema', (target) => {
  const t = useTestDatabase(target, { fixture: 'minimal' });

  it.each<GroupBy>(['type', 'model', 'day'])(
    'R3-7: --by %s on a ledger without turn_id: no SQL error, no cost of its own, the totals’ cost summed',
    async (by) => {
      await t.db.query(`CREATE TABLE office_cost_events (
        id TEXT PRIMARY KEY, session_id TEXT, task_id TEXT, cost_subcents INTEGER NOT NULL,
        estimated INTEGER NOT NULL DEFAULT 0, occurred_at TIMESTAMP NOT NULL)`);
      await insertRows(t.db, [{ tool_call_id: 'a', subagent_type: 'x', model: 'm', observed_at: INSIDE }]);
      await t.db.query(
        `INSERT INTO office_cost_events (id, session_id, task_id, cost_subcents, estimated, occurred_at)
         VALUES ('e1', 's1', 't1', 1000, 0, ${t.db.dialect.timestampParam(1)})`,
        [t.db.dialect.encodeTimestamp(us(INSIDE))],
      );
      const doc = await buildReport(t.db, { by, now: NOW, graceSeconds: 0 });
      expect(doc.totals.cost_subcents).toBe(1000);
      expect(doc.groups.map((g) => [g.subagents, g.cost_subcents])).toEqual([[1, null]]);
    },
  );
});
