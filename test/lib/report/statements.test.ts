import { describe, expect, it } from 'vitest';
import type { Row } from '../../../lib/db/database.js';
import type { Dialect } from '../../../lib/db/dialect/dialect.js';
import { postgresDialect } from '../../../lib/db/dialect/postgres.js';
import { sqliteDialect } from '../../../lib/db/dialect/sqlite.js';
import { readStoreCatalog, type StoreCatalog } from '../../../lib/report/catalog.js';
import { breakdownStatement, figuresStatement, type ReportScope } from '../../../lib/report/sql.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * lib/report/sql.ts's two statements called directly (buildReport always passes levels, cuts,
 * sort and lean; ReportScope documents what each does when given or not), and R4-12's plan
 * rules, which no document can tell apart: what a statement stores, reads and skips. Those are
 * held to the statement's text, each by the construct the rule names (docs/report.md#the-statements).
 */

const AT = '2026-08-12T10:30:00.000000Z';
const SINCE = parseRfc3339('2026-08-12T10:00:00Z')!;

/** Statement 1's groups (lvl > 0) as [lvl, key, level_groups]. */
const groupsOf = (rows: Row[]) =>
  rows
    .filter((r) => Number(r.lvl) > 0)
    .map((r) => [Number(r.lvl), String(r.gkey), r.level_groups === null ? null : Number(r.level_groups)])
    .sort((a, b) => Number(a[0]) - Number(b[0]) || String(a[1]).localeCompare(String(b[1])));

