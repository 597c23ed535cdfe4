import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { buildReport } from '../../../lib/report/build.js';
import { GROUP_BY, type GroupBy } from '../../../lib/report/document.js';
import { readAll } from '../../../lib/store/read.js';
import { parseRfc3339, parseStoredTimestamp } from '../../../lib/time.js';
import { seedSession } from '../../support/frames.js';
import { KEY_OF, onlyRowFigures, rowFigures } from '../../support/report-oracle.js';
import { buildReportStore } from '../../support/report-store.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R3-5, R3-7: `--since`/`--until` bound every level alike. The store is the dialects' shared one
 * (test/support/report-store.ts); the window is its middle third of observation times, so rows,
 * sessions and cost events fall on both sides of both bounds. Every expected value is computed
 * here from the stored rows, sessions and events read plainly (not with lib/report/sql.ts).
 */

const NOW = parseRfc3339('2027-01-01T00:00:00Z')!;

/** The host's sessions, their task and (where the schema has it) their start. */
async function sessionsOf(db: Queryable, withStart: boolean) {
  const rows = await db.query<{ id: string; task_id: string; started_at?: unknown }>(
    `SELECT id, task_id${withStart ? ', started_at' : ''} FROM task_sessions`,
  );
  return rows.map((s) => ({
    id: s.id,
    task: s.task_id,
    started: withStart ? parseStoredTimestamp(String(s.started_at)) : undefined,
  }));
}

/** The ledger's events, each with its attributed task (its own, else its session's) and instant. */
async function costEventsOf(db: Queryable, taskOf: ReadonlyMap<string, string>) {
  const rows = await db.query<{
    session_id: string;
    task_id: string | null;
    cost_subcents: unknown;
    occurred_at: unknown;
  }>('SELECT session_id, task_id, cost_subcents, occurred_at FROM office_cost_events');
  return rows.map((e) => ({
    session: e.session_id,
    task: e.task_id ? e.task_id : (taskOf.get(e.session_id) ?? null),
    subcents: Number(e.cost_subcents),
    at: parseStoredTimestamp(String(e.occurred_at))!,
  }));
}

describe.each(TARGET_FIXTURES)('report in a window on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  async function windowed() {
    await buildReportStore(t.db, fixture);
    const rows = await readAll(t.db);
    const times = rows.map((r) => r.observed_at).sort();
    const since = times[Math.floor(times.length / 3)]!;
    const until = times[Math.floor((2 * times.length) / 3)]!;
    const inWindow = rows.filter((r) => r.observed_at >= since && r.observed_at < until);
    const bounds = { since: parseRfc3339(since)!, until: parseRfc3339(until)! };
    return { rows, inWindow, bounds, report: (by?: GroupBy) => buildReport(t.db, { by, ...bounds, now: NOW }) };
  }

  it('R3-5: every grouping holds exactly the rows observed in [since, until), each group its rows’ own figures', async () => {
    const { rows, inWindow, report } = await windowed();
    expect(inWindow.length).toBeGreaterThan(0);
    expect(inWindow.length).toBeLessThan(rows.length);
    expect(onlyRowFigures((await report()).totals)).toEqual(rowFigures(inWindow));
    for (const by of GROUP_BY) {
      const doc = await report(by);
      const keys = new Set(inWindow.map(KEY_OF[by]));
      expect(new Set(doc.groups.filter((g) => g.subagents > 0).map((g) => g.key)), `--by ${by}`).toEqual(keys);
      for (const g of doc.groups) {
        expect(onlyRowFigures(g), `--by ${by} ${g.key}`).toEqual(
          rowFigures(inWindow.filter((r) => KEY_OF[by](r) === g.key)),
        );
      }
    }
  });

  it('R3-7: a window’s sessions are those started in it (where task_sessions has started_at) and those with a row in it, in the totals and per task', async () => {
    const { inWindow, bounds, report } = await windowed();
    const withStart = fixture === 'host';
    const sessions = await sessionsOf(t.db, withStart);
    const known = new Set(sessions.map((s) => s.id));
    const started = sessions.filter(
      (s) => s.started !== undefined && s.started >= bounds.since && s.started < bounds.until,
    );
    if (withStart) expect(started.length).toBeLessThan(sessions.length);
    const inScope = (task?: string) =>
      new Set([
        ...started.filter((s) => task === undefined || s.task === task).map((s) => s.id),
        ...inWindow
          .filter((r) => known.has(r.task_session_id) && (task === undefined || r.task_id === task))
          .map((r) => r.task_session_id),
      ]);
    expect((await report()).totals.sessions).toBe(inScope().size);
    const byTask = await report('task');
    expect(byTask.groups.length).toBeGreaterThan(1);
    for (const g of byTask.groups) expect(g.sessions, `task ${g.key}`).toBe(inScope(g.key!).size);
  });

  it('R3-7: a window’s cost is the events that occurred in [since, until), in the totals and per task', async () => {
    const { bounds, report } = await windowed();
    const taskOf = new Map((await sessionsOf(t.db, false)).map((s) => [s.id, s.task]));
    const events = await costEventsOf(t.db, taskOf);
    const inWindow = events.filter((e) => e.at >= bounds.since && e.at < bounds.until);
    expect(inWindow.length).toBeGreaterThan(0);
    expect(inWindow.length).toBeLessThan(events.length);
    const sum = (list: typeof events) => (list.length === 0 ? null : list.reduce((n, e) => n + e.subcents, 0));
    expect((await report()).totals.cost_subcents).toBe(sum(inWindow));
    for (const g of (await report('task')).groups)
      expect(g.cost_subcents, `task ${g.key}`).toBe(sum(inWindow.filter((e) => e.task === g.key)));
  });
});

