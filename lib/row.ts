import type { Micros } from './time.js';

export const UNKNOWN_EXECUTION = 'unknown';

export type Source = 'live' | 'backfill';

/** One row of `task_session_subagents` as a writer produces it (before `id`/`updated_at`). */
export interface SubagentWrite {
  task_session_id: string;
  task_id: string;
  turn_id: string | null;
  tool_call_id: string;
  agent_execution_id: string;
  parent_tool_call_id: string | null;
  subagent_type: string | null;
  description: string | null;
  agent_id: string | null;
  child_session_id: string | null;
  model: string | null;
  agent_status: string | null;
  tool_status: string | null;
  is_async: 0 | 1;
  total_tokens: number | null;
  tool_use_count: number | null;
  duration_ms: number | null;
  source: Source;
  observed_at: Micros;
  settled_at: Micros | null;
  /** the newest observation applied to the row (R2-7); a frame's own write carries its observed_at */
  last_observed_at: Micros;
}

/** A stored row as reads return it; timestamps as RFC 3339 UTC text with microseconds. */
export interface SubagentRow
  extends Omit<SubagentWrite, 'observed_at' | 'settled_at' | 'last_observed_at'> {
  id: string;
  observed_at: string;
  settled_at: string | null;
  /** a stored NULL (a row the host wrote) reads as observed_at */
  last_observed_at: string;
  updated_at: string;
}

/** The conflict key, in the UNIQUE constraint's column order. */
export function rowKey(row: Pick<SubagentWrite, 'task_session_id' | 'agent_execution_id' | 'tool_call_id'>): string {
  return JSON.stringify([row.task_session_id, row.agent_execution_id, row.tool_call_id]);
}
