import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../../lib/cli/exit-codes.js';
import type { Queryable } from '../../../lib/db/database.js';
import type { Group, ReportDocument } from '../../../lib/report/document.js';
import { NOTHING_UNREADABLE, reportDocument } from '../../../lib/report/document.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { runCliJson } from '../../support/cli-run.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, type TargetName, useTestDatabase } from '../../support/targets.js';

/*
 * R4-3 (docs/report.md#unreadable-values): the host's task_session_subagents and office_cost_events
 * have no CHECKs, so its own writer can store anything the column type holds. Each case writes one
 * such value as the host could (raw SQL into the host's own table) and runs the real CLI: the report
 * exits 0, counts the value in completeness.unreadable, and every other figure is the hand-computed
 * one below (the store: rows a, b, odd in session s1 of task t1; cost events c1, c2).
 */

const dir = mkdtempSync(join(tmpdir(), 'unreadable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const A = '2026-08-11T10:00:00.000001Z';
const B = '2026-08-12T10:00:00.000002Z';
const ODD = '2026-08-12T11:00:00.000003Z';

const NONE = NOTHING_UNREADABLE;

/** The figures of the store with every value readable (a: 100, 3, 1000 ms; b: 200, 4, 3000 ms; odd: 50, 5, 2000 ms; each settled). */
const EXACT = {
  subagents: 3,
  settled: 3,
  tokens: { sum: 350, reported: 3 },
  tool_uses: { sum: 12, reported: 3 },
  duration_ms: { reported: 3, p50: 2000, p95: 3000, max: 3000 },
  cost_subcents: 150,
  first_observed_at: A,
  last_observed_at: ODD,
};

type Column = keyof typeof NONE;
type Dialect = 'sqlite' | 'postgres';

interface OddCase {
  column: Column;
  /** the SQL literal the host's writer could store */
  value: string;
  /** where the column's type can hold it (PostgreSQL's INTEGER is 32-bit, its timestamp is no text) */
  on: readonly Dialect[];
  /** rows (or cost events) holding it: 'odd' (default) or every one */
  rows?: 'odd' | 'all';
  /** the totals' figures that change, hand-computed */
  expect: Record<string, unknown>;
}

const BOTH: readonly Dialect[] = ['sqlite', 'postgres'];
const SQLITE: readonly Dialect[] = ['sqlite'];
const POSTGRES: readonly Dialect[] = ['postgres'];

const NO_ODD_TOKENS = { tokens: { sum: 300, reported: 2 } };
const NO_ODD_TOOLS = { tool_uses: { sum: 7, reported: 2 } };
const NO_ODD_DURATION = { duration_ms: { reported: 2, p50: 1000, p95: 3000, max: 3000 } };
/** a row without an instant: still a subagent with its metrics, in no window, day or tree */
const NO_ODD_INSTANT = { last_observed_at: B };
/** a settled_at that is not an instant is no settlement: the row counts as running */
const NO_ODD_SETTLED = { settled: 2 };

const CASES: readonly OddCase[] = [
  { column: 'total_tokens', value: '9007199254740993', on: SQLITE, expect: NO_ODD_TOKENS },
  { column: 'total_tokens', value: '2147483648', on: SQLITE, expect: NO_ODD_TOKENS },
  {
    column: 'total_tokens',
    value: '9223372036854775807',
    on: SQLITE,
    rows: 'all',
    expect: { tokens: { sum: null, reported: 0 } },
  },
  { column: 'total_tokens', value: '-1', on: BOTH, expect: NO_ODD_TOKENS },
  { column: 'tool_use_count', value: "'x'", on: SQLITE, expect: NO_ODD_TOOLS },
  { column: 'tool_use_count', value: '-2147483648', on: BOTH, expect: NO_ODD_TOOLS },
  { column: 'duration_ms', value: '0.5', on: SQLITE, expect: NO_ODD_DURATION },
  { column: 'duration_ms', value: "'1 h'", on: SQLITE, expect: NO_ODD_DURATION },
  { column: 'observed_at', value: "'garbage'", on: SQLITE, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "''", on: SQLITE, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: '1700000000', on: SQLITE, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "'10000-01-01 00:00:00+00:00'", on: SQLITE, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "'2026-02-30 10:00:00+00:00'", on: SQLITE, expect: NO_ODD_INSTANT },
  // issue 48: +02:00 is read as the instant it is (one reader); an offset SQLite's date functions do not read is not
  { column: 'observed_at', value: "'2026-08-12 12:00:00+15:00'", on: SQLITE, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "'infinity'", on: POSTGRES, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "'-infinity'", on: POSTGRES, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "'294276-01-01 00:00:00'", on: POSTGRES, expect: NO_ODD_INSTANT },
  { column: 'observed_at', value: "'0044-03-15 12:00:00 BC'", on: POSTGRES, expect: NO_ODD_INSTANT },
  { column: 'settled_at', value: "'garbage'", on: SQLITE, expect: NO_ODD_SETTLED },
  { column: 'settled_at', value: "''", on: SQLITE, expect: NO_ODD_SETTLED },
  { column: 'settled_at', value: '1700000000', on: SQLITE, expect: NO_ODD_SETTLED },
  { column: 'settled_at', value: "'infinity'", on: POSTGRES, expect: NO_ODD_SETTLED },
  { column: 'settled_at', value: "'0044-03-15 12:00:00 BC'", on: POSTGRES, expect: NO_ODD_SETTLED },
  { column: 'cost_subcents', value: '9007199254740993', on: SQLITE, expect: { cost_subcents: 100 } },
  { column: 'cost_subcents', value: "'x'", on: SQLITE, expect: { cost_subcents: 100 } },
  // issue 57 #19: a fraction is rounded once (a REAL beyond the range rounds to no integer in it)
  { column: 'cost_subcents', value: '1e300', on: SQLITE, expect: { cost_subcents: 100 } },
  { column: 'cost_subcents', value: '2147483647.5', on: SQLITE, expect: { cost_subcents: 100 } },
  {
    column: 'cost_subcents',
    value: '9223372036854775807',
    on: SQLITE,
    rows: 'all',
    expect: { cost_subcents: null },
  },
  { column: 'occurred_at', value: "'garbage'", on: SQLITE, expect: {} },
  { column: 'occurred_at', value: "'infinity'", on: POSTGRES, expect: {} },
];

const dialectOf = (target: TargetName): Dialect => (target === 'sqlite' ? 'sqlite' : 'postgres');

async function seedStore(db: Queryable): Promise<void> {
  const row = { task_session_id: 's1', task_id: 't1', turn_id: 'u1' };
  await insertRows(db, [
    {
      ...row,
      tool_call_id: 'a',
      total_tokens: 100,
      tool_use_count: 3,
      duration_ms: 1000,
      observed_at: A,
      settled_at: A,
    },
    {
      ...row,
      tool_call_id: 'b',
      total_tokens: 200,
      tool_use_count: 4,
      duration_ms: 3000,
      observed_at: B,
      settled_at: B,
    },
    {
      ...row,
      tool_call_id: 'odd',
      total_tokens: 50,
      tool_use_count: 5,
      duration_ms: 2000,
      observed_at: ODD,
      settled_at: ODD,
    },
  ]);
  const at = db.dialect.encodeTimestamp(parseRfc3339(B)!);
  for (const [id, subcents] of [
    ['c1', 100],
    ['odd', 50],
  ] as const) {
    await db.query(
      `INSERT INTO office_cost_events (id, session_id, task_id, cost_subcents, estimated, occurred_at, created_at)
       VALUES ($1, 's1', 't1', $2, 0, ${db.dialect.timestampParam(3)}, ${db.dialect.timestampParam(3)})`,
      [id, subcents, at],
    );
  }
}

/** The odd value, written as the host's writer could: raw SQL into its own table. */
async function writeOdd(db: Queryable, c: OddCase): Promise<void> {
  const costColumn = c.column === 'cost_subcents' || c.column === 'occurred_at';
  const table = costColumn ? 'office_cost_events' : 'task_session_subagents';
  const where = c.rows === 'all' ? '' : costColumn ? " WHERE id = 'odd'" : " WHERE tool_call_id = 'odd'";
  await db.query(`UPDATE ${table} SET ${c.column} = ${c.value}${where}`);
}

const oddCount = (c: OddCase) => (c.rows === 'all' ? (c.column.startsWith('c') ? 2 : 3) : 1);

describe.each(TARGETS)('R4-3 on %s: one odd value never fails a report', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const cli = (...args: string[]) =>
    runCliJson(
      ['report', '--database-url', t.url, '--grace-seconds', '0', ...args],
      t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {},
    );
  const cases = CASES.filter((c) => c.on.includes(dialectOf(target)));

  it('the store as seeded reads exactly (the cases below start from it)', async () => {
    await seedStore(t.db);
    const run = await cli('--json');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.json.totals).toMatchObject(EXACT);
    expect(run.json.completeness.unreadable).toEqual(NONE);
  });

  it.each(cases.map((c) => [c.column, c.value, c] as const))(
    'R4-3: %s = %s is unreadable, counted, the rest exact',
    async (column, _value, c) => {
      await seedStore(t.db);
      await writeOdd(t.db, c);
      const n = oddCount(c);

      // --json: exit 0, the value counted, every other figure exact
      const run = await cli('--json');
      expect(run.code, run.stderr).toBe(EXIT.ok);
      const doc = run.json as ReportDocument;
      expect(() => reportDocument.parse(doc)).not.toThrow();
      expect(doc.completeness.unreadable).toEqual({ ...NONE, [column]: n });
      expect(doc.totals).toMatchObject({ ...EXACT, ...c.expect });
      expect(doc.completeness.notes.join(' ')).toContain(`${n} ${column} value(s) in scope could not be read`);

      // --by day: a row without an instant is in no day; every day's figures exact
      const byDay = await cli('--json', '--by', 'day');
      expect(byDay.code, byDay.stderr).toBe(EXIT.ok);
      const days = (byDay.json as ReportDocument).groups.map((g: Group) => [g.key, g.subagents]);
      expect(days).toEqual(
        column === 'observed_at'
          ? [
              ['2026-08-11', 1],
              ['2026-08-12', 1],
            ]
          : [
              ['2026-08-11', 1],
              ['2026-08-12', 2],
            ],
      );

      // a window that holds every readable instant: an unreadable observed_at is in no window
      const windowed = await cli('--json', '--since', '2026-08-01T00:00:00Z', '--until', '2026-09-01T00:00:00Z');
      expect(windowed.code, windowed.stderr).toBe(EXIT.ok);
      const inWindow = windowed.json as ReportDocument;
      expect(inWindow.completeness.unreadable).toEqual({ ...NONE, [column]: n });
      if (column === 'observed_at') {
        expect(inWindow.totals).toMatchObject({
          subagents: 2,
          tokens: { sum: 300, reported: 2 },
          tool_uses: { sum: 7, reported: 2 },
        });
      } else if (column === 'occurred_at') {
        expect(inWindow.totals.cost_subcents).toBe(100);
      } else expect(inWindow.totals).toMatchObject({ ...EXACT, ...c.expect });

      // the page (series, histogram, trees): written, and its document is the same
      const file = join(dir, `${target}-${column}-${Math.random().toString(36).slice(2)}.html`);
      const page = await cli('--html', file, '--json', '--by', 'day');
      expect(page.code, page.stderr).toBe(EXIT.ok);
      const pageDoc = page.json as ReportDocument;
      expect(pageDoc.totals).toEqual(doc.totals);
      expect(pageDoc.distributions?.duration_ms.reported).toBe(doc.totals.duration_ms.reported);
      const treeRows = pageDoc.trees.flatMap((tree) => tree.subagents).length;
      expect(treeRows).toBe(column === 'observed_at' ? 2 : 3);
      expect(readFileSync(file, 'utf8')).toContain('<html');
    },
  );
});
