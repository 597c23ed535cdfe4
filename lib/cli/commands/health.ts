import type { Queryable } from '../../db/database.js';
import { HealthCheckInterrupted, type HealthCheckOptions, runHealthCheck } from '../../health/check.js';
import type { HealthReport } from '../../health/report.js';
import { hint } from '../../hints.js';
import { missingTables } from '../../store/probe.js';
import { renderFacts, renderTable } from '../../text-table.js';
import { formatRfc3339, type Micros, parseRfc3339 } from '../../time.js';
import { humanDuration } from '../../units.js';
import { EXIT } from '../exit-codes.js';
import { cliFailure } from '../failure.js';
import { Interrupted } from '../interrupt.js';
import type { CommandResult } from '../io.js';
import { requireHostStore } from '../preflight.js';

/** What a status other than healthy means, beside it (README "Reading the output"). */
const STATUS_MEANING: Partial<Record<HealthReport['status'], string>> = {
  silent: 'no row observed since activation: is the producer sending?',
  shortfall: 'subagent messages without a row; see missing below',
};

/** A non-zero figure with its meaning beside it; 0 and null (not compared) stand alone. */
function explained(value: number | null, meaning: string): string | number | null {
  return value === null || value === 0 ? value : `${value.toLocaleString('en-US')} (${meaning})`;
}

/**
 * Issue 51: a scheduled run's collisions are those of rows observed in its window (which reaches
 * back HEALTH_OVERLAP_SECONDS before the checkpoint), so a later run whose window no longer holds
 * the row reads 0 without any change; the full audit counts every one since capture_since. The
 * text says which, so two figures in a row are not read as one count changing.
 */
function collisionsText(report: HealthReport): string | number | null {
  const meaning = 'rows beyond the first for one (task_session_id, tool_call_id) key';
  if (report.collisions === null) return null;
  if (report.kind === 'full') return explained(report.collisions, `${meaning}, since capture_since`);
  const scope =
    'observed in this window only, which reaches back HEALTH_OVERLAP_SECONDS before the checkpoint; a later window may no longer hold them; --full counts every one since capture_since';
  return `${report.collisions.toLocaleString('en-US')} (${report.collisions === 0 ? '' : `${meaning}, `}${scope})`;
}

/**
 * R4-3 (round 2 leftover, issue 57): messages whose created_at is no instant are in no window; the
 * full audit counts them (the scheduled check does not, and its JSON says null). Never a failure.
 */
function unreadableCreatedText(count: number): string | number | null {
  return explained(
    count,
    'subagent messages whose created_at is not an instant: in no window, never missing; correct them in task_session_messages',
  );
}

/** What the text says besides the report: the grace this run used (the report does not carry it). */
export interface HealthRenderContext {
  graceSeconds: number;
}

const instant = (text: string | null | undefined) => (text == null ? undefined : parseRfc3339(text));

/** `900 s (15 min)`: the grace as the flag takes it and as a person reads it. */
const graceText = (seconds: number) => `${seconds} s${seconds >= 60 ? ` (${humanDuration(seconds * 1000)})` : ''}`;

/**
 * A window of zero length: everything since its start is younger than the grace, so there was
 * nothing to compare yet (a store activated minutes ago); said with the grace and its flag, for the
 * scheduled check and the full audit alike (issue 58 #19).
 */
function emptyWindow(report: HealthReport): boolean {
  return report.window !== null && report.window.from === report.window.to;
}

/** The full audit's shortfall: the part an operator acknowledged and the part still open. */
function shortfallText(report: HealthReport): string | number | null {
  const open = report.unacknowledgedShortfall;
  if (report.shortfall === null || report.shortfall === 0 || open === null) return report.shortfall;
  return `${report.shortfall.toLocaleString('en-US')} (acknowledged ${(report.shortfall - open).toLocaleString('en-US')}, open ${open.toLocaleString('en-US')})`;
}

/** Whether every shortfall this audit found was acknowledged and the history lost nothing. */
export function allAcknowledged(report: HealthReport): boolean {
  return (
    report.kind === 'full' &&
    report.status === 'shortfall' &&
    report.unacknowledgedShortfall === 0 &&
    (report.history?.shortfall ?? 0) === 0
  );
}

