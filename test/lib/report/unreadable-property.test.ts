import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { buildReport } from '../../../lib/report/build.js';
import { NOTHING_UNREADABLE, seriesGroupOf, typeSeriesGroupOf } from '../../../lib/report/document.js';
import type { SubagentRow } from '../../../lib/row.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { onlyRowFigures, readableRowFigures } from '../../support/report-oracle.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R4-3 for any mix: rows whose metrics and observed_at are readable, NULL or odd (what each
 * dialect's column type can hold, written by raw SQL as the host's writer could). The report's
 * totals equal the oracle's over the same rows with every odd value read as not reported, and
 * completeness.unreadable counts exactly the odd values (test/support/report-oracle.ts).
 */

const T = (s: number, day = 2) => `2026-08-1${day}T13:00:${String(s).padStart(2, '0')}.000001Z`;
const NOW = parseRfc3339('2026-08-13T00:00:00Z')!;

const ODD_METRIC = {
  sqlite: ["'x'", '0.5', '-1', '2147483648', '9007199254740993', '9223372036854775807'],
  postgres: ['-1', '-2147483648'],
};
const ODD_INSTANT = {
  sqlite: ["'garbage'", "''", '1700000000', "'10000-01-01 00:00:00+00:00'", "'2026-02-30 13:00:00+00:00'"],
  postgres: ["'infinity'", "'-infinity'", "'294276-01-01 00:00:00'", "'0044-03-15 12:00:00 BC'"],
};

const METRICS = ['total_tokens', 'tool_use_count', 'duration_ms'] as const;

/** A stored value: NULL, a readable one, or the index of an odd SQL literal. */
type Cell = { kind: 'null' } | { kind: 'value'; value: number } | { kind: 'odd'; index: number };
const cell = (max: number): fc.Arbitrary<Cell> =>
  fc.oneof(
    fc.constant<Cell>({ kind: 'null' }),
    fc.integer({ min: 0, max: 2_147_483_647 }).map((value): Cell => ({ kind: 'value', value })),
    fc.nat({ max: max - 1 }).map((index): Cell => ({ kind: 'odd', index })),
  );

interface RowCase {
  total_tokens: Cell;
  tool_use_count: Cell;
  duration_ms: Cell;
  observed: { odd: false; second: number } | { odd: true; index: number };
  model: string | null;
  type: string | null;
  /** 2026-08-10 + day, for the readable observed_at */
  day: number;
}

describe.each(TARGETS)('R4-3 on %s: any mix of odd values', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const dialect = target === 'sqlite' ? 'sqlite' : 'postgres';
  const oddMetrics = ODD_METRIC[dialect];
  const oddInstants = ODD_INSTANT[dialect];
  const rowArb: fc.Arbitrary<RowCase> = fc.record({
    total_tokens: cell(oddMetrics.length),
    tool_use_count: cell(oddMetrics.length),
    duration_ms: cell(oddMetrics.length),
    observed: fc.oneof(
      fc.nat({ max: 59 }).map((s) => ({ odd: false as const, second: s })),
      fc.nat({ max: oddInstants.length - 1 }).map((index) => ({ odd: true as const, index })),
    ),
    model: fc.constantFrom('m1', 'm2', null),
    type: fc.constantFrom('Explore', 'Plan', null),
    day: fc.nat({ max: 2 }),
  });

  async function store(db: Queryable, rows: RowCase[]): Promise<void> {
    await db.query('DELETE FROM task_session_subagents');
    await insertRows(
      db,
      rows.map((r, i) => ({
        tool_call_id: `c${i}`,
        model: r.model,
        subagent_type: r.type,
        observed_at: r.observed.odd ? T(0) : T(r.observed.second, r.day),
        ...Object.fromEntries(METRICS.map((m) => [m, r[m].kind === 'value' ? r[m].value : null])),
      })),
    );
    for (const [i, r] of rows.entries()) {
      const sets = METRICS.flatMap((m) => {
        const c = r[m];
        return c.kind === 'odd' ? [`${m} = ${oddMetrics[c.index]}`] : [];
      });
      if (r.observed.odd) sets.push(`observed_at = ${oddInstants[r.observed.index]}`);
      if (sets.length > 0)
        await db.query(`UPDATE task_session_subagents SET ${sets.join(', ')} WHERE tool_call_id = $1`, [`c${i}`]);
    }
  }

  it('R4-3: totals equal the oracle with every odd value not reported; unreadable counts each column exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { minLength: 1, maxLength: 8 }), async (rows) => {
        await store(t.db, rows);
        const doc = await buildReport(t.db, { now: NOW, by: 'day' });
        const oracleRows = rows.map(
          (r, i) =>
            ({
              task_session_id: 's1',
              task_id: 't1',
              turn_id: 'u1',
              tool_call_id: `c${i}`,
              agent_execution_id: 'e1',
              parent_tool_call_id: null,
              model: r.model,
              tool_status: null,
              is_async: 0,
              source: 'live',
              settled_at: null,
              observed_at: r.observed.odd ? null : T(r.observed.second, r.day),
              ...Object.fromEntries(METRICS.map((m) => [m, r[m].kind === 'value' ? r[m].value : null])),
            }) as unknown as Omit<SubagentRow, 'observed_at'> & { observed_at: string | null },
        );
        expect(onlyRowFigures(doc.totals)).toEqual(readableRowFigures(oracleRows));
        const odd = (m: (typeof METRICS)[number]) => rows.filter((r) => r[m].kind === 'odd').length;
        const oddObserved = rows.filter((r) => r.observed.odd).length;
        expect(doc.completeness.unreadable).toEqual({
          ...NOTHING_UNREADABLE,
          total_tokens: odd('total_tokens'),
          tool_use_count: odd('tool_use_count'),
          duration_ms: odd('duration_ms'),
          observed_at: oddObserved,
        });
        // a row without an instant is in no day
        expect(doc.groups.reduce((sum, g) => sum + g.subagents, 0)).toBe(rows.length - oddObserved);
      }),
      { numRuns: target === 'sqlite' ? 40 : 15 },
    );
  }, 240_000);

  it("R4-12: the page's day and type series, rolled up from one grouping, are the --by day and --by type groups without what a series leaves out, in any window", async () => {
    const window = fc.option(
      fc.record({ since: fc.nat({ max: 2 }), until: fc.integer({ min: 1, max: 3 }) }).filter((w) => w.since < w.until),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { minLength: 1, maxLength: 8 }), window, async (rows, w) => {
        await store(t.db, rows);
        const scope =
          w === undefined ? {} : { since: parseRfc3339(T(0, w.since))!, until: parseRfc3339(T(0, w.until))! };
        const page = await buildReport(t.db, { now: NOW, pageData: true, ...scope });
        for (const by of ['day', 'type'] as const) {
          const groups = (await buildReport(t.db, { now: NOW, by, ...scope })).groups;
          // R6-6: the type series keeps its spend percentiles (the page's spend chart reads them)
          expect(page.series?.[by], by).toEqual(groups.map(by === 'type' ? typeSeriesGroupOf : seriesGroupOf));
        }
      }),
      { numRuns: target === 'sqlite' ? 30 : 10 },
    );
  }, 240_000);
});
