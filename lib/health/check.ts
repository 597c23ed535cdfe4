import { setTimeout as sleep } from 'node:timers/promises';
import { interruptedAtBoundary } from '../boundary.js';
import type { Queryable } from '../db/database.js';
import { HEALTH_MIN_CATCH_UP_SECONDS, HEALTH_MIN_WINDOW_SECONDS } from '../defaults.js';
import { SubagentContextError } from '../errors.js';
import { CAPTURE_SINCE_KEY, readMetaKeys } from '../store/meta.js';
import { forReading, HOST_TOOL_CALL_INDEX } from '../store/reading.js';
import { quoteHostValue } from '../text.js';
import {
  earliestOf,
  formatCanonical,
  formatKey,
  formatRfc3339,
  latestOf,
  type Micros,
  nowMicros,
  parseStoredTimestamp,
} from '../time.js';
import { type Checkpoint, compareAndSetCheckpoint, readCheckpoint, recordAcknowledgment } from './checkpoint.js';
import {
  DEFAULT_CATCH_UP_SECONDS,
  DEFAULT_CONFIRM_DELAY_SECONDS,
  DEFAULT_MAX_WINDOW_SECONDS,
  DEFAULT_OVERLAP_SECONDS,
} from './config.js';
import {
  excessSql,
  historyShortfallSql,
  rowFactsSql,
  shortfallSql,
  unreadableCreatedSql,
  windowStatements,
} from './queries.js';
import {
  type CheckpointReport,
  type ExcessLeftToAudit,
  type HealthKind,
  type HealthReport,
  type HealthStatus,
  type HealthWindow,
  type HistoryAudit,
  MISSING_SAMPLE_SIZE,
  type MissingKey,
} from './report.js';

export interface HealthCheckOptions {
  /** messages newer than this are not yet expected to have rows (frames wait in the queue) */
  graceSeconds: number;
  /** `scheduled` (default): the window from the checkpoint; `full`: the audit since capture_since */
  kind?: HealthKind;
  /** scheduled: how far before the checkpoint each window starts again; default DEFAULT_OVERLAP_SECONDS */
  overlapSeconds?: number;
  /**
   * scheduled: an operator's acknowledgment — the window ends here (at most now − grace) and the
   * checkpoint moves to its end whatever the window's shortfall; the report names what was acknowledged
   */
  acknowledgeThrough?: Micros;
  /**
   * scheduled: the longest slice one evaluation covers; a longer window is verified slice by slice,
   * the checkpoint moving after each (docs/health.md#catching-up). Default DEFAULT_MAX_WINDOW_SECONDS
   */
  maxWindowSeconds?: number;
  /** scheduled: no further slice starts after this long; default DEFAULT_CATCH_UP_SECONDS */
  catchUpSeconds?: number;
  /**
   * full: also compare the history before capture_since with rows (R3-4, default true); one more
   * pass over the messages created before it
   */
  history?: boolean;
  /** the check's clock; defaults to the process clock */
  now?: Micros;
  /** pause between a non-zero shortfall and its re-evaluation (AC-28b); default DEFAULT_CONFIRM_DELAY_SECONDS */
  confirmDelayMs?: number;
  /** replaces that pause (tests make the in-flight write land here) */
  beforeConfirm?: () => Promise<void>;
  /** runs between the evaluation and the checkpoint's compare-and-set (tests race runs here) */
  beforeCheckpoint?: () => Promise<void>;
  /**
   * Ctrl-C (the CLI's interrupt, issue 58 #11): the confirmation pause ends at once, and the check
   * stops before its next checkpoint write (and the full audit after its evaluation), after a turn
   * of the event loop so a signal that came during a synchronous SQLite statement is seen there
   * too: it throws HealthCheckInterrupted naming the checkpoint the slices before it wrote.
   */
  signal?: AbortSignal;
}

/** The check stopped at a boundary because `signal` aborted (Ctrl-C); not a failure. */
export class HealthCheckInterrupted extends SubagentContextError {
  override readonly name = 'HealthCheckInterrupted';
  constructor(
    /** the checkpoint as this run left it: moved by the slices verified before it stopped, or not (null: the full audit, which has none) */
    readonly checkpoint: CheckpointReport | null,
  ) {
    super(
      checkpoint?.moved
        ? `the health check stopped between slices; the checkpoint moved from ${checkpoint.before ?? '(none)'} to ${checkpoint.after}`
        : 'the health check stopped before writing a checkpoint',
    );
  }
}

