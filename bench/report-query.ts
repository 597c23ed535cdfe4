import type { Database } from '../lib/db/database.js';
import { CHECKPOINT_KEY } from '../lib/health/checkpoint.js';
import { DEFAULT_GRACE_SECONDS } from '../lib/health/config.js';
import { jsonDocument } from '../lib/json-document.js';
import { buildReport, type ReportOptions } from '../lib/report/build.js';
import { readStoreCatalog } from '../lib/report/catalog.js';
import { readActivationKeys } from '../lib/report/completeness.js';
import type { ReportDocument } from '../lib/report/document.js';
import { breakdownStatement, figuresStatement, type ReportScope } from '../lib/report/sql.js';
import { CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { formatKey, nowMicros } from '../lib/time.js';
import { formatPlan } from './health.js';
import { median, timed } from './stats.js';

/** One way of running `report --json` on the store, timed. */
export interface ReportVariant {
  name: string;
  /** median wall time of buildReport + the JSON text, ms */
  wallMs: number;
  perRunMs: number[];
  groups: number;
}

export interface ReportQueryFigures {
  variants: ReportVariant[];
  /** the plain report's totals (what was measured) */
  totals: ReportDocument['totals'];
  /** statement → plan text, as the database explains it */
  plans: Record<string, string>;
}

const EXPLAIN: Record<Database['dialect']['name'], string> = { postgres: 'EXPLAIN', sqlite: 'EXPLAIN QUERY PLAN' };

/**
 * `report --json` on the backfilled store (docs/report.md), as the CLI runs it (a pool: its
 * statements run side by side), in each dialect's two worst cases: no health checkpoint with the
 * whole history since capture_since (R4-12: the report then leaves the shortfall to health), and
 * capture_since after the whole history (every message is read for the lower bound, AC-25) with
 * the scheduled check running; and `--by task`.
 */
export async function benchReportQuery(db: Database, runs: number): Promise<ReportQueryFigures> {
  const variants: ReportVariant[] = [];
  let totals: ReportDocument['totals'] | undefined;
  const measure = async (name: string, options: ReportOptions) => {
    const samples: { ms: number; doc: ReportDocument }[] = [];
    for (let run = 0; run < runs; run++) {
      const { result, ms } = await timed(async () => {
        const doc = await buildReport(db, options);
        jsonDocument(doc);
        return doc;
      });
      samples.push({ ms, doc: result });
    }
    const doc = samples.at(-1)!.doc;
    totals ??= doc.totals;
    variants.push({
      name,
      wallMs: median(samples.map((s) => s.ms)),
      perRunMs: samples.map((s) => s.ms),
      groups: doc.groups.length,
    });
  };
  // As the health bench leaves it: capture_since at the first message, no scheduled check yet.
  await db.query('DELETE FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]);
  await measure('capture_since at the first message, no checkpoint: the shortfall is not checked (R4-12)', {});
  // As a new install is: capture_since after the whole history (every session a lower bound, so
  // every message before it is read for that), the scheduled check running.
  const now = nowMicros();
  await db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [formatKey(now), CAPTURE_SINCE_KEY]);
  const hourAgo = now - BigInt(DEFAULT_GRACE_SECONDS + 3_600) * 1_000_000n;
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [CHECKPOINT_KEY, formatKey(hourAgo)]);
  await measure('capture_since after the history, checkpoint 1 h behind', {});
  await measure('the same, --by task', { by: 'task' });
  await db.query('DELETE FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]);
  return { variants, totals: totals!, plans: await plans(db) };
}

async function plans(db: Database): Promise<Record<string, string>> {
  const catalog = await readStoreCatalog(db);
  const keys = await readActivationKeys(db);
  const scope: ReportScope = { by: null, captureSince: keys.captureSince };
  const out: Record<string, string> = {};
  for (const [name, statement] of [
    ['figures', figuresStatement(db.dialect, scope, catalog)],
    ['breakdown', breakdownStatement(db.dialect, scope)],
  ] as const) {
    out[name] = formatPlan(await db.query(`${EXPLAIN[db.dialect.name]} ${statement.sql}`, statement.params));
  }
  return out;
}
