/** What one health check found (docs/health.md). Timestamps are RFC 3339 UTC with microseconds. */
export type HealthStatus = 'not_activated' | 'shortfall' | 'silent' | 'healthy';

/** A subagent message key with no row since activation, named for triage. */
export interface MissingKey {
  task_session_id: string;
  tool_call_id: string;
}

export interface HealthReport {
  status: HealthStatus;
  /** confirmed distinct message keys without a row; null when not activated (comparison not run) */
  shortfall: number | null;
  /** distinct row keys without any subagent message; reported, never alarms */
  excess: number | null;
  /** rows − distinct (task_session_id, tool_call_id) keys: cross-execution reuse */
  collisions: number | null;
  /** MAX(observed_at) of rows at or after capture_since; null when nothing since activation */
  lastObservedAt: string | null;
  /** the capture_since key as an instant; null when absent (or the '' sentinel) */
  captureSince: string | null;
  /** up to MISSING_SAMPLE_SIZE keys of the shortfall, in key order */
  missing: MissingKey[];
  checkedAt: string;
}

export const MISSING_SAMPLE_SIZE = 20;
