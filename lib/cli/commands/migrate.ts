import type { Database } from '../../db/database.js';
import { MigrationInterrupted, type MigrationReport, runMigration } from '../../migrate/run-migration.js';
import { logger } from '../../observability.js';
import { renderFacts } from '../../text-table.js';
import { formatRfc3339, parseStoredTimestamp } from '../../time.js';
import { humanDuration } from '../../units.js';
import { EXIT } from '../exit-codes.js';
import { Interrupted } from '../interrupt.js';
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
  options: { rerunBackfill?: boolean; interrupt?: AbortSignal } = {},
): Promise<CommandResult<MigrationReport>> {
  await requireHostStore(db);
  const report = await runMigration(db, {
    logger,
    rerunBackfill: options.rerunBackfill,
    signal: options.interrupt,
  }).catch((err: unknown) => {
    if (err instanceof MigrationInterrupted) throw interruptedMigration(err);
    throw err;
  });
  // R3-4: a lost backfill needs attention (exit 3) until it is run again.
  const lost = report.backfill === 'skipped' && (report.historyMissing ?? 0) > 0;
  const text = lost
    ? `${renderMigration(report)}\n\n${report.historyMissing} subagent invocations before capture_since have no row: ` +
      'the backfilled rows are gone (a re-created table, deleted rows). `subagent-context migrate --rerun-backfill` inserts them again (keys untouched).'
    : renderMigration(report);
  return { exitCode: lost ? EXIT.attention : EXIT.ok, result: report, text };
}

/**
 * Ctrl-C at a step's boundary (issue 58 #11): what was committed (the idempotent schema at most,
 * never a part of the backfill: its one transaction was rolled back) and what to run next.
 */
function interruptedMigration(err: MigrationInterrupted): Interrupted {
  if (!err.schemaCommitted)
    return new Interrupted(
      'migrate stopped before it changed anything: nothing was committed',
      'run the same command again',
    );
  const where =
    err.step === 'guard'
      ? 'migrate stopped before its backfill: the schema is in place (idempotent); nothing of the backfill was committed'
      : `migrate stopped during its backfill (before step "${err.step}"): its transaction was rolled back, so nothing of the backfill was committed (no row, no kandev_meta key); the schema is in place (idempotent)`;
  return new Interrupted(where, 'run the same command again: the backfill runs whole');
}
