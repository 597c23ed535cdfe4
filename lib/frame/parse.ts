import type { core } from 'zod/mini';
import { SubagentContextError } from '../errors.js';
import { identityProblem } from '../text.js';
import { parseRfc3339 } from '../time.js';
import { jsonKind } from './describe.js';
import { type Frame, frameSchema, type SubagentTask, subagentTaskSchema } from './schema.js';

/** A frame that can never be written; `reason` says what to fix in the producer. */
export class InvalidFrameError extends SubagentContextError {
  override readonly name = 'InvalidFrameError';
  constructor(readonly reason: string) {
    super(`invalid frame: ${reason}`);
  }
}

export type ParseResult = { ok: true; frame: Frame } | { ok: false; error: InvalidFrameError };

export function parseFrame(body: string): ParseResult {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    // R2-6: JSON.parse's message quotes the body around the error (it may be prompt text): only where.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    return invalid(
      `body is not JSON (${at === undefined ? 'unexpected end or token' : `syntax error at position ${at}`}); send one JSON object per message`,
    );
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return invalid(`body is ${jsonKind(json)}; send one JSON object per message`);
  }
  const plain = plainValidFrame(json as Record<string, unknown>);
  if (plain) return { ok: true, frame: plain };
  const result = frameSchema.safeParse(json);
  if (result.success) return { ok: true, frame: result.data };
  return invalid(describeIssues(result.error));
}

const IDENTITY_FIELDS = [
  'task_session_id',
  'task_id',
  'tool_call_id',
  'turn_id',
  'parent_tool_call_id',
  'execution_id',
] as const;
const TASK_FIELDS = Object.keys(subagentTaskSchema.def.shape) as (keyof SubagentTask)[];

/**
 * The hot path's answer for a frame that is valid beyond doubt: the checks `frameSchema` makes
 * that can reject a frame (docs/frame.md#invalid-frames: version, identity fields (R2-1),
 * tool_status, observed_at, subagent_task), written out plainly — zod's general machinery cost
 * ~10 µs a frame here, more than JSON.parse. Anything else (undefined) goes through
 * `frameSchema`, which decides and names the field, so every rule and every reason stays the
 * schema's. The result is what the schema's parse gives: only the schema's fields, absent ones
 * left out (a property test in test/lib/frame/parse.test.ts holds the two to the same answer).
 */
function plainValidFrame(json: Record<string, unknown>): Frame | undefined {
  if (json.version !== 1) return undefined;
  const frame: Record<string, unknown> = { version: 1 };
  for (const field of IDENTITY_FIELDS) {
    const value = json[field];
    if (value === undefined) continue;
    if (value !== null && (typeof value !== 'string' || identityProblem(value) !== undefined)) return undefined;
    frame[field] = value;
  }
  const toolStatus = json.tool_status;
  if (toolStatus !== undefined) {
    if (toolStatus !== null && typeof toolStatus !== 'string') return undefined;
    frame.tool_status = toolStatus;
  }
  const observedAt = json.observed_at;
  if (typeof observedAt !== 'string' || parseRfc3339(observedAt) === undefined) return undefined;
  frame.observed_at = observedAt;
  const task = json.subagent_task;
  if (typeof task !== 'object' || task === null || Array.isArray(task)) return undefined;
  // Every subagent_task field is declared `unknown` (metrics and flags are classified later,
  // AC-9): nothing in it can make the frame invalid.
  const copy: Record<string, unknown> = {};
  for (const field of TASK_FIELDS) {
    const value = (task as Record<string, unknown>)[field];
    if (value !== undefined) copy[field] = value;
  }
  frame.subagent_task = copy;
  return frame as Frame;
}

function invalid(reason: string): ParseResult {
  return { ok: false, error: new InvalidFrameError(reason) };
}

/** The schema's own messages name their field and what was expected; zod's defaults get the path. */
function describeIssues(error: core.$ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.');
      return issue.message.startsWith(path) ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}
