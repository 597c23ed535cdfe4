import { describe, expect, it } from 'vitest';
import type { Queryable, Row } from '../../../lib/db/database.js';
import { buildReport, type ReportOptions } from '../../../lib/report/build.js';
import { GROUP_BY, type GroupBy, SORT_BY, seriesGroupOf, typeSeriesGroupOf } from '../../../lib/report/document.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession } from '../../support/frames.js';
import { deleteSessionKeepingRows, insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/*
 * R4-12: a grouping cut in SQL (`--by X --limit N`, the page's first task rows) computes only the
 * groups the document holds, and they are exactly the groups the whole grouping puts first
 * (docs/report.md#sorting). The oracle is the same report without the cut, whose figures the
 * other report tests hold to hand-computed values and test/support/report-oracle.ts.
 */

const NOW = parseRfc3339('2026-08-13T00:00:00Z')!;
const T = (minute: number) => `2026-08-12T13:${String(minute).padStart(2, '0')}:00.000001Z`;

/**
 * Keys where the orders part: ties on every figure, a NULL and an empty model, and keys that
 * code-unit order and code-point (byte) order put apart: U+FFFD sorts before U+1F600 by code
 * point, after it by UTF-16 unit; upper before lower case in byte order, the other way in ICU.
 */
const KEYS = ['b', 'B', 'a', '\uFFFD', '\u{1F600}', '\uE000', 'a\u{1F600}', 'a\uFFFD'];

function rows(): StoredRow[] {
  return KEYS.flatMap((key, i) =>
    // key i has 1 + (i % 3) rows: three-way ties on subagents; tokens tie too, or are not reported
    Array.from({ length: 1 + (i % 3) }, (_, j) => ({
      tool_call_id: `c${i}-${j}`,
      task_id: key,
      task_session_id: `${key}-s${j % 2}`,
      turn_id: `${key}-u${j}`,
      subagent_type: i % 4 === 0 ? null : key,
      model: i % 5 === 0 ? null : i % 5 === 1 ? '' : key,
      total_tokens: i % 4 === 3 ? null : 100 * (i % 2),
      duration_ms: 10 * (i + j),
      observed_at: T((i * 7 + j) % 60),
    })),
  );
}

describe.each(TARGET_FIXTURES)('R4-12 cuts on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const report = (options: ReportOptions) => buildReport(t.db, { now: NOW, graceSeconds: 0, ...options });

  async function seed() {
    await insertRows(t.db, rows());
    // cost for some tasks only (the host schema has the ledger): a null cost sorts last, ties on cost too
    if (fixture !== 'host') return;
    for (const [i, key] of KEYS.entries())
      if (i % 3 !== 2)
        await addCostEvent(t.db, { id: `e${i}`, session: `${key}-s0`, task: key, subcents: 5 * (i % 2), at: T(i) });
  }

  it.each(GROUP_BY.map((by) => [by]))(
    'R4-12: --by %s --limit N keeps the groups the uncut grouping puts first, for every --sort and N',
    async (by: GroupBy) => {
      await seed();
      for (const sort of SORT_BY) {
        const whole = await report({ by, sort });
        for (const limit of [1, 3, whole.groups.length + 1]) {
          const cut = await report({ by, sort, limit });
          expect(cut.groups, `--sort ${sort} --limit ${limit}`).toEqual(whole.groups.slice(0, limit));
          expect({ ...cut, groups: [] }, `--sort ${sort} --limit ${limit}`).toEqual({
            ...whole,
            groups: [],
            filters: { ...whole.filters, limit },
          });
        }
      }
    },
  );

  it('R4-12: a cut level computes its distinct executions, turns and percentiles for the groups it keeps as the uncut grouping does', async () => {
    // per task: rows sharing a turn and an execution, an 'unknown' execution and an empty turn, an
    // unreported duration (COUNT ≠ COUNT(DISTINCT), percentiles over reported rows only)
    await insertRows(
      t.db,
      KEYS.flatMap((key, i) =>
        Array.from({ length: 4 }, (_, j) => ({
          tool_call_id: `d${i}-${j}`,
          task_id: key,
          task_session_id: `${key}-s0`,
          turn_id: j === 3 ? '' : `${key}-u${j % 2}`,
          agent_execution_id: j === 3 ? 'unknown' : `${key}-x${j % 2}`,
          duration_ms: j === 0 ? null : 7 * (i + 1) * j,
          observed_at: T(i + j),
        })),
      ),
    );
    const whole = await report({ by: 'task' });
    // the oracle holds what the rows say: 2 executions and 2 turns a task, p50/p95 of 3 durations
    expect(whole.groups.map((g) => [g.executions, g.turns, g.duration_ms.reported])).toEqual(KEYS.map(() => [2, 2, 3]));
    for (const limit of [1, 3]) {
      expect((await report({ by: 'task', limit })).groups, `--limit ${limit}`).toEqual(whole.groups.slice(0, limit));
      // the page's task rows: the same groups, without the figures a series leaves out
      expect((await report({ pageData: true, pageTasks: limit })).series?.task, `pageTasks ${limit}`).toEqual(
        whole.groups.slice(0, limit).map(seriesGroupOf),
      );
    }
  });

  it('R4-12: --sort contexts ranks a cut by the sessions the uncut grouping counts: a shared session once, a session without rows, never a deleted one', async () => {
    const at = T(1);
    await insertRows(t.db, [
      // k2: 5 rows of one session: contexts 1 + 5 = 6
      ...Array.from({ length: 5 }, (_, j) => ({
        tool_call_id: `k2-${j}`,
        task_id: 'k2',
        task_session_id: 'k2-s0',
        observed_at: at,
      })),
      // k3: 1 row, and 5 more sessions without rows: contexts 6 + 1 = 7
      { tool_call_id: 'k3-0', task_id: 'k3', task_session_id: 'k3-s0', observed_at: at },
      // k1: 2 rows of a session the host deleted (no session) and 2 of one it keeps: contexts 1 + 4 = 5
      ...Array.from({ length: 4 }, (_, j) => ({
        tool_call_id: `k1-${j}`,
        task_id: 'k1',
        task_session_id: j < 2 ? 'k1-gone' : 'k1-s0',
        observed_at: at,
      })),
    ]);
    for (let j = 1; j <= 5; j++) await seedSession(t.db, `k3-s${j}`, 'k3');
    await deleteSessionKeepingRows(t.db, 'k1-gone');
    const whole = await report({ by: 'task', sort: 'contexts' });
    expect(whole.groups.map((g) => [g.key, g.contexts])).toEqual([
      ['k3', 7],
      ['k2', 6],
      ['k1', 5],
    ]);
    for (const limit of [1, 2]) {
      const cut = await report({ by: 'task', sort: 'contexts', limit });
      expect(cut.groups, `--limit ${limit}`).toEqual(whole.groups.slice(0, limit));
      const page = await report({ pageData: true, pageTasks: limit, sort: 'contexts' });
      expect(page.series?.task, `pageTasks ${limit}`).toEqual(whole.groups.slice(0, limit).map(seriesGroupOf));
    }
  });

  it('R4-12: the page data holds the first pageTasks task groups and counts them all (series.task_groups)', async () => {
    await seed();
    for (const sort of SORT_BY) {
      const all = (await report({ by: 'task', sort })).groups;
      const page = await report({ pageData: true, pageTasks: 3, sort });
      expect(page.series?.task, `--sort ${sort}`).toEqual(all.slice(0, 3).map(seriesGroupOf));
      expect(page.series?.task_groups).toBe(KEYS.length);
      // the other series are whole
      expect(page.series?.type).toEqual((await report({ by: 'type', sort })).groups.map(typeSeriesGroupOf));
    }
  });

  it('R4-12: a task level that is also --by keeps what the larger of the two needs', async () => {
    await seed();
    const all = (await report({ by: 'task' })).groups;
    const few = await report({ by: 'task', limit: 2, pageData: true, pageTasks: 5 });
    expect(few.groups).toEqual(all.slice(0, 2));
    expect(few.series?.task).toEqual(all.slice(0, 5).map(seriesGroupOf));
    const many = await report({ by: 'task', limit: 6, pageData: true, pageTasks: 1 });
    expect(many.groups).toEqual(all.slice(0, 6));
    expect(many.series?.task).toEqual(all.slice(0, 1).map(seriesGroupOf));
    expect(many.series?.task_groups).toBe(KEYS.length);
    // without --limit, --by task holds every group, the page's series its first rows
    const whole = await report({ by: 'task', pageData: true, pageTasks: 2 });
    expect(whole.groups).toEqual(all);
    expect(whole.series?.task).toEqual(all.slice(0, 2).map(seriesGroupOf));
  });

  it('R4-12: on one connection the breakdown lists only the groups a cut keeps, and the document is the one a pool builds', async () => {
    await seed();
    // the same store seen as one connection (statements in turn) and as a pool of four (side by side)
    const seen = (connections: number, results: Row[][]): Queryable => ({
      dialect: t.db.dialect,
      connections,
      query: async <T>(sql: string, params?: readonly unknown[]) => {
        const rows = await t.db.query<Row>(sql, params);
        results.push(rows);
        return rows as T[];
      },
    });
    for (const options of [
      { by: 'task', limit: 3, sort: 'tokens' },
      // the task level serves --by and the page's task rows: it keeps the larger of the two
      { by: 'task', limit: 2, pageData: true, pageTasks: 3 },
    ] as const) {
      const inTurn: Row[][] = [];
      const one = await buildReport(seen(1, inTurn), { now: NOW, graceSeconds: 0, ...options });
      const pool = await buildReport(seen(4, []), { now: NOW, graceSeconds: 0, ...options });
      expect(one).toEqual(pool);
      const kept = new Set((one.series?.task ?? one.groups).map((g) => g.key ?? '\u0000null'));
      // statement 2's rows of the task level (--by task: level 1)
      const listed = inTurn
        .flat()
        .filter((r) => (r.kind === 'model' || r.kind === 'fan_out') && Number(r.lvl) === 1)
        .map((r) => (Number(r.gnull) === 1 ? '\u0000null' : String(r.gkey)));
      expect(listed.length).toBeGreaterThan(0);
      expect(new Set(listed), JSON.stringify(options)).toEqual(kept);
    }
  });

  it('R4-12: every tree carries its task title (where the host has titles), its task among the page task rows or not', async () => {
    await seed();
    const page = await report({ pageData: true, pageTasks: 1, trees: 20 });
    const shown = new Set(page.series?.task?.map((g) => g.key));
    expect(page.trees.some((t) => !shown.has(t.task_id))).toBe(true);
    // the host's tasks.title is its id in this fixture; the minimal schema has no tasks table
    for (const tree of page.trees) expect(tree.task_title).toBe(fixture === 'host' ? tree.task_id : undefined);
  });
});
