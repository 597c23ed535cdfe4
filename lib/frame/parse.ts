import type { core } from 'zod/mini';
import { SubagentContextError } from '../errors.js';
import { jsonKind } from './describe.js';
import { type Frame, frameSchema } from './schema.js';

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
  const result = frameSchema.safeParse(json);
  if (result.success) return { ok: true, frame: result.data };
  return invalid(describeIssues(result.error));
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