export function renderHealth(report: HealthReport, ctx: HealthRenderContext): string {
  const status = allAcknowledged(report)
    ? 'shortfall (all of it acknowledged: nothing open)'
    : STATUS_MEANING[report.status]
      ? `${report.status} (${STATUS_MEANING[report.status]})`
      : report.status;
  const facts = renderFacts([
    ['status', status],
    ['kind', report.kind === 'full' ? 'full audit since capture_since' : 'scheduled window'],
    [
      'window',
      report.window === null
        ? null
        : emptyWindow(report)
          ? `${report.window.from} … ${report.window.to} (empty: nothing is older than the grace of ${graceText(ctx.graceSeconds)} yet; --grace-seconds sets it)`
          : `${report.window.from} … ${report.window.to}`,
    ],
    ...(report.recent === null
      ? []
      : ([
          ['recent traffic', `${report.recent.from} … ${report.recent.to} (also compared; the checkpoint is behind)`],
        ] as const)),
    ['shortfall', shortfallText(report)],
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
    ['collisions', collisionsText(report)],
    // counted by the full audit only (the JSON's null says the scheduled check did not count them)
    ...(report.unreadableCreatedAt === null
      ? []
      : ([['unreadable created_at', unreadableCreatedText(report.unreadableCreatedAt)]] as const)),
    ['last observed', report.lastObservedAt],
    ['capture_since', report.captureSince],
    ['checkpoint', checkpointText(report, ctx)],
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

function checkpointText(report: HealthReport, ctx: HealthRenderContext): string | null {
  const c = report.checkpoint;
  if (c === null) return null;
  if (!c.moved) {
    const why = emptyWindow(report)
      ? `the window is empty: the store is younger than the grace of ${graceText(ctx.graceSeconds)} (--grace-seconds)`
      : (report.shortfall ?? 0) > 0
        ? 'a shortfall holds it'
        : 'nothing new verified, or another run moved it first';
    return `${c.after ?? '(none yet)'} (not moved: ${why})`;
  }
  const before = instant(c.before);
  const after = instant(c.after);
  // The checkpoint moves back to a late message before it that has no row (docs/health.md): said as such.
  if (before !== undefined && after !== undefined && after < before)
    return `${c.after} (moved back from ${c.before}: a message before it has no row yet)`;
  return `${c.before ?? '(none)'} → ${c.after}${c.acknowledged ? ' (acknowledged: the shortfall above is accepted)' : ''}`;
}

/** `subagent-context health`: exit 0 only when healthy; not_activated, silent and shortfall exit 3. */
export async function healthCommand(db: Queryable, options: HealthCheckOptions): Promise<CommandResult<HealthReport>> {
  await requireHostStore(db);
  if ((await missingTables(db, ['kandev_meta'])).length > 0)
    throw cliFailure('not_activated: the store has no kandev_meta table', 'not_migrated', EXIT.attention);
  const report = await runHealthCheck(db, options).catch((err: unknown) => {
    if (err instanceof HealthCheckInterrupted) throw interruptedHealth(err);
    throw err;
  });
  // An acknowledgment that moved the checkpoint did what was asked, whatever it accepted; a full
  // audit whose whole shortfall was acknowledged has nothing open (its alarm watches the open part).
  const ok = report.status === 'healthy' || (report.checkpoint?.acknowledged ?? false) || allAcknowledged(report);
  return {
    exitCode: ok ? EXIT.ok : EXIT.attention,
    result: report,
    text: renderHealth(report, { graceSeconds: options.graceSeconds }),
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

/** Ctrl-C at the check's boundary (issue 58 #11): whether a checkpoint was written, and what to run next. */
function interruptedHealth(err: HealthCheckInterrupted): Interrupted {
  const c = err.checkpoint;
  if (c === null)
    return new Interrupted('health --full stopped before its result; it wrote nothing', 'run the same command again');
  if (c.moved)
    return new Interrupted(
      `health stopped between slices: the checkpoint moved from ${c.before ?? '(none)'} to ${c.after} for the slices verified before Ctrl-C; no later checkpoint was written`,
      'run the same command again to verify the rest',
    );
  return new Interrupted(
    `health stopped before writing its checkpoint: no checkpoint was written (${c.after === null ? 'there is none yet' : `it stands at ${c.after}`})`,
    'run the same command again',
  );
}
