import { SubagentContextError } from '../errors.js';
import { terminalSafe } from '../terminal-text.js';

/** The CLI was called wrongly (exit 2): the message names the flag and what it needs. */
export class UsageError extends SubagentContextError {
  override readonly name = 'UsageError';
}

/**
 * A usage error as the terminal shows it: one line, always. Its words are the program's and hold no
 * line break, so any control character in it came from a flag's value it quotes (`--since
 * $'2026-01-01\nFORGED: ok'`) and is shown escaped (`\x0A`), never obeyed: no value forges a line
 * (issue 48).
 */
export function usageText(error: UsageError): string {
  return terminalSafe(error.message);
}
