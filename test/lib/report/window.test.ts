import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { buildReport } from '../../../lib/report/build.js';
import { GROUP_BY, type GroupBy } from '../../../lib/report/document.js';
import { readAll } from '../../../lib/store/read.js';
import { parseRfc3339, parseStoredTimestamp } from '../../../lib/time.js';
import { KEY_OF, onlyRowFigures, rowFigures } from '../../support/report-oracle.js';
import { buildReportStore } from '../../support/report-store.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/*
 * R3-5, R3-7: `--since`/`--until` bound every level alike. The store is the dialects' shared one
 * (test/support/report-store.ts); the window is its middle third of observation times, so rows,
 * sessions and cost events fall on both sides of both bounds. Every expected value is computed
 * here from the stored rows, sessions and events read plainly (not with lib/report/sql.ts). The
 * bounds themselves, with rows, sessions and events placed on them by hand, are in
 * scope-edges.test.ts.
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
