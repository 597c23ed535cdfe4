import type { RowOf } from './columns.js';
import type { Micros } from './time.js';
import type { UsageWrite } from './usage-write.js';

export const UNKNOWN_EXECUTION = 'unknown';

export type Source = RowOf<Micros>['source'];

/**
 * One row of `task_session_subagents` as a writer produces it (before `id`), derived from
 * lib/columns.ts. `last_observed_at` is never NULL here: a frame's own write carries its
 * observed_at (the column is nullable for the host's writer, R2-7). Our writes store `updated_at`
 * = `last_observed_at` (R3-1), so it is not carried twice.
 */
export type SubagentWrite = Omit<RowOf<Micros>, 'id' | 'updated_at' | 'last_observed_at'> & {
  last_observed_at: Micros;
  /** the run usage the frame carried (R6-1), stored in our own table beside the row (R6-2) */
  usage?: UsageWrite;
};

/**
 * A stored row in write form (no `id`), as a merge lands on it: what either writer left (R3-1). On
 * a row the host's writer created `last_observed_at` is NULL and `updated_at` is the host's clock
 * at its latest write. A write of ours held in memory has no `updated_at`: it equals its
 * `last_observed_at` (docs/merge.md#two-writers-one-row).
 */
export type StoredWrite = Omit<SubagentWrite, 'last_observed_at'> & {
  last_observed_at: Micros | null;
  updated_at?: Micros;
};

/**
 * A stored row as reads return it; timestamps as RFC 3339 UTC text with microseconds.
 * `last_observed_at` reads as the row's newest applied observation (R3-1): the stored value (NULL,
 * on a row only the host's writer touched, as observed_at) or `updated_at` when the host's writer
 * wrote the row after us, whichever is later.
 */
export type SubagentRow = Omit<RowOf<string>, 'last_observed_at'> & { last_observed_at: string };

/** The conflict key, in the UNIQUE constraint's column order. */
export function rowKey(row: Pick<SubagentWrite, 'task_session_id' | 'agent_execution_id' | 'tool_call_id'>): string {
  return JSON.stringify([row.task_session_id, row.agent_execution_id, row.tool_call_id]);
}