/** Throws HealthCheckInterrupted at a boundary once `signal` aborted (a turn of the event loop first). */
async function stopIfAsked(signal: AbortSignal | undefined, checkpoint: () => CheckpointReport | null): Promise<void> {
  if (await interruptedAtBoundary(signal)) throw new HealthCheckInterrupted(checkpoint());
}

export class HealthCheckError extends SubagentContextError {
  override readonly name = 'HealthCheckError';
  constructor(
    message: string,
    readonly key: string,
    readonly value: string,
  ) {
    super(message);
  }
}

interface Findings {
  shortfall: number;
  missing: MissingKey[];
  /** creation of the earliest message of a missing key; undefined when none is missing */
  earliestMissing: Micros | undefined;
  /** null: not computed (a scheduled window on a store without the host's tool_call_id index) */
  excess: number | null;
  collisions: number;
  lastObserved: Micros | undefined;
}

const MICROS_PER_SECOND = 1_000_000n;

/** What a scheduled run on a store without the host's metadata index says about excess (issue 26). */
const EXCESS_LEFT_TO_AUDIT: ExcessLeftToAudit = {
  missingIndex: HOST_TOOL_CALL_INDEX,
  reason:
    `not computed by the scheduled check: without the host's index ${HOST_TOOL_CALL_INDEX} on task_session_messages, ` +
    "finding a row's message reads every message; the full audit (daily, or `subagent-context health --full`) counts it",
};
const seconds = (s: number): Micros => BigInt(Math.round(s * 1_000_000));
const stored = (value: unknown): Micros | undefined =>
  value === null || value === undefined ? undefined : parseStoredTimestamp(String(value));

/**
 * docs/health.md: compares the host's subagent messages since activation with our rows. Never
 * nets the two directions into one number: shortfall alarms, excess and collisions are reported.
 */
