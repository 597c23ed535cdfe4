import type { Database, Row } from '../lib/db/database.js';
import { type HealthCheckOptions, runHealthCheck } from '../lib/health/check.js';
import { DEFAULT_GRACE_SECONDS } from '../lib/health/config.js';
import { excessSql, rowFactsSql, shortfallSql } from '../lib/health/queries.js';
import type { HealthReport } from '../lib/health/report.js';
import { CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { formatCanonical, formatKey, type Micros, nowMicros } from '../lib/time.js';
import { median, timed } from './stats.js';

export interface HealthFigures {
  /** median wall time of one runHealthCheck, ms */
  wallMs: number;
  runs: number;
  perRunMs: number[];
  report: HealthReport;
  /** statement → plan text, as the database explains it */
  plans: Record<string, string>;
}

const EXPLAIN: Record<Database['dialect']['name'], string> = { postgres: 'EXPLAIN', sqlite: 'EXPLAIN QUERY PLAN' };

/**
 * The health check on the backfilled store, worst case: capture_since is moved back to the
 * store's first message, so both anti-joins cover every message and every row (a pipeline
 * activated before all of its history). `db` should be a pool, as the function's is: the check
 * runs its statements side by side.
 */
export async function benchHealth(db: Database, activatedAt: Micros, runs: number): Promise<HealthFigures> {
  await db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [formatKey(activatedAt), CAPTURE_SINCE_KEY]);
  // A confirmation wait would time a sleep, not the database: the store is consistent, so none is expected.
  const options: HealthCheckOptions = {
    kind: 'full',
    graceSeconds: DEFAULT_GRACE_SECONDS,
    beforeConfirm: async () => undefined,
  };
  const samples: { ms: number; report: HealthReport }[] = [];
  for (let run = 0; run < runs; run++)
    samples.push(await timed(() => runHealthCheck(db, options)).then(({ result, ms }) => ({ ms, report: result })));
  const report = samples[samples.length - 1]!.report;
  if (report.status !== 'healthy') {
    throw new Error(`the health check on a fully backfilled store should be healthy, got ${JSON.stringify(report)}`);
  }
  return {
    wallMs: median(samples.map((s) => s.ms)),
    runs,
    perRunMs: samples.map((s) => s.ms),
    report,
    plans: await plans(db, activatedAt),
  };
}

async function plans(db: Database, activatedAt: Micros): Promise<Record<string, string>> {
  const { dialect } = db;
  const since = formatCanonical(activatedAt);
  const cutoff = formatCanonical(nowMicros() - BigInt(DEFAULT_GRACE_SECONDS) * 1_000_000n);
  const statements: [string, string, unknown[]][] = [
    ['shortfall', shortfallSql(dialect), [since, cutoff]],
    ['excess', excessSql(dialect), [since]],
    ['row facts', rowFactsSql(dialect), [since]],
  ];
  const out: Record<string, string> = {};
  for (const [name, sql, params] of statements) {
    out[name] = formatPlan(await db.query(`${EXPLAIN[dialect.name]} ${sql}`, params));
  }
  return out;
}

/** PostgreSQL returns the plan as lines; SQLite as (id, parent, detail) rows of a tree. */
export function formatPlan(rows: Row[]): string {
  if (rows.length > 0 && 'QUERY PLAN' in rows[0]!) return rows.map((r) => String(r['QUERY PLAN'])).join('\n');
  const depth = new Map<number, number>([[0, -1]]);
  return rows
    .map((r) => {
      const level = (depth.get(Number(r.parent)) ?? -1) + 1;
      depth.set(Number(r.id), level);
      return `${'  '.repeat(level)}${String(r.detail)}`;
    })
    .join('\n');
}