describe.each(TARGETS)('the report statements called directly on %s, host schema', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const run = async (statement: { sql: string; params: unknown[] }) => t.db.query<Row>(statement.sql, statement.params);

  /** Sessions s-a, s-b, s-c of tasks t-a, t-b, t-c: first by key a, by subagents b, by cost c. */
  async function seed() {
    await insertRows(t.db, [
      {
        task_session_id: 's-a',
        task_id: 't-a',
        tool_call_id: 'a1',
        subagent_type: 'x',
        duration_ms: 10,
        observed_at: AT,
      },
      {
        task_session_id: 's-b',
        task_id: 't-b',
        tool_call_id: 'b1',
        subagent_type: 'x',
        duration_ms: 20,
        observed_at: AT,
      },
      {
        task_session_id: 's-b',
        task_id: 't-b',
        tool_call_id: 'b2',
        subagent_type: 'y',
        duration_ms: 30,
        observed_at: AT,
      },
      {
        task_session_id: 's-c',
        task_id: 't-c',
        tool_call_id: 'c1',
        subagent_type: 'y',
        duration_ms: 40,
        observed_at: AT,
      },
    ]);
    await addCostEvent(t.db, { id: 'e1', session: 's-a', task: 't-a', subcents: 5, at: AT });
    await addCostEvent(t.db, { id: 'e2', session: 's-b', task: 't-b', subcents: 1, at: AT });
    await addCostEvent(t.db, { id: 'e3', session: 's-c', task: 't-c', subcents: 500, at: AT });
  }

  it('R4-12: each of two cut levels keeps its own first groups in --sort order, and says how many groups it has', async () => {
    await seed();
    const catalog = await readStoreCatalog(t.db);
    const scope: ReportScope = { by: 'session', levels: ['session', 'task'], cuts: [1, 1], sort: 'cost' };
    // by cost, s-c and t-c first (by subagents the b's, by key the a's)
    expect(groupsOf(await run(figuresStatement(t.db.dialect, scope, catalog)))).toEqual([
      [1, 's-c', 3],
      [2, 't-c', 3],
    ]);
  });

  it('R4-12: a cut without a sort keeps the groups with the most subagents (ReportScope.sort’s default)', async () => {
    await seed();
    const catalog = await readStoreCatalog(t.db);
    const rows = await run(figuresStatement(t.db.dialect, { by: 'task', cuts: [1] }, catalog));
    expect(groupsOf(rows)).toEqual([[1, 't-b', 3]]);
  });

  it('R3-5: a scope with no levels, cuts nor lean given: its --by level, every group, every figure and list', async () => {
    await seed();
    const catalog = await readStoreCatalog(t.db);
    const rows = await run(figuresStatement(t.db.dialect, { by: 'task' }, catalog));
    expect(rows.filter((r) => Number(r.lvl) === 1).map((r) => [r.gkey, Number(r.duration_p50)])).toEqual([
      ['t-a', 10],
      ['t-b', 20],
      ['t-c', 40],
    ]);
    const lists = await run(breakdownStatement(t.db.dialect, { by: 'task' }));
    expect(new Set(lists.filter((r) => Number(r.lvl) === 1).map((r) => r.gkey))).toEqual(
      new Set(['t-a', 't-b', 't-c']),
    );
  });

  it('R4-12: a lean level has no percentiles nor distinct counts (statement 1) and no lists (statement 2)', async () => {
    await seed();
    const catalog = await readStoreCatalog(t.db);
    const scope: ReportScope = { by: 'task', levels: ['task', 'type'], lean: [false, true] };
    const rows = await run(figuresStatement(t.db.dialect, scope, catalog));
    const at = (lvl: number) =>
      rows
        .filter((r) => Number(r.lvl) === lvl)
        .map((r) => [r.gkey, Number(r.subagents), r.duration_p50 === null ? null : Number(r.duration_p50)]);
    expect(at(1)).toEqual([
      ['t-a', 1, 10],
      ['t-b', 2, 20],
      ['t-c', 1, 40],
    ]);
    expect(at(2).sort()).toEqual([
      ['x', 2, null],
      ['y', 2, null],
    ]);
    const lists = await run(breakdownStatement(t.db.dialect, scope));
    expect(new Set(lists.map((r) => Number(r.lvl)))).toEqual(new Set([0, 1]));
  });

  it('R4-12: given statement 1’s kept groups, the breakdown lists a cut level’s kept groups only and every group of the others', async () => {
    await seed();
    const scope: ReportScope = { by: 'task', levels: ['task', 'type'], cuts: [1, undefined] };
    // a kept group of a level not cut (statement 1 gives none; a caller may) changes nothing
    const kept = [
      { lvl: 1, gnull: 0, gkey: 't-b' },
      { lvl: 2, gnull: 0, gkey: 'x' },
    ];
    const lists = await run(breakdownStatement(t.db.dialect, scope, undefined, kept));
    const keys = (lvl: number) => new Set(lists.filter((r) => Number(r.lvl) === lvl).map((r) => r.gkey));
    expect([keys(1), keys(2)]).toEqual([new Set(['t-b']), new Set(['x', 'y'])]);
    // no level cut: every group (statement 1 kept none)
    const whole = await run(breakdownStatement(t.db.dialect, { by: 'task' }, undefined, []));
    expect(new Set(whole.filter((r) => Number(r.lvl) === 1).map((r) => r.gkey))).toEqual(
      new Set(['t-a', 't-b', 't-c']),
    );
  });
});

const CATALOG: StoreCatalog = {
  taskTitle: true,
  sessionStartedAt: true,
  costEvents: { turnId: true, costSource: true, fractions: false },
  turns: undefined,
  sessionCreatedIndex: true,
  usage: true,
};

/** How many times `part` occurs in `text`. */
const count = (text: string, part: string) => text.split(part).length - 1;

