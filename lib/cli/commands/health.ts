import type { Queryable } from '../../db/database.js';
import { type HealthCheckOptions, runHealthCheck } from '../../health/check.js';
import type { HealthReport } from '../../health/report.js';
import { hint } from '../../hints.js';
import { missingTables } from '../../store/probe.js';
import { formatRfc3339, type Micros, parseRfc3339 } from '../../time.js';
import { EXIT } from '../exit-codes.js';
import { cliFailure } from '../failure.js';
import type { CommandResult } from '../io.js';
import { requireHostStore } from '../preflight.js';
import { renderFacts, renderTable } from '../table.js';

/** What a status other than healthy means, beside it (README "Reading the output"). */
const STATUS_MEANING: Partial<Record<HealthReport['status'], string>> = {
  silent: 'no row observed since activation: is the producer sending?',
  shortfall: 'subagent messages without a row; see missing below',
};

/** A non-zero figure with its meaning beside it; 0 and null (not compared) stand alone. */
function explained(value: number | null, meaning: string): string | number | null {
  return value === null || value === 0 ? value : `${value.toLocaleString('en-US')} (${meaning})`;
}

export function renderHealth(report: HealthReport): string {
  const facts = renderFacts([
    ['status', STATUS_MEANING[report.status] ? `${report.status} (${STATUS_MEANING[report.status]})` : report.status],
    ['kind', report.kind === 'full' ? 'full audit since capture_since' : 'scheduled window'],
    ['window', report.window === null ? null : `${report.window.from} … ${report.window.to}`],
    ...(report.recent === null
      ? []
      : ([
          ['recent traffic', `${report.recent.from} … ${report.recent.to} (also compared; the checkpoint is behind)`],
        ] as const)),
    ['shortfall', report.shortfall],
    ...(report.history === null
      ? []
      : ([
          [
            'history shortfall',
            `${report.history.shortfall} (messages before ${report.history.before} the backfill qualifies, with no row)`,
          ],
        ] as const)),
    [
      'excess',
      report.excessLeftToAudit === null
        ? explained(report.excess, 'row keys since capture_since with no subagent message; reported, never alarms')
        : report.excessLeftToAudit.reason,
    ],
    ['collisions', explained(report.collisions, 'rows beyond the first for one (task_session_id, tool_call_id) key')],
    ['last observed', report.lastObservedAt],
    ['capture_since', report.captureSince],
    ['checkpoint', checkpointText(report)],
    ['checked at', report.checkedAt],
  ]);
  const next = report.status === 'not_activated' ? `\n\nnext: ${hint('not_migrated', 'cli')}` : '';
  const sample = (title: string, keys: HealthReport['missing']) =>
    keys.length === 0
      ? ''
      : `\n\n${title}:\n${renderTable(
          ['task_session_id', 'tool_call_id'],
          keys.map((m) => [m.task_session_id, m.tool_call_id]),
        )}`;
  const lost =
    (report.history?.shortfall ?? 0) > 0
      ? '\n\nbackfilled rows are missing (a re-created table, deleted rows): `subagent-context migrate --rerun-backfill` inserts them again'
      : '';
  return `${facts}${sample('missing (sample)', report.missing)}${sample('missing from the history before capture_since (sample)', report.history?.missing ?? [])}${lost}${next}`;
}

function checkpointText(report: HealthReport): string | null {
  const c = report.checkpoint;
  if (c === null) return null;
  if (!c.moved)
    return `${c.after ?? '(none yet)'} (not moved: nothing new verified: a shortfall holds it, or another run moved it first)`;
  return `${c.before ?? '(none)'} → ${c.after}${c.acknowledged ? ' (acknowledged: the shortfall above is accepted)' : ''}`;
}

/** `subagent-context health`: exit 0 only when healthy; not_activated, silent and shortfall exit 3. */
export async function healthCommand(db: Queryable, options: HealthCheckOptions): Promise<CommandResult<HealthReport>> {
  await requireHostStore(db);
  if ((await missingTables(db, ['kandev_meta'])).length > 0)
    throw cliFailure('not_activated: the store has no kandev_meta table', 'not_migrated', EXIT.attention);
  const report = await runHealthCheck(db, options);
  // An acknowledgment that moved the checkpoint did what was asked, whatever it accepted.
  const ok = report.status === 'healthy' || (report.checkpoint?.acknowledged ?? false);
  return {
    exitCode: ok ? EXIT.ok : EXIT.attention,
    result: report,
    text: renderHealth(report),
    notes: acknowledgmentNotes(report, options.acknowledgeThrough),
  };
}

/**
 * The check verifies nothing newer than now − grace, so a later `--acknowledge-through` (2030, 2099)
 * moves the checkpoint only that far: said, never silently (issue 25).
 */
function acknowledgmentNotes(report: HealthReport, asked: Micros | undefined): string[] {
  const after = report.checkpoint?.after;
  if (asked === undefined || !report.checkpoint?.acknowledged || after == null) return [];
  if (parseRfc3339(after) === asked) return [];
  return [
    `--acknowledge-through ${formatRfc3339(asked)} is later than now − grace: acknowledged through ${after} instead (the newest instant the check verifies); the shortfall of messages before it is accepted, later ones are checked on the next run`,
  ];
}
