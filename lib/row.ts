import type { RowOf } from './columns.js';
import type { Micros } from './time.js';

export const UNKNOWN_EXECUTION = 'unknown';

export type Source = RowOf<Micros>['source'];

/**
 * One row of `task_session_subagents` as a writer produces it (before `id`/`updated_at`), derived
 * from lib/columns.ts. `last_observed_at` is never NULL here: a frame's own write carries its
 * observed_at (the column is nullable for the host's writer, R2-7).
 */
export type SubagentWrite = Omit<RowOf<Micros>, 'id' | 'updated_at' | 'last_observed_at'> & {
  last_observed_at: Micros;
};

/**
 * A stored row as reads return it; timestamps as RFC 3339 UTC text with microseconds. A stored
 * NULL `last_observed_at` (a row the host wrote) reads as observed_at.
 */
export type SubagentRow = Omit<RowOf<string>, 'last_observed_at'> & { last_observed_at: string };

/** The conflict key, in the UNIQUE constraint's column order. */
export function rowKey(row: Pick<SubagentWrite, 'task_session_id' | 'agent_execution_id' | 'tool_call_id'>): string {
  return JSON.stringify([row.task_session_id, row.agent_execution_id, row.tool_call_id]);
}
