import { asProjectError } from './errors.js';
import { redact } from './redact.js';

/**
 * The edge of each function (R2-6, docs/security.md): whatever the handler returns is redacted and
 * whatever it throws becomes a project error with redacted text and no third-party properties
 * (lib/errors.ts asProjectError), because the Lambda runtime logs a thrown error's own enumerable
 * properties (`Invoke Error`) and returns its message to the caller.
 */
export function atTheEdge<A extends unknown[], R>(handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return redact(await handler(...args));
    } catch (err) {
      throw asProjectError(err);
    }
  };
}