export async function runHealthCheck(db: Queryable, options: HealthCheckOptions): Promise<HealthReport> {
  const { graceSeconds } = options;
  if (!Number.isFinite(graceSeconds) || graceSeconds < 0) {
    throw new RangeError(`graceSeconds must be a non-negative number of seconds (got ${graceSeconds})`);
  }
  const overlapSeconds = options.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
  if (!Number.isFinite(overlapSeconds) || overlapSeconds < 0) {
    throw new RangeError(`overlapSeconds must be a non-negative number of seconds (got ${overlapSeconds})`);
  }
  catchUpLimits(options); // D9: every setting is refused before anything is read, whichever path runs
  const kind = options.kind ?? 'scheduled';
  if (kind === 'full' && options.acknowledgeThrough !== undefined) {
    throw new RangeError(
      "an acknowledgment moves the scheduled check's checkpoint; the full audit has none (drop --full)",
    );
  }
  const now = options.now ?? nowMicros();
  const checkedAt = formatRfc3339(now);
  const captureSince = activationInstant((await readMetaKeys(db)).captureSince);
  if (captureSince === undefined) {
    // The missing key is the signal (AC-28a): without an activation instant there is nothing to compare.
    return {
      status: 'not_activated',
      kind,
      window: null,
      recent: null,
      shortfall: null,
      excess: null,
      excessLeftToAudit: null,
      collisions: null,
      lastObservedAt: null,
      captureSince: null,
      missing: [],
      checkpoint: null,
      history: null,
      unacknowledgedShortfall: null,
      unreadableCreatedAt: null,
      checkedAt,
    };
  }
  // R3-3: a store the host activated has nothing of ours yet; read it the way it can be read.
  const reader = await forReading(db);
  const cutoff = now - seconds(graceSeconds);
  const { signal } = options;
  const confirm =
    options.beforeConfirm ??
    // Ctrl-C ends the pause (AbortError): the boundary after it says where the check stands
    (() =>
      sleep(options.confirmDelayMs ?? DEFAULT_CONFIRM_DELAY_SECONDS * 1000, undefined, { signal }).catch((err) => {
        if (!signal?.aborted) throw err;
      }));

  let from: Micros;
  let to: Micros;
  let findings: Findings;
  let checkpoint: CheckpointReport | null = null;
  let recent: HealthWindow | null = null;
  let history: HistoryAudit | null = null;
  let unacknowledgedShortfall: number | null = null;
  let unreadableCreatedAt: number | null = null;
  let excessLeftToAudit: ExcessLeftToAudit | null = null;
  if (kind === 'full') {
    from = captureSince;
    to = cutoff > from ? cutoff : from;
    const since = captureSince;
    [findings, history, unreadableCreatedAt] = await Promise.all([
      confirmed(() => evaluateFull(reader, since, to), confirm, signal),
      options.history === false ? null : auditHistory(reader, since),
      countUnreadableCreated(reader),
    ]);
    await stopIfAsked(signal, () => null);
    unacknowledgedShortfall = await unacknowledged(reader, since, to, findings.shortfall);
  } else {
    const before = await readCheckpoint(db);
    from = windowStart(captureSince, before, seconds(overlapSeconds));
    to =
      options.acknowledgeThrough !== undefined && options.acknowledgeThrough < cutoff
        ? options.acknowledgeThrough
        : cutoff;
    if (to < from) to = from;
    const hostIndex = reader.facts.hostToolCallIndex;
    if (!hostIndex) excessLeftToAudit = EXCESS_LEFT_TO_AUDIT;
    const evaluate = (lo: Micros, hi: Micros) =>
      confirmed(() => evaluateWindow(reader, captureSince, lo, hi, hostIndex), confirm, signal);
    if (options.acknowledgeThrough !== undefined) {
      // Name the instant the operator typed, not the window edge it was raised to (issue 25).
      const asked = formatRfc3339(options.acknowledgeThrough);
      if (before.at !== undefined && to <= before.at) {
        throw new RangeError(
          `nothing to acknowledge: the checkpoint already stands at ${formatRfc3339(before.at)}, at or after ${asked}; the checkpoint was not moved`,
        );
      }
      if (options.acknowledgeThrough <= from) {
        throw new RangeError(
          `nothing to acknowledge: ${asked} is at or before the window's start ${formatRfc3339(from)} (capture_since ${formatRfc3339(captureSince)}); the checkpoint was not moved`,
        );
      }
      // An operator's command: the whole acknowledged window at once, so the report names all it accepts.
      findings = await evaluate(from, to);
      await options.beforeCheckpoint?.();
      await stopIfAsked(signal, () => unmoved(before));
      checkpoint = await advanceCheckpoint(db, before, to, findings, true);
    } else {
      const limits = catchUpLimits(options);
      const run = await verifyInSlices(db, before, from, to, limits, evaluate, options.beforeCheckpoint, signal);
      ({ findings, checkpoint } = run);
      // Held behind a shortfall or out of catch-up time: the newest traffic is still compared, so a
      // new loss shows now, not once the checkpoint gets there (docs/health.md#catching-up).
      if (run.verifiedTo < to) {
        const recentFrom = latestOf(to - limits.maxWindow, run.verifiedTo);
        findings = add(findings, await evaluate(recentFrom, to));
        recent = { from: formatRfc3339(recentFrom), to: formatRfc3339(to) };
      }
      to = run.verifiedTo;
    }
  }

  const lost = findings.shortfall > 0 || (history?.shortfall ?? 0) > 0;
  const status: HealthStatus = lost ? 'shortfall' : findings.lastObserved === undefined ? 'silent' : 'healthy';
  return {
    status,
    kind,
    window: { from: formatRfc3339(from), to: formatRfc3339(to) },
    recent,
    shortfall: findings.shortfall,
    excess: findings.excess,
    excessLeftToAudit,
    collisions: findings.collisions,
    lastObservedAt: findings.lastObserved === undefined ? null : formatRfc3339(findings.lastObserved),
    captureSince: formatRfc3339(captureSince),
    missing: findings.missing,
    checkpoint,
    history,
    unacknowledgedShortfall,
    unreadableCreatedAt,
    checkedAt,
  };
}

/** R4-3: the qualifying messages whose created_at is no instant (the full audit's count of them). */
async function countUnreadableCreated(db: Queryable): Promise<number> {
  const rows = await db.query<{ unreadable: number | string }>(unreadableCreatedSql(db.dialect));
  return Number(rows[0]?.unreadable ?? 0);
}

