import type { z } from 'zod';
import { frameSchema, type Frame } from './schema.js';

/** A frame that can never be written; `reason` says what to fix in the producer. */
export class InvalidFrameError extends Error {
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
    return invalid(`body is not JSON (${(err as Error).message}); send one JSON object per message`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return invalid(`body is ${Array.isArray(json) ? 'an array' : json === null ? 'null' : `a ${typeof json}`}; send one JSON object per message`);
  }
  const result = frameSchema.safeParse(json);
  if (result.success) return { ok: true, frame: result.data };
  return invalid(describeIssues(result.error));
}

function invalid(reason: string): ParseResult {
  return { ok: false, error: new InvalidFrameError(reason) };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.');
      if (issue.code === 'invalid_type' && issue.input === undefined) return `${path} is required`;
      if (path === 'subagent_task' && issue.code === 'invalid_type') return 'subagent_task must be an object';
      return issue.message.startsWith(path) ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}
