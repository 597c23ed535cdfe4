/*
 * The frame a host records (docs/frame.md, schema/frame.v1.schema.json), as a plain TypeScript
 * type, so the producer package's declarations need no schema library (issue 51). The consumer's
 * schema (lib/frame/schema.ts) stays the one authority: test/lib/producer/frame-type.test.ts fails
 * when the two differ.
 */

import type { RunUsage } from './usage/run-usage.js';

/** The host's normalized subagent payload; `prompt`, `result_text` and `output_file` are never stored (the producer leaves them out). */
export interface SubagentTask {
  description?: string | null;
  prompt?: string | null;
  subagent_type?: string | null;
  status?: string | null;
  agent_id?: string | null;
  model?: string | null;
  child_session_id?: string | null;
  result_text?: string | null;
  output_file?: string | null;
  /** non-negative integers; a value the host's INTEGER column cannot hold is stored as NULL */
  duration_ms?: number | null;
  total_tokens?: number | null;
  tool_use_count?: number | null;
  is_async?: boolean | null;
  can_read_output_file?: boolean | null;
  /** the subagent's whole run as its agent recorded it (R6-1, docs/spend.md); never one request's figures */
  usage?: RunUsage | null;
}

/** One frame of schema/frame.v1.schema.json: one subagent invocation as the host saw it at `observed_at`. */
export interface Frame {
  version: 1;
  /** an empty, null or absent identity skips the frame (nothing to key a row on) */
  task_session_id?: string | null;
  task_id?: string | null;
  tool_call_id?: string | null;
  turn_id?: string | null;
  parent_tool_call_id?: string | null;
  execution_id?: string | null;
  tool_status?: string | null;
  /** an RFC 3339 instant, e.g. 2026-08-12T13:24:58.123Z */
  observed_at: string;
  subagent_task: SubagentTask;
}

/**
 * What the producer refuses before it sends (issue 51): not an object, or without `version` 1 and
 * an `observed_at` string. A JavaScript host has no compile-time check; the consumer would park it
 * as invalid anyway, so it is dropped here (counted `not_a_frame`) instead of sent.
 */
export function notAFrame(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `not an object (got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`;
  const frame = value as Record<string, unknown>;
  if (frame.version !== 1) return 'version is not 1';
  if (typeof frame.observed_at !== 'string') return 'observed_at is not a string';
  return undefined;
}
