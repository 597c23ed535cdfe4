/**
 * Per-invocation counts (docs/ingest.md). Every valid frame delivered is exactly one of
 * skipped_no_identity, persisted or failed, so attempted = skipped_no_identity + persisted + failed.
 * `failed` covers every valid frame not persisted this time: redelivered (transient, or behind an
 * earlier failure in its group), orphaned (deleted session) or parked (rejected write).
 * Qualifiers: orphaned ⊆ failed; system_error ⊆ failed counts frames kept on the queue because
 * the database is unusable (R2-4: the alarm's input); anomalous_value and unknown_execution count persisted frames;
 * invalid frames are not attempted.
 */
export const COUNTERS = [
  'attempted',
  'persisted',
  'skipped_no_identity',
  'failed',
  'anomalous_value',
  'unknown_execution',
  'invalid',
  'orphaned',
  'system_error',
] as const;

export type CounterName = (typeof COUNTERS)[number];

export interface BatchReport {
  counts: Record<CounterName, number>;
  /** updated_at − observed_at of each persisted frame, in milliseconds */
  lagMs: number[];
  /** database statements the batch cost */
  roundTrips: number;
}

export function emptyCounts(): Record<CounterName, number> {
  return Object.fromEntries(COUNTERS.map((name) => [name, 0])) as Record<CounterName, number>;
}
