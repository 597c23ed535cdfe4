import { type Micros, parseRfc3339 } from '../time.js';
import { UsageError } from './usage-error.js';

/*
 * A flag's value read once, for every command: a bad value is a usage error that names the flag
 * and says what it takes (exit 2; issue 25), never an environment variable's name.
 */

/** `--since 2026-08-12T13:00:00Z`: an RFC 3339 instant with an offset; undefined when the flag is absent. */
export function instantFlag(flag: string, raw: string | undefined): Micros | undefined {
  if (raw === undefined) return undefined;
  const at = parseRfc3339(raw);
  if (at === undefined)
    throw new UsageError(`${flag} needs an RFC 3339 instant with an offset, e.g. 2026-08-12T13:00:00Z (got "${raw}")`);
  return at;
}

/** `--limit 10`: a whole number of `unit`, at least 1; undefined when the flag is absent. */
export function countFlag(flag: string, raw: string | undefined, unit: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} needs a whole number of ${unit}, at least 1 (got "${raw}")`);
  return n;
}

/** `--grace-seconds 900`: a non-negative number of seconds; undefined when the flag is absent. */
export function secondsFlag(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`${flag} needs a non-negative number of seconds, e.g. ${flag} 900 (got "${raw}")`);
  return seconds;
}
