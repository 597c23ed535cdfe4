/**
 * ACP tool statuses that settle a subagent (docs/merge.md#recording-one-frame, AC-11). Exactly these, compared verbatim;
 * the child's own `agent_status` (e.g. `async_launched`) never settles a row (AC-10a).
 */
export const TERMINAL_TOOL_STATUSES: readonly string[] = Object.freeze([
  'complete',
  'completed',
  'success',
  'error',
  'failed',
  'cancelled',
]);

export function isTerminalToolStatus(status: string | null | undefined): boolean {
  return status != null && TERMINAL_TOOL_STATUSES.includes(status);
}
