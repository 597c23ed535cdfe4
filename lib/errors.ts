import { redactText } from './redact.js';
/**
 * Base of every error this project throws on purpose, so `instanceof SubagentContextError` tells
 * ours from a driver's or the SDK's. Each subclass sets `name` one way: a class field with its own
 * name (`override readonly name = 'MigrationError'`), which survives bundling and shows in logs.
 */
export abstract class SubagentContextError extends Error {
  abstract override readonly name: string;
  constructor(message?: string, options?: { cause?: unknown }) {
    // R2-6 (docs/security.md): a message built from a driver's or a URL parser's text may echo the
    // connection URL; every project error is redacted once, here (the cause keeps the original).
    super(message === undefined ? undefined : redactText(message), options);
  }
}