/*
 * The bounds themselves, on rows, sessions and events placed on them by hand: [since, until)
 * holds what sits at `since` and leaves out what sits at `until`, for each of the three; a row
 * whose observed_at is no instant (R4-3) is in no window, at any level.
 */
const SINCE = '2026-08-12T10:00:00.000000Z';
const UNTIL = '2026-08-12T11:00:00.000000Z';
const INSIDE = '2026-08-12T10:30:00.000000Z';
const AFTER = '2026-08-12T12:00:00.000000Z';

describe.each(TARGETS)('the window’s bounds on %s, host schema', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const report = (by?: GroupBy) =>
    buildReport(t.db, { by, since: parseRfc3339(SINCE)!, until: parseRfc3339(UNTIL)!, now: NOW });
  const at = (text: string) => t.db.dialect.encodeTimestamp(parseRfc3339(text)!);

  it('R3-7: a session started at --since is in the window’s sessions, one started at --until is not', async () => {
    for (const [session, started] of [
      ['s-since', SINCE],
      ['s-until', UNTIL],
      ['s-after', AFTER],
    ]) {
      await seedSession(t.db, session!, 't1');
      await t.db.query(`UPDATE task_sessions SET started_at = ${t.db.dialect.timestampParam(1)} WHERE id = $2`, [
        at(started!),
        session,
      ]);
    }
    const doc = await report('session');
    expect(doc.totals.sessions).toBe(1);
    expect(doc.groups.map((g) => [g.key, g.sessions])).toEqual([['s-since', 1]]);
  });

  it('R3-7: a cost event at --until is outside the window (one at --since inside), in the totals and its task', async () => {
    await insertRows(t.db, [{ task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: INSIDE }]);
    for (const [id, occurred, subcents] of [
      ['c-since', SINCE, 7],
      ['c-until', UNTIL, 100],
    ] as const) {
      await t.db.query(
        `INSERT INTO office_cost_events (id, session_id, task_id, turn_id, cost_subcents, estimated, occurred_at, created_at)
         VALUES ($1, 's1', 't1', NULL, $2, 0, ${t.db.dialect.timestampParam(3)}, ${t.db.dialect.timestampParam(3)})`,
        [id, subcents, at(occurred)],
      );
    }
    expect((await report()).totals.cost_subcents).toBe(7);
    expect((await report('task')).groups.map((g) => [g.key, g.cost_subcents])).toEqual([['t1', 7]]);
  });

  it.each<GroupBy>(['task', 'session', 'turn', 'type', 'model'])(
    'R4-3: a row whose observed_at is no instant is in no --by %s group of a window (counted as unreadable)',
    async (by) => {
      await insertRows(t.db, [
        { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'in', observed_at: INSIDE },
        { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'odd', observed_at: INSIDE },
        { task_session_id: 's2', task_id: 't2', turn_id: 'u2', tool_call_id: 'odd-alone', observed_at: INSIDE },
      ]);
      // what the host's column can hold that is no instant: text on SQLite, infinity on PostgreSQL
      const odd = target === 'sqlite' ? "'garbage'" : "'infinity'";
      await t.db.query(
        `UPDATE task_session_subagents SET observed_at = ${odd} WHERE tool_call_id IN ('odd', 'odd-alone')`,
      );
      const doc = await report(by);
      expect(doc.completeness.unreadable.observed_at).toBe(2);
      expect(doc.totals.subagents).toBe(1);
      expect(doc.groups.map((g) => g.subagents).reduce((a, b) => a + b, 0)).toBe(1);
      expect(doc.groups.filter((g) => g.subagents > 0)).toHaveLength(1);
    },
  );
});