/**
 * The audit's shortfall less what an operator acknowledged (messages created before
 * subagent_context_health_acknowledged_through): one more statement, only when there is an
 * acknowledgment and a shortfall, so an accepted loss does not hold the audit's alarm forever.
 */
async function unacknowledged(db: Queryable, since: Micros, cutoff: Micros, shortfall: number): Promise<number> {
  if (shortfall === 0) return 0;
  const acknowledged = (await readCheckpoint(db)).acknowledgedThrough;
  if (acknowledged === undefined || acknowledged <= since) return shortfall;
  const rows = await db.query<{ total: number | string }>(shortfallSql(db.dialect, { messagesFrom: 3 }), [
    formatCanonical(since),
    formatCanonical(cutoff),
    formatCanonical(acknowledged),
  ]);
  return Number(rows[0]?.total ?? 0);
}

/**
 * R3-4: the messages the backfill qualifies (created before capture_since) with no row. Nothing
 * in flight can change it (frames are for new messages), so it needs no confirmation.
 */
export async function auditHistory(db: Queryable, captureSince: Micros): Promise<HistoryAudit> {
  const rows = await db.query<{ task_session_id: string; tool_call_id: string; total: number | string }>(
    historyShortfallSql(db.dialect),
    [formatCanonical(captureSince)],
  );
  return {
    before: formatRfc3339(captureSince),
    shortfall: Number(rows[0]?.total ?? 0),
    missing: rows.map(({ task_session_id, tool_call_id }) => ({ task_session_id, tool_call_id })),
  };
}

/**
 * A batch still being written when the first statement read its snapshot is not a loss, so a
 * non-zero shortfall is taken again after a pause and only that evaluation counts (AC-28b).
 */
async function confirmed(
  evaluate: () => Promise<Findings>,
  pause: () => Promise<void>,
  signal: AbortSignal | undefined,
): Promise<Findings> {
  const first = await evaluate();
  if (first.shortfall === 0) return first;
  await pause();
  // Ctrl-C ended the pause: the next boundary stops the check, so the evaluation is not run again
  if (signal?.aborted) return first;
  return evaluate();
}

/**
 * The checkpoint minus the overlap (late commits near its edge are seen again), never before
 * capture_since nor before an acknowledgment.
 */
function windowStart(captureSince: Micros, checkpoint: Checkpoint, overlap: Micros): Micros {
  const candidates = [
    captureSince,
    checkpoint.acknowledgedThrough,
    checkpoint.at === undefined ? undefined : checkpoint.at - overlap,
  ];
  return candidates.reduce<Micros>((latest, c) => (c !== undefined && c > latest ? c : latest), captureSince);
}

async function evaluateFull(db: Queryable, since: Micros, cutoff: Micros): Promise<Findings> {
  const { dialect } = db;
  const params = [formatCanonical(since)];
  // Independent statements: on PostgreSQL they run side by side on pooled connections.
  const [shortfallRows, excessRows, factRows] = await Promise.all([
    db.query<{ task_session_id: string; tool_call_id: string; total: number }>(shortfallSql(dialect), [
      ...params,
      formatCanonical(cutoff),
    ]),
    db.query<{ excess: number }>(excessSql(dialect), params),
    db.query<{ row_count: number; key_count: number; last_observed: string | null }>(rowFactsSql(dialect), params),
  ]);
  const facts = factRows[0]!;
  return {
    shortfall: Number(shortfallRows[0]?.total ?? 0),
    missing: shortfallRows.map(({ task_session_id, tool_call_id }) => ({ task_session_id, tool_call_id })),
    earliestMissing: undefined,
    excess: Number(excessRows[0]!.excess),
    collisions: Number(facts.row_count) - Number(facts.key_count),
    lastObserved: stored(facts.last_observed),
  };
}

