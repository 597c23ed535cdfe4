import { TABLE } from '../lib/columns.js';
import type { Database } from '../lib/db/database.js';
import { type MigrationReport, runMigration } from '../lib/migrate/run-migration.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { median, timed } from './stats.js';

export interface BackfillFigures {
  /** median wall time of runMigration (schema + the one backfill transaction), ms */
  wallMs: number;
  /** rows inserted per second of wall time (median run) */
  rowsPerSecond: number;
  /** host messages read per second of wall time (median run) */
  messagesPerSecond: number;
  inserted: number;
  matched: number;
  runs: number;
  perRunMs: number[];
}

/**
 * The backfill on an already generated host store: each run starts from "never migrated" (our
 * table dropped, both keys deleted) and times `runMigration` end to end, as the operator's
 * invocation of the migrate function would run it.
 */
export async function benchBackfill(db: Database, messages: number, runs: number): Promise<BackfillFigures> {
  const samples: { ms: number; report: MigrationReport }[] = [];
  for (let run = 0; run < runs; run++) {
    await db.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await db.query('DELETE FROM kandev_meta WHERE key IN ($1, $2)', [CAPTURE_SINCE_KEY, BACKFILL_THROUGH_KEY]);
    const { result: report, ms } = await timed(() => runMigration(db));
    if (report.backfill !== 'completed') throw new Error('the backfill was skipped although both keys were deleted');
    samples.push({ ms, report });
  }
  const wallMs = median(samples.map((s) => s.ms));
  const last = samples[samples.length - 1]!.report;
  return {
    wallMs,
    rowsPerSecond: last.inserted / (wallMs / 1000),
    messagesPerSecond: messages / (wallMs / 1000),
    inserted: last.inserted,
    matched: last.matched,
    runs,
    perRunMs: samples.map((s) => s.ms),
  };
}