/** The text of the CTE `name` (from `name AS` to the next CTE or the final SELECT). */
function cte(sql: string, name: string): string {
  const start = sql.indexOf(`\n${name} AS`);
  expect(start, name).toBeGreaterThan(-1);
  const end = sql.slice(start + 1).search(/\n[a-z_]+ AS (NOT )?(MATERIALIZED )?\(|\nSELECT /);
  return end === -1 ? sql.slice(start) : sql.slice(start, start + 1 + end);
}

describe.each<[string, Dialect]>([
  ['sqlite', sqliteDialect],
  ['postgres', postgresDialect],
])('R4-12 plan rules of the report statements (%s text)', (_, d) => {
  const figures = (scope: ReportScope, catalog = CATALOG) => `\n${figuresStatement(d, scope, catalog).sql}`;
  const breakdown = (scope: ReportScope) => `\n${breakdownStatement(d, scope).sql}`;

  it('R4-12: statement 1 stores the scanned rows; the breakdown only where it reads observed (a window or a day level), and carries it only there', async () => {
    expect(figures({ by: 'task' })).toContain('WITH scanned AS MATERIALIZED (');
    const lists = breakdown({ by: 'task' });
    expect(lists).toContain('WITH scanned AS NOT MATERIALIZED (');
    expect(lists).not.toContain(' AS observed');
    for (const scope of [{ by: 'day' }, { by: 'task', since: SINCE }] as const) {
      expect(breakdown(scope), JSON.stringify(scope.by)).toContain('WITH scanned AS MATERIALIZED (');
      expect(breakdown(scope), JSON.stringify(scope.by)).toContain(' AS observed');
    }
  });

  it('R4-12: the ledger’s events are stored only where a grouping reads them again; their task is joined only where a task filter or grouping reads it', async () => {
    const totals = figures({ by: null });
    expect(totals).toContain('\ncost_in AS NOT MATERIALIZED (');
    expect(totals).not.toContain('LEFT JOIN task_sessions s ON s.id = e.session_id');
    const byTask = figures({ by: 'task' });
    expect(byTask).toContain('\ncost_in AS MATERIALIZED (');
    expect(byTask).toContain('LEFT JOIN task_sessions s ON s.id = e.session_id');
  });

  it('R4-12: the figures (plain) are stored only where a level not made of sessions reads them twice', async () => {
    expect(figures({ by: 'type' })).toContain('\nplain AS MATERIALIZED (');
    expect(figures({ by: 'task' })).toContain('\nplain AS (');
  });

  it('R4-12: the lean day and type levels are rolled up from one grouping of the rows by both their keys', async () => {
    const sql = figures({ by: 'task', levels: ['task', 'day', 'type'], lean: [false, true, true] });
    expect(cte(sql, 'fine')).toContain('FROM rows_in WHERE in_window = 1 GROUP BY k2, n3, k3');
    expect(count(cte(sql, 'plain'), 'FROM fine')).toBe(2);
  });

  it('R4-12: unfiltered, the totals’ sessions are task_sessions: no pass over the rows finds them; filtered, one does', async () => {
    const level0 = "SELECT 0 AS lvl, 0 AS gnull, '' AS gkey, rows_in.*";
    expect(count(cte(figures({ by: null }), 'members'), level0)).toBe(0);
    expect(count(cte(figures({ by: null, task: 't1' }), 'members'), level0)).toBe(1);
  });

  it('R4-12: with the (task_session_id, created_at) index the lower bound probes each session in scope; without it, one pass over the earlier messages', async () => {
    const scope: ReportScope = { by: null, captureSince: SINCE };
    expect(cte(figures(scope), 'early')).toContain('FROM members ms');
    expect(cte(figures(scope, { ...CATALOG, sessionCreatedIndex: false }), 'early')).toContain(
      'SELECT DISTINCT task_session_id AS sid FROM task_session_messages msg',
    );
  });

  it('R4-12: only a level not made of sessions probes the lower bound per row', async () => {
    const sql = figures({ by: 'session', levels: ['session', 'type'], captureSince: SINCE });
    expect(count(cte(sql, 'plain'), 'task_session_id IN (SELECT sid FROM early)')).toBe(1);
  });

  it('R4-12: the cut reads its own levels only, the members only for --sort contexts, the ledger only for --sort cost', async () => {
    const cut = (sort: ReportScope['sort']) =>
      cte(figures({ by: 'session', levels: ['session', 'task'], cuts: [undefined, 2], sort }), 'cut');
    expect(cut('subagents')).toContain('CAST(NULL AS BIGINT) AS sessions');
    expect(cut('subagents')).not.toContain('FROM costs');
    expect(cut('subagents')).not.toContain('SELECT 1, 0, sid');
    expect(cut('contexts')).toContain('COUNT(DISTINCT sid) AS sessions');
    expect(cut('cost')).toContain('FROM costs WHERE lvl IN (2)');
  });

  it('R4-12: a cut level’s figures are computed over the rows of its kept groups only', async () => {
    expect(cte(figures({ by: 'task', cuts: [2] }), 'plain')).toContain(') kept GROUP BY lvl, gnull, gkey');
  });
});