async function evaluateWindow(
  db: Queryable,
  since: Micros,
  from: Micros,
  to: Micros,
  hostIndex: boolean,
): Promise<Findings> {
  const statements = windowStatements(db.dialect, hostIndex);
  const params = [formatCanonical(since), formatCanonical(from), formatCanonical(to)];
  const [shortfallRows, excessRows, collisionRows, lastRows] = await Promise.all([
    db.query<{ task_session_id: string; tool_call_id: string; total: number; earliest: string }>(
      statements.shortfall,
      params,
    ),
    // Without the host's index there is no excess statement that reads only the window (issue 26).
    statements.excess === null ? null : db.query<{ excess: number }>(statements.excess, params),
    db.query<{ collisions: number }>(statements.collisions, params),
    db.query<Record<string, unknown>>(statements.lastObserved, [params[0]]),
  ]);
  const last = lastRows[0];
  return {
    shortfall: Number(shortfallRows[0]?.total ?? 0),
    missing: shortfallRows.map(({ task_session_id, tool_call_id }) => ({ task_session_id, tool_call_id })),
    earliestMissing: stored(shortfallRows[0]?.earliest),
    excess: excessRows === null ? null : Number(excessRows[0]!.excess),
    collisions: Number(collisionRows[0]!.collisions),
    lastObserved: last === undefined ? undefined : stored(Object.values(last)[0]),
  };
}

interface CatchUpLimits {
  maxWindow: Micros;
  /** epoch ms after which no further slice starts */
  startBy: number;
}

function catchUpLimits(options: HealthCheckOptions): CatchUpLimits {
  // D9: floors, so no setting turns the check off silently (every window empty, the checkpoint still)
  const maxWindowSeconds = options.maxWindowSeconds ?? DEFAULT_MAX_WINDOW_SECONDS;
  if (!Number.isFinite(maxWindowSeconds) || maxWindowSeconds < HEALTH_MIN_WINDOW_SECONDS) {
    throw new RangeError(
      `maxWindowSeconds must be at least ${HEALTH_MIN_WINDOW_SECONDS} seconds (got ${maxWindowSeconds})`,
    );
  }
  const catchUpSeconds = options.catchUpSeconds ?? DEFAULT_CATCH_UP_SECONDS;
  if (
    !Number.isFinite(catchUpSeconds) ||
    catchUpSeconds < 0 ||
    (catchUpSeconds > 0 && catchUpSeconds < HEALTH_MIN_CATCH_UP_SECONDS)
  ) {
    throw new RangeError(
      `catchUpSeconds must be 0 (one slice per run) or at least ${HEALTH_MIN_CATCH_UP_SECONDS} second (got ${catchUpSeconds})`,
    );
  }
  return { maxWindow: seconds(maxWindowSeconds), startBy: Date.now() + catchUpSeconds * 1000 };
}

interface SlicedRun {
  findings: Findings;
  checkpoint: CheckpointReport;
  /** the end of the last slice evaluated: [from, verifiedTo) was compared */
  verifiedTo: Micros;
}

/**
 * docs/health.md#catching-up: [from, to) in consecutive slices of at most maxWindow, each
 * evaluated and then written to the checkpoint by compare-and-set, so every statement costs one
 * slice, not the history, and a run that stops (time, failure) keeps what it verified. Stops after
 * a slice with a shortfall (the checkpoint stays right before it: the next slice would start there
 * again), when another run moved the checkpoint, or when the catch-up time is spent. Excess and
 * collisions add up over slices: each counts a row in the one slice it is observed in.
 */
async function verifyInSlices(
  db: Queryable,
  initial: Checkpoint,
  from: Micros,
  to: Micros,
  limits: CatchUpLimits,
  evaluate: (lo: Micros, hi: Micros) => Promise<Findings>,
  beforeCheckpoint: (() => Promise<void>) | undefined,
  signal: AbortSignal | undefined,
): Promise<SlicedRun> {
  const initialBefore = initial.at === undefined ? null : formatRfc3339(initial.at);
  let before = initial;
  let findings: Findings | undefined;
  let moved = false;
  for (let lo = from; ; ) {
    const hi = to - lo > limits.maxWindow ? lo + limits.maxWindow : to;
    const slice = await evaluate(lo, hi);
    findings = findings === undefined ? slice : add(findings, slice);
    await beforeCheckpoint?.();
    await stopIfAsked(signal, () =>
      moved ? { ...unmoved(before), before: initialBefore, moved: true } : unmoved(initial),
    );
    const written = await advanceCheckpoint(db, before, hi, slice, false);
    moved ||= written.moved;
    const done = hi >= to || slice.shortfall > 0 || !written.moved || Date.now() >= limits.startBy;
    if (done) return { findings, checkpoint: { ...written, before: initialBefore, moved }, verifiedTo: hi };
    // The value this run just wrote, byte for byte: the next slice's compare-and-set expects it.
    const after = parseStoredTimestamp(written.after!)!;
    before = { raw: formatKey(after), at: after, acknowledgedThrough: before.acknowledgedThrough };
    lo = hi;
  }
}

