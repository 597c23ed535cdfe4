import { describe, expect, it } from 'vitest';
import type { Queryable, QueryOptions } from '../../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../../lib/health/checkpoint.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { buildReport, type ReportOptions } from '../../../lib/report/build.js';
import { CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { formatKey } from '../../../lib/time.js';
import { generateHostStore } from '../../../local/generate-host-store.js';
import { buildReportStore } from '../../support/report-store.js';
import { POSTGRES_TARGETS, TARGETS, useTestDatabase } from '../../support/targets.js';

const PAGE: ReportOptions = { by: 'task', pageData: true, trees: 50, graceSeconds: 0 };
const NOW = 1_798_761_600_000_000n; // 2027-01-01T00:00:00Z

/** `db` as a pool of `connections`, recording how many of its statements are ever in flight at once. */
function counting(db: Queryable, connections: number) {
  let inFlight = 0;
  const seen = { most: 0, statements: [] as { sql: string; params: readonly unknown[] }[] };
  const wrapped: Queryable = {
    dialect: db.dialect,
    connections,
    query: async <T>(sql: string, params: readonly unknown[] = [], options?: QueryOptions) => {
      inFlight += 1;
      seen.most = Math.max(seen.most, inFlight);
      seen.statements.push({ sql, params });
      try {
        return await db.query<T>(sql, params, options);
      } finally {
        inFlight -= 1;
      }
    },
  };
  return { wrapped, seen };
}

// R4-12 (issue 35): the page's dozen statements on a pool of 1 or 2 never outnumber its
// connections (none waits for one it cannot get), and the document is the one a pool of 4 builds.
describe.each(POSTGRES_TARGETS)('the page on a small pool on %s (R4-12)', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });

  it.each([1, 2])(
    'R4-12: report --html on a pool of %i completes with no more statements in flight than connections, and the same document',
    async (max) => {
      await buildReportStore(t.db, 'host');
      const expected = await buildReport(t.connect({ max: 4 }), { ...PAGE, now: NOW });
      const { wrapped, seen } = counting(t.connect({ max }), max);
      const doc = await buildReport(wrapped, { ...PAGE, now: NOW });
      expect(seen.statements.length).toBeGreaterThan(max);
      expect(seen.most).toBeLessThanOrEqual(max);
      expect(doc).toEqual(expected);
    },
  );
});

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/**
 * How much of task_session_messages a statement reads. PostgreSQL: the rows its plan's nodes on
 * the table return (EXPLAIN ANALYZE, rows × loops). SQLite has no actual counts: the plan's reads of
 * the table that are neither a probe by session nor a range bounded on both sides (a pass over
 * the history, through an index or not), as text.
 */
async function messagesRead(db: Queryable, sql: string, params: readonly unknown[]): Promise<number | string[]> {
  if (db.dialect.name === 'postgres') {
    const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
    const raw = row!['QUERY PLAN'];
    const [{ Plan }] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
    let rows = 0;
    const walk = (n: PlanNode) => {
      if (n['Relation Name'] === 'task_session_messages') rows += (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1);
      for (const child of n.Plans ?? []) walk(child);
    };
    walk(Plan);
    return rows;
  }
  const plan = await db.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
  return plan
    .map((r) => r.detail)
    .filter((line) => /^(SCAN|SEARCH) (msg|task_session_messages)\b/.test(line))
    .filter((line) => !/task_session_id=\?|created_at>\? AND created_at<\?/.test(line));
}

// R4-12: with a health checkpoint, completeness is the window since it and the lower bound one
// probe per session in scope (the host's (task_session_id, created_at) index): no statement of
// the report or the page reads the history of task_session_messages, and none is the full audit.
describe.each(TARGETS)('the report reads no message history on %s, host schema (R4-12)', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });

  it('R4-12: with a checkpoint, no statement of report --json or the page scans task_session_messages', async () => {
    const store = await generateHostStore(t.db, { messages: 20_000, fixture: 'host', costs: true });
    await runMigration(t.db);
    const last = store.createdAt!.last;
    // capture_since in the middle of the history (half its sessions a lower bound), the check 1 min behind
    const middle = store.createdAt!.first + (last - store.createdAt!.first) / 2n;
    await t.db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [formatKey(middle), CAPTURE_SINCE_KEY]);
    await t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [
      CHECKPOINT_KEY,
      formatKey(last - 60_000_000n),
    ]);
    // the generator starts every session at the store's start: here only the messages say which are early
    await t.db.query("UPDATE task_sessions SET started_at = '2027-01-01 00:00:00'");
    await t.db.query('ANALYZE');
    for (const options of [{}, PAGE]) {
      const { wrapped, seen } = counting(t.db, 1);
      const doc = await buildReport(wrapped, { ...options, now: last + 60_000_000n, graceSeconds: 0 });
      expect(doc.completeness.shortfall.checked).toBe(true);
      expect(doc.completeness.lower_bound_sessions).toBeGreaterThan(0);
      expect(doc.completeness.lower_bound_sessions).toBeLessThan(store.sessions);
      const reading = seen.statements.filter((s) => /task_session_messages/.test(s.sql));
      expect(reading.length).toBeGreaterThanOrEqual(2); // the shortfall window and the lower bound
      for (const { sql, params } of reading) {
        const read = await messagesRead(t.db, sql, params);
        // the window's messages and one probe per session, never the ~10,000 before capture_since
        if (typeof read === 'number') expect(read, sql).toBeLessThan(store.sessions + 200);
        else expect(read, sql).toEqual([]);
      }
    }
  }, 120_000);
});
