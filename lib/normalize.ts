import { MAX_METRIC } from './columns.js';
import type { Frame } from './frame/schema.js';
import { type SubagentWrite, UNKNOWN_EXECUTION } from './row.js';
import { isTerminalToolStatus } from './terminal.js';
import { storedText } from './text.js';
import { parseRfc3339 } from './time.js';
import { normalizeUsage } from './usage-write.js';

export type Normalized =
  | { kind: 'skip'; reason: 'no_identity' }
  | { kind: 'write'; row: SubagentWrite; anomalous: boolean; unknownExecution: boolean };

/** Empty text is NULL for every nullable TEXT column, so `COUNT(model)` counts models (docs/merge.md#recording-one-frame). */
export function textOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * Text stored in a non-identity column: R2-1's cleaning (lib/text.ts), then empty → NULL. Identity
 * fields are never cleaned: the schema has already rejected any that would need it.
 */
export function storedTextOrNull(value: unknown): string | null {
  return typeof value === 'string' ? textOrNull(storedText(value)) : null;
}

type MetricResult = { value: number | null; anomalous: boolean };

function isMetric(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_METRIC;
}

/**
 * `total_tokens` and `duration_ms`: the host cannot tell a reported 0 from none, so 0 is NULL (AC-7).
 * `tool_use_count`: 0 is a real, distinguishable zero (AC-7a). Anything malformed — including a
 * value above MAX_METRIC, which the host's 32-bit column cannot hold (R2-10) — is NULL and flags
 * the frame (AC-9).
 */
export function normalizeMetric(value: unknown, zeroMeansUnreported: boolean): MetricResult {
  if (value === undefined || value === null) return { value: null, anomalous: false };
  if (!isMetric(value)) return { value: null, anomalous: true };
  if (value === 0 && zeroMeansUnreported) return { value: null, anomalous: false };
  return { value, anomalous: false };
}

/** Frame → row write, every rule of docs/merge.md#recording-one-frame. Pure: the writer adds `id` and `updated_at`. */
export function normalizeFrame(frame: Frame): Normalized {
  const taskSessionId = textOrNull(frame.task_session_id);
  const taskId = textOrNull(frame.task_id);
  const toolCallId = textOrNull(frame.tool_call_id);
  if (taskSessionId === null || taskId === null || toolCallId === null) {
    return { kind: 'skip', reason: 'no_identity' };
  }
  const task = frame.subagent_task;
  const totalTokens = normalizeMetric(task.total_tokens, true);
  const durationMs = normalizeMetric(task.duration_ms, true);
  const toolUseCount = normalizeMetric(task.tool_use_count, false);
  const executionId = textOrNull(frame.execution_id);
  const toolStatus = storedTextOrNull(frame.tool_status);
  // The schema has already proven observed_at parses.
  const observedAt = parseRfc3339(frame.observed_at)!;
  const usage = normalizeUsage(task.usage, observedAt);
  return {
    kind: 'write',
    anomalous: totalTokens.anomalous || durationMs.anomalous || toolUseCount.anomalous || usage.anomalous,
    unknownExecution: executionId === null,
    row: {
      task_session_id: taskSessionId,
      task_id: taskId,
      turn_id: textOrNull(frame.turn_id),
      tool_call_id: toolCallId,
      agent_execution_id: executionId ?? UNKNOWN_EXECUTION,
      parent_tool_call_id: textOrNull(frame.parent_tool_call_id),
      subagent_type: storedTextOrNull(task.subagent_type),
      description: storedTextOrNull(task.description),
      agent_id: storedTextOrNull(task.agent_id),
      child_session_id: storedTextOrNull(task.child_session_id),
      model: storedTextOrNull(task.model),
      agent_status: storedTextOrNull(task.status),
      tool_status: toolStatus,
      is_async: task.is_async === true ? 1 : 0,
      total_tokens: totalTokens.value,
      tool_use_count: toolUseCount.value,
      duration_ms: durationMs.value,
      source: 'live',
      observed_at: observedAt,
      settled_at: isTerminalToolStatus(toolStatus) ? observedAt : null,
      last_observed_at: observedAt,
      // Only when reported, so a write without usage is the row's columns alone (R6-2).
      ...(usage.usage === null ? {} : { usage: usage.usage }),
    },
  };
}
