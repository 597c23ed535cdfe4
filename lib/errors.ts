import { redact, redactText } from './redact.js';

/**
 * Base of every error this project throws on purpose, so `instanceof SubagentContextError` tells
 * ours from a driver's or the SDK's. Each subclass sets `name` one way: a class field with its own
 * name (`override readonly name = 'MigrationError'`), which survives bundling and shows in logs.
 */
export abstract class SubagentContextError extends Error {
  abstract override readonly name: string;
  constructor(message?: string, options?: { cause?: unknown }) {
    // R2-6 (docs/security.md): a message built from a driver's or a URL parser's text may echo the
    // connection URL; every project error is redacted once, here. A cause that is not ours is kept
    // as a ForeignError: its name, code and redacted text, never its own properties (a URL parser's
    // `input` holds the whole URL, and the Lambda runtime and util.inspect print own properties).
    super(
      message === undefined ? undefined : redactText(message),
      options?.cause === undefined ? undefined : { cause: asProjectError(options.cause) },
    );
  }
}

/** A code worth keeping from a third-party error: a SQLSTATE or a driver's/Node's own (ECONNRESET, ERR_INVALID_URL). */
const KEPT_CODE = /^[A-Za-z0-9_]{1,64}$/;
/** Causes deeper than this are summarised: nobody reads them, and a cycle must end. */
const MAX_CAUSE_DEPTH = 8;

/**
 * A third-party error (a driver's, Node's, the SDK's) as the project keeps it: its name, its code
 * (SQLSTATE or driver code), its message and stack redacted, and its cause chain kept the same way.
 * Every other own property is dropped.
 */
export class ForeignError extends SubagentContextError {
  override readonly name: string;
  /** the original's `code` when it is a SQLSTATE or a driver code */
  declare readonly code?: string;
  constructor(original: unknown, depth = 0) {
    const error = original instanceof Error ? original : undefined;
    const cause = depth < MAX_CAUSE_DEPTH ? (error as { cause?: unknown } | undefined)?.cause : undefined;
    super(error ? error.message : describe(original), {
      cause: cause === undefined || cause === original ? undefined : new ForeignError(cause, depth + 1),
    });
    this.name = error && typeof error.name === 'string' ? error.name : 'ThrownValue';
    const code = (original as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && KEPT_CODE.test(code)) this.code = code;
    if (error?.stack) this.stack = redactText(error.stack);
  }
}

/** What a thrown non-Error says about itself, redacted (a thrown string may be a URL). */
function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(redact(value)) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * The redaction boundary for errors (R2-6): anything thrown becomes a project error. Ours keep their
 * identity (callers test `instanceof MigrationError`) with every string own property redacted; a
 * third-party error becomes a ForeignError (name, code, redacted text, nothing else).
 */
export function asProjectError(err: unknown): SubagentContextError {
  if (!(err instanceof SubagentContextError)) return new ForeignError(err);
  for (const [key, value] of Object.entries(err)) {
    if (typeof value === 'string') (err as unknown as Record<string, unknown>)[key] = redactText(value);
    else if (value !== null && typeof value === 'object')
      (err as unknown as Record<string, unknown>)[key] = redact(value);
  }
  if (err.stack) err.stack = redactText(err.stack);
  return err;
}
