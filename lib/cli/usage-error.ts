import { SubagentContextError } from '../errors.js';

/** The CLI was called wrongly (exit 2): the message names the flag and what it needs. */
export class UsageError extends SubagentContextError {
  override readonly name = 'UsageError';
}