/** The checkpoint report of a run that wrote nothing (more): it stands at `at`. */
function unmoved(at: Checkpoint): CheckpointReport {
  const stands = at.at === undefined ? null : formatRfc3339(at.at);
  return { before: stands, after: stands, moved: false, acknowledged: false };
}

/** Findings of two disjoint ranges (a row or message is in at most one of them). */
function add(a: Findings, b: Findings): Findings {
  const earliest = [a.earliestMissing, b.earliestMissing].filter((x): x is Micros => x !== undefined);
  const keys = new Map([...a.missing, ...b.missing].map((k) => [`${k.task_session_id}\u0000${k.tool_call_id}`, k]));
  return {
    shortfall: a.shortfall + b.shortfall,
    missing: [...keys.entries()]
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))
      .slice(0, MISSING_SAMPLE_SIZE)
      .map(([, k]) => k),
    earliestMissing: earliest.length === 0 ? undefined : earliest.reduce(earliestOf),
    // Every slice of one run reads the same store: both computed, or both left to the audit.
    excess: a.excess === null || b.excess === null ? null : a.excess + b.excess,
    collisions: a.collisions + b.collisions,
    lastObserved: b.lastObserved ?? a.lastObserved,
  };
}

/**
 * Where the checkpoint goes after a window [from, to): to `to` when every message of the window
 * has a row; to the earliest message of a missing key when one has none (everything before it
 * was verified, it and everything after stays in the next window); to `to` on an acknowledgment.
 * It moves back when a late message before it turns out missing (seen thanks to the overlap).
 */
async function advanceCheckpoint(
  db: Queryable,
  before: Checkpoint,
  to: Micros,
  findings: Findings,
  acknowledged: boolean,
): Promise<CheckpointReport> {
  let next: Micros;
  if (acknowledged) next = to;
  else if (findings.earliestMissing !== undefined) next = findings.earliestMissing;
  // A clean window ending before the checkpoint (a longer grace than last run's) never moves it back.
  else next = before.at !== undefined && before.at > to ? before.at : to;
  const report = (after: Micros | undefined, moved: boolean): CheckpointReport => ({
    before: before.at === undefined ? null : formatRfc3339(before.at),
    after: after === undefined ? null : formatRfc3339(after),
    moved,
    acknowledged: acknowledged && moved,
  });
  if (next === before.at) return report(before.at, false);
  if (await compareAndSetCheckpoint(db, before, next)) {
    // Only once the checkpoint is ours: a run that lost the race acknowledges nothing.
    if (acknowledged) await recordAcknowledgment(db, next);
    return report(next, true);
  }
  // Another run moved it first; its value stands. Report what is stored now.
  return report((await readCheckpoint(db)).at, false);
}

/** Seconds from the checkpoint (or capture_since before the first verified window) to the check. */
export function checkpointLagSeconds(report: HealthReport): number | undefined {
  if (report.checkpoint === null || report.captureSince === null) return undefined;
  const from = parseStoredTimestamp(report.checkpoint.after ?? report.captureSince)!;
  const lag = parseStoredTimestamp(report.checkedAt)! - from;
  return lag > 0n ? Number(lag / MICROS_PER_SECOND) : 0;
}

/** The capture_since key as an instant; absent or the '' sentinel (never parsed, AC-24f) → undefined. */
function activationInstant(value: string | undefined): Micros | undefined {
  if (value === undefined || value === '') return undefined;
  const us = parseStoredTimestamp(value);
  if (us === undefined) {
    throw new HealthCheckError(
      `kandev_meta key ${CAPTURE_SINCE_KEY} holds ${quoteHostValue(value)}, which is not an RFC 3339 instant; ` +
        `set it to the activation time (e.g. 2026-08-12T13:24:58.123456000Z) or delete it and re-invoke migrate`,
      CAPTURE_SINCE_KEY,
      value,
    );
  }
  return us;
}
