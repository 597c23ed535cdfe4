import { describe, expect, it } from 'vitest';
import type { Queryable, Row } from '../../../lib/db/database.js';
import { buildReport } from '../../../lib/report/build.js';
import { seriesGroupOf, typeSeriesGroupOf } from '../../../lib/report/document.js';
import { SPEND_NOT_COLLECTED_NOTE } from '../../../lib/report/notes.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/*
 * What lib/report/build.ts itself adds to the statements' rows (docs/report.md): the filters as
 * given, the notes, the trees asked for, the page's data only when asked, the lists of an empty
 * scope and the models' order, each written out by hand, on every target and host schema.
 */

const us = (text: string) => parseRfc3339(text)!;
const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.000001Z`;
const NOW = us('2026-08-13T00:00:00Z');

const NOT_ACTIVATED =
  'capture is not activated (no subagent_context_capture_since): completeness is unknown and no shortfall is computed; run `subagent-context migrate`.';
const NO_COST_TABLE =
  'cost figures are null: the store has no office_cost_events table (the host office cost ledger) with session_id, task_id, cost_subcents, estimated and occurred_at.';
const WINDOW_SESSIONS =
  'with --since/--until, sessions counts only the sessions with a subagent in the window: task_sessions has no started_at.';

interface Recorded {
  sql: string;
  rows: Row[];
}

/** The store as buildReport sees it, each statement's rows passed through `rowsOf`; `connections` as given. */
function intercepting(
  db: Queryable,
  rowsOf: (sql: string, rows: Row[]) => Row[],
  connections = db.connections,
): Queryable {
  return {
    dialect: db.dialect,
    connections,
    query: async <T>(sql: string, params?: readonly unknown[]) => rowsOf(sql, await db.query<Row>(sql, params)) as T[],
  };
}

/** Each statement's text and rows recorded (what R4-12's plan reads). */
const recording = (db: Queryable, statements: Recorded[], connections?: number) =>
  intercepting(
    db,
    (sql, rows) => {
      statements.push({ sql, rows });
      return rows;
    },
    connections,
  );

/**
 * The breakdown statement's rows (models, fan-out) in reverse order: it has no ORDER BY, so a
 * database may return them in any order (SQLite and PGlite happen to group them in order at these
 * sizes), and the document's order must not depend on it.
 */
const reversingBreakdown = (db: Queryable) =>
  intercepting(db, (_sql, rows) =>
    rows.some((r) => r.kind === 'model' || r.kind === 'fan_out') ? [...rows].reverse() : rows,
  );

describe.each(TARGET_FIXTURES)('the report document on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const report = (options: Parameters<typeof buildReport>[1] = {}) => buildReport(t.db, { now: NOW, ...options });
  // the minimal host schema has no cost ledger and no task_sessions.started_at; the host's own DDL
  // here has no table of ours (subagentTable: false), so no usage table either (R6-5)
  const base = fixture === 'minimal' ? [NOT_ACTIVATED, NO_COST_TABLE] : [NOT_ACTIVATED, SPEND_NOT_COLLECTED_NOTE];

  it('R3-5: the filters are echoed as given: since and until as RFC 3339 instants, the rest as given, none as null', async () => {
    const doc = await report({ since: us(T(1)), until: us(T(2)), task: 't1', limit: 3, sort: 'tokens' });
    expect(doc.filters).toEqual({
      since: T(1),
      until: T(2),
      task: 't1',
      session: null,
      by: null,
      sort: 'tokens',
      limit: 3,
    });
    expect((await report()).filters).toEqual({
      since: null,
      until: null,
      task: null,
      session: null,
      by: null,
      sort: 'subagents',
      limit: null,
    });
  });

  it('R4-3, R4-7: every value readable and no orphan row or lower bound: no note of theirs', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', total_tokens: 5, tool_use_count: 2, observed_at: T(1) }]);
    expect((await report()).completeness.notes).toEqual(base);
  });

  it('R4-3: one note names each column holding unreadable values with its count, joined by commas', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', total_tokens: 5, observed_at: T(1) },
      { tool_call_id: 'b', tool_use_count: 2, observed_at: T(2) },
      { tool_call_id: 'c', tool_use_count: 2, observed_at: T(3) },
    ]);
    await t.db.query("UPDATE task_session_subagents SET total_tokens = -1 WHERE tool_call_id = 'a'");
    await t.db.query("UPDATE task_session_subagents SET tool_use_count = -1 WHERE tool_call_id IN ('b', 'c')");
    expect((await report()).completeness.notes).toEqual([
      ...base,
      '1 total_tokens, 2 tool_use_count value(s) in scope could not be read (not an integer in range, or not an instant): each is not reported for its figure (completeness.unreadable); every other figure is exact.',
    ]);
  });

  it('R3-7: with --since or --until, the sessions note is given where task_sessions has no started_at, and only then', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1) }]);
    const window = fixture === 'minimal' ? [WINDOW_SESSIONS] : [];
    expect((await report({ since: us(T(0)) })).completeness.notes).toEqual([...base, ...window]);
    expect((await report({ until: us(T(5)) })).completeness.notes).toEqual([...base, ...window]);
    expect((await report({ task: 't1' })).completeness.notes).toEqual(base);
  });

  it('R3-9: --trees N gives the N most recent turns of the rows in scope; without it, no tree', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(2) },
      { tool_call_id: 'c', turn_id: 'u3', observed_at: T(3) },
    ]);
    expect((await report()).trees).toEqual([]);
    expect((await report({ trees: 2 })).trees.map((x) => x.turn_id)).toEqual(['u3', 'u2']);
    expect((await report({ trees: 5, until: us(T(2)) })).trees.map((x) => x.turn_id)).toEqual(['u1']);
  });

  it("R3-9: the page's data (series, distributions) only when asked; its duration buckets from 0, each from the last one's end", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', duration_ms: 500, observed_at: T(1) },
      { tool_call_id: 'b', duration_ms: 5_000, observed_at: T(2) },
    ]);
    const plain = await report();
    expect(['series' in plain, 'distributions' in plain]).toEqual([false, false]);
    const page = await report({ pageData: true });
    expect(Object.keys(page.series!)).toEqual(['day', 'type', 'task', 'task_groups']);
    const buckets = page.distributions!.duration_ms.buckets;
    expect(buckets[0]!.from_ms).toBe(0);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.from_ms).toBe(buckets[i - 1]!.to_ms);
    expect(buckets.at(-1)!.to_ms).toBeNull();
    expect(page.distributions!.duration_ms.reported).toBe(2);
    // a task level not cut (--by task without --limit) counts its groups too
    expect((await report({ pageData: true, by: 'task' })).series!.task_groups).toBe(1);
  });

  it("R4-12, R6-6: the page's series hold what the page draws, no statement lists their groups, only the type level is ranked, and --by keeps every figure", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', task_id: 't1', turn_id: 'u1', model: 'm1', duration_ms: 500, observed_at: T(1) },
      { tool_call_id: 'b', task_id: 't1', turn_id: 'u1', model: 'm2', duration_ms: 900, observed_at: T(2) },
      { tool_call_id: 'c', task_id: 't2', turn_id: 'u2', model: 'm1', duration_ms: 100, observed_at: T(3) },
    ]);
    const statements: Recorded[] = [];
    const page = await buildReport(recording(t.db, statements), { now: NOW, pageData: true });
    for (const by of ['day', 'type', 'task'] as const) {
      const groups = (await report({ by })).groups;
      // R6-6: the type series keeps its spend whole (what one subagent of each type spent)
      expect(page.series![by], by).toEqual(groups.map(by === 'type' ? typeSeriesGroupOf : seriesGroupOf));
      for (const g of page.series![by]!) expect(Object.keys(g), by).not.toContain('duration_ms');
    }
    // statement 1 (its rows carry duration_p50) ranks the totals and (R6-6) the type level only; statement 2 lists the totals only
    const figures = statements.find((s) => s.rows.some((r) => 'duration_p50' in r))!.rows;
    const typeLevel = 1 + ['day', 'type', 'task'].indexOf('type');
    expect(new Set(figures.filter((r) => r.duration_p50 !== null).map((r) => Number(r.lvl)))).toEqual(
      new Set([0, typeLevel]),
    );
    const lists = statements.flatMap((s) => s.rows.filter((r) => r.kind === 'model' || r.kind === 'fan_out'));
    expect(new Set(lists.map((r) => Number(r.lvl)))).toEqual(new Set([0]));
    // with --by, its own level keeps every figure beside the page's
    const byTask = await report({ pageData: true, by: 'task' });
    expect(byTask.groups).toEqual((await report({ by: 'task' })).groups);
    expect(byTask.groups[0]!.models.counts).toEqual([
      { model: 'm1', subagents: 1 },
      { model: 'm2', subagents: 1 },
    ]);
  });

  it("R4-12: with the page's data, a --by level that is no series (session) is still cut at --limit, and its groups are the same", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', task_session_id: 's1', observed_at: T(1) },
      { tool_call_id: 'b', task_session_id: 's1', observed_at: T(2) },
      { tool_call_id: 'c', task_session_id: 's2', observed_at: T(3) },
      { tool_call_id: 'd', task_session_id: 's3', observed_at: T(4) },
    ]);
    const statements: Recorded[] = [];
    const page = await buildReport(recording(t.db, statements), { now: NOW, by: 'session', limit: 1, pageData: true });
    expect(page.groups).toEqual((await report({ by: 'session', limit: 1 })).groups);
    expect(page.groups.map((g) => g.key)).toEqual(['s1']);
    // statement 1's rows carry duration_p50: its groups of level 1 (--by session)
    const figureStatements = statements.filter((x) => x.rows.some((r) => 'duration_p50' in r));
    expect(figureStatements.map((x) => x.rows.filter((r) => Number(r.lvl) === 1).length)).toEqual([1]);
  });

  it("R4-12: the page's day and type series hold every group however few task rows the page shows, and the task level computes only those rows", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', task_id: 't1', task_session_id: 's1', subagent_type: 'x', observed_at: T(1) },
      { tool_call_id: 'b', task_id: 't2', task_session_id: 's2', subagent_type: 'y', observed_at: T(2) },
      { tool_call_id: 'c', task_id: 't3', task_session_id: 's3', subagent_type: 'z', observed_at: T(3) },
      {
        tool_call_id: 'd',
        task_id: 't3',
        task_session_id: 's3',
        subagent_type: 'z',
        observed_at: '2026-08-11T09:00:00Z',
      },
    ]);
    const statements: Recorded[] = [];
    const page = await buildReport(recording(t.db, statements), {
      now: NOW,
      pageData: true,
      pageTasks: 1,
      by: 'session',
      limit: 3,
    });
    expect(page.series?.type?.map((g) => g.key)).toEqual(['z', 'x', 'y']);
    expect(page.series?.day).toHaveLength(2);
    expect([page.series?.task?.map((g) => g.key), page.series?.task_groups]).toEqual([['t3'], 3]);
    expect(page.groups.map((g) => g.key)).toEqual(['s3', 's1', 's2']);
    // statement 1's rows carry duration_p50; its levels are session, day, type, task: the task
    // level (4) is cut at the page's 1 row, not at --limit's 3
    const figureStatement = statements.find((s) => s.rows.some((r) => 'duration_p50' in r))!;
    const figureRows = figureStatement.rows;
    expect([1, 2, 3, 4].map((lvl) => figureRows.filter((r) => Number(r.lvl) === lvl).length)).toEqual([3, 2, 3, 1]);
    // and only those two levels are ranked for a cut: the day and type levels, rolled up whole, never are
    expect(figureStatement.sql).toContain('CASE lvl WHEN 1 THEN 3 WHEN 4 THEN 1 END');
  });

  it('R4-12: on a pool (where the breakdown runs beside statement 1) it lists every group of a cut level; on one connection only the groups statement 1 kept', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', task_id: 't1', task_session_id: 's1', model: 'm', observed_at: T(1) },
      { tool_call_id: 'b', task_id: 't1', task_session_id: 's1', model: 'm', observed_at: T(2) },
      { tool_call_id: 'c', task_id: 't2', task_session_id: 's2', model: 'm', observed_at: T(3) },
      { tool_call_id: 'd', task_id: 't3', task_session_id: 's3', model: 'm', observed_at: T(4) },
    ]);
    const run = async (connections: number) => {
      const statements: Recorded[] = [];
      const doc = await buildReport(recording(t.db, statements, connections), { now: NOW, by: 'task', limit: 1 });
      const listed = statements.flatMap((s) =>
        s.rows.filter((r) => r.kind === 'model' && Number(r.lvl) === 1).map((r) => String(r.gkey)),
      );
      return { groups: doc.groups, listed: listed.sort() };
    };
    const pooled = await run(2);
    const single = await run(1);
    expect(pooled.groups).toEqual(single.groups);
    expect(pooled.groups.map((g) => [g.key, g.models.counts])).toEqual([['t1', [{ model: 'm', subagents: 2 }]]]);
    expect([pooled.listed, single.listed]).toEqual([['t1', 't2', 't3'], ['t1']]);
  });

  it('R3-5: an empty scope has no models and no fan-out: empty lists, never missing', async () => {
    const doc = await report();
    expect([doc.totals.models, doc.totals.fan_out]).toEqual([{ counts: [], unreported: 0 }, []]);
  });

  it('R3-5: models of equal count are ordered by name in code-unit order; fan-out buckets by top-level count', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', model: 'b', observed_at: T(1) },
      { tool_call_id: 'b', turn_id: 'u1', model: 'B', observed_at: T(2) },
      { tool_call_id: 'c', turn_id: 'u1', model: 'a', observed_at: T(3) },
      { tool_call_id: 'd', turn_id: 'u2', model: 'a', observed_at: T(4) },
      { tool_call_id: 'e', turn_id: 'u3', model: 'b', observed_at: T(5) },
      { tool_call_id: 'f', turn_id: 'u3', model: 'B', observed_at: T(6) },
    ]);
    const { totals } = await report();
    expect(totals.models.counts.map((m) => [m.model, m.subagents])).toEqual([
      ['B', 2],
      ['a', 2],
      ['b', 2],
    ]);
    expect(totals.fan_out).toEqual([
      { top_level: 1, turns: 1 },
      { top_level: 2, turns: 1 },
      { top_level: 3, turns: 1 },
    ]);
  });
  it('R3-5: forty models of one subagent each, and turns of 1 to 15 top-level subagents, come in order whatever order the database groups them in (as it groups them, and reversed)', async () => {
    // PostgreSQL groups this many by hashing: its rows come in no particular order
    const models = Array.from({ length: 40 }, (_, i) => `m${String((i * 17) % 40).padStart(2, '0')}`);
    await insertRows(
      t.db,
      models.map((model, i) => ({ tool_call_id: `m${i}`, turn_id: 'one', model, observed_at: T(1) })),
    );
    const sizes = Array.from({ length: 15 }, (_, i) => ((i * 7) % 15) + 1);
    await insertRows(
      t.db,
      sizes.flatMap((n) =>
        Array.from({ length: n }, (_, j) => ({ tool_call_id: `f${n}.${j}`, turn_id: `t${n}`, observed_at: T(2) })),
      ),
    );
    for (const db of [t.db, reversingBreakdown(t.db)]) {
      const { totals } = await buildReport(db, { now: NOW });
      expect(totals.models.counts.map((m) => m.model)).toEqual([...models].sort());
      expect(totals.fan_out.map((b) => b.top_level)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 40]);
    }
  });
});
