import type { Database } from '../../db/database.js';
import { type MigrationReport, runMigration } from '../../migrate/run-migration.js';
import { logger } from '../../observability.js';
import { EXIT } from '../exit-codes.js';
import type { CommandResult } from '../io.js';
import { requireHostStore } from '../preflight.js';
import { renderFacts } from '../table.js';

export function renderMigration(report: MigrationReport): string {
  return renderFacts([
    ['backfill', report.backfill],
    ['rows inserted', report.inserted],
    ['messages matched', report.matched],
    ['capture_since', report.captureSince],
    ['backfill_through', report.backfillThrough === '' ? "'' (no qualifying message)" : report.backfillThrough],
    ['duration', `${report.durationMs} ms`],
  ]);
}

/**
 * `subagent-context migrate`: schema + the one backfill (docs/migrate.md); a failure throws (exit 1).
 * Logs through the CLI's logger (ERROR only, or WARN with --verbose).
 */
export async function migrateCommand(db: Database): Promise<CommandResult<MigrationReport>> {
  await requireHostStore(db);
  const report = await runMigration(db, { logger });
  return { exitCode: EXIT.ok, result: report, text: renderMigration(report) };
}
