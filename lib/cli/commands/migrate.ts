import type { Database } from '../../db/database.js';
import { type MigrationReport, runMigration } from '../../migrate/run-migration.js';
import { logger } from '../../observability.js';
import { renderFacts } from '../../text-table.js';
import { formatRfc3339, parseStoredTimestamp } from '../../time.js';
import { humanDuration } from '../../units.js';
import { EXIT } from '../exit-codes.js';
import type { CommandResult } from '../io.js';
import { requireHostStore } from '../preflight.js';

/**
 * A stored key (nine fraction digits, docs/time.md) in the six digits `report` and `health` print;
 * `--json` keeps the key as stored. A value that is not an instant is shown as it is.
 */
function asInstant(key: string | null | undefined): string | null | undefined {
  if (key === null || key === undefined || key === '') return key;
  const at = parseStoredTimestamp(key);
  return at === undefined ? key : formatRfc3339(at);
}

export function renderMigration(report: MigrationReport): string {
  return renderFacts([
    ['backfill', report.backfill],
    ['rows inserted', report.inserted],
    ['messages matched', report.matched],
    ['capture_since', asInstant(report.captureSince)],
    [
      'backfill_through',
      report.backfillThrough === '' ? "'' (no qualifying message)" : asInstant(report.backfillThrough),
    ],
    ['history without rows', report.historyMissing],
    ['duration', humanDuration(report.durationMs)],
  ]);
}

/**
 * `subagent-context migrate`: schema + the one backfill (docs/migrate.md); a failure throws (exit 1).
 * Logs through the CLI's logger (ERROR only, or WARN with --verbose).
 */
export async function migrateCommand(
  db: Database,
  options: { rerunBackfill?: boolean } = {},
): Promise<CommandResult<MigrationReport>> {
  await requireHostStore(db);
  const report = await runMigration(db, { logger, rerunBackfill: options.rerunBackfill });
  // R3-4: a lost backfill needs attention (exit 3) until it is run again.
  const lost = report.backfill === 'skipped' && (report.historyMissing ?? 0) > 0;
  const text = lost
    ? `${renderMigration(report)}\n\n${report.historyMissing} subagent invocations before capture_since have no row: ` +
      'the backfilled rows are gone (a re-created table, deleted rows). `subagent-context migrate --rerun-backfill` inserts them again (keys untouched).'
    : renderMigration(report);
  return { exitCode: lost ? EXIT.attention : EXIT.ok, result: report, text };
}
