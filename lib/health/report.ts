/** What one health check found (docs/health.md). Timestamps are RFC 3339 UTC with microseconds. */
export type HealthStatus = 'not_activated' | 'shortfall' | 'silent' | 'healthy';

/**
 * `scheduled`: messages created and rows observed in a bounded window that starts at the
 * checkpoint (minus an overlap); `full`: the audit of every message and row since capture_since.
 */
export type HealthKind = 'scheduled' | 'full';

/** A subagent message key with no row since activation, named for triage. */
export interface MissingKey {
  task_session_id: string;
  tool_call_id: string;
}

/**
 * The instants compared: messages created in [from, to); rows observed in [from, to) for the
 * scheduled kind, at or after `from` (= capture_since) for the full audit.
 */
export interface HealthWindow {
  from: string;
  to: string;
}

/** The scheduled kind's checkpoint: before and after this run (docs/health.md). */
export interface CheckpointReport {
  /** null when no run has verified anything yet (the window then starts at capture_since) */
  before: string | null;
  after: string | null;
  /** whether this run moved it (a concurrent run that moved it first wins; this one then writes nothing) */
  moved: boolean;
  /** set when an operator acknowledged the window's shortfall to move the checkpoint past it */
  acknowledged: boolean;
}

/**
 * R3-4: the full audit's comparison of the history before capture_since (the messages the
 * backfill qualifies) with rows: a lost backfill (a re-created table, deleted rows) shows here.
 */
export interface HistoryAudit {
  /** the messages compared: created before this instant (capture_since) */
  before: string;
  /** distinct qualifying message keys created before capture_since with no row at all */
  shortfall: number;
  /** up to MISSING_SAMPLE_SIZE of them, in key order */
  missing: MissingKey[];
}

/**
 * The scheduled kind on a store without the host's idx_messages_metadata_tool_call_id: finding a
 * row's message there means reading every message (the history, not the window), so the run does
 * not compute excess (`excess` is null) and leaves it to the full audit (docs/health.md#two-kinds).
 */
export interface ExcessLeftToAudit {
  /** the host index whose absence it is */
  missingIndex: string;
  /** the same, said for an operator */
  reason: string;
}

export interface HealthReport {
  status: HealthStatus;
  kind: HealthKind;
  /**
   * null when not activated (nothing compared). Scheduled: what this run verified for its
   * checkpoint, possibly in several slices, ending before now − grace while catching up or held
   * behind a shortfall (docs/health.md#catching-up)
   */
  window: HealthWindow | null;
  /**
   * scheduled, when `window` ends before now − grace: the newest traffic (at most one slice),
   * compared too and counted in the figures below, never moving the checkpoint; otherwise null
   */
  recent: HealthWindow | null;
  /** confirmed distinct message keys without a row; null when not activated (comparison not run) */
  shortfall: number | null;
  /**
   * distinct keys of rows observed since capture_since without any subagent message; never alarms.
   * null when not activated, or when `excessLeftToAudit` says the scheduled check left it out
   */
  excess: number | null;
  /** set when this (scheduled) run did not compute excess and why; null when it did, and for the full audit */
  excessLeftToAudit: ExcessLeftToAudit | null;
  /** rows observed since capture_since beyond the first of their (task_session_id, tool_call_id) key */
  collisions: number | null;
  /** MAX(observed_at) of rows at or after capture_since; null when nothing since activation */
  lastObservedAt: string | null;
  /** the capture_since key as an instant; null when absent (or the '' sentinel) */
  captureSince: string | null;
  /** up to MISSING_SAMPLE_SIZE keys of the shortfall, in key order */
  missing: MissingKey[];
  /** scheduled kind only */
  checkpoint: CheckpointReport | null;
  /**
   * full kind: the history before capture_since compared with rows (R3-4); null for the scheduled
   * kind, when not activated, or when the audit was asked to leave it out
   */
  history: HistoryAudit | null;
  /**
   * full kind: the part of `shortfall` an operator has not acknowledged (messages created at or
   * after subagent_context_health_acknowledged_through; all of it when nothing was acknowledged):
   * what the daily audit's alarm watches, with `history.shortfall`. null for the scheduled kind
   */
  unacknowledgedShortfall: number | null;
  /**
   * full kind: qualifying subagent messages whose created_at holds a value that is no instant (R4-3:
   * `'garbage'` on SQLite, `infinity` on PostgreSQL): in no window, never missing, never a failure,
   * but counted here (round 2 leftover, issue 57). null for the scheduled kind (such a message is in
   * no window, and finding one reads every message: the full audit counts them) and when not activated
   */
  unreadableCreatedAt: number | null;
  checkedAt: string;
}

export const MISSING_SAMPLE_SIZE = 20;
