import { createHash } from 'node:crypto';

/*
 * Trace and span ids derived from the rows (docs/otlp.md#ids, R3-10): the same row exported twice,
 * by any run on any machine, carries the same ids, so a backend that dedupes by id keeps one copy.
 * Each id is the first bytes of SHA-256 over a labelled, NUL-separated identity (NUL cannot occur in
 * an identity field: the host's keys are TEXT from JSON strings that R2-1 refuses with control
 * characters). An all-zero id is invalid in OTLP; SHA-256 yielding one is practically impossible,
 * but the last byte is set then anyway.
 */

function derive(bytes: number, parts: readonly string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  const id = Buffer.from(digest.subarray(0, bytes));
  if (id.every((b) => b === 0)) id[bytes - 1] = 1;
  return id.toString('hex');
}

/** One trace per turn: the session and the turn ('' for the rows without a turn). */
export function traceIdOf(taskSessionId: string, turnKey: string): string {
  return derive(16, ['subagent-context/trace', taskSessionId, turnKey]);
}

/** The turn's root span. */
export function turnSpanIdOf(taskSessionId: string, turnKey: string): string {
  return derive(8, ['subagent-context/turn', taskSessionId, turnKey]);
}

/** A row's span: the row's identity, the table's unique key (session, execution, tool call). */
export function rowSpanIdOf(taskSessionId: string, agentExecutionId: string, toolCallId: string): string {
  return derive(8, ['subagent-context/row', taskSessionId, agentExecutionId, toolCallId]);
}
