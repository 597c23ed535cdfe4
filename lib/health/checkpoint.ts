import type { Queryable } from '../db/database.js';
import { SubagentContextError } from '../errors.js';
import { quoteHostValue } from '../text.js';
import { formatKey, type Micros, parseStoredTimestamp } from '../time.js';

/**
 * The scheduled check's checkpoint (docs/health.md): every qualifying message created in
 * [capture_since, checkpoint) was seen with a row. It only ever moves by compare-and-set, so two
 * runs that overlap, or a run that fails half-way, can never move it past a message no run
 * verified: a run writes only if the value is still the one it started from.
 */
export const CHECKPOINT_KEY = 'subagent_context_health_verified_through';

/**
 * An operator's acknowledgment (docs/health.md): messages created before it are accepted as they
 * are, so no scheduled window starts before it, overlap included. Only ever moves forward.
 */
export const ACKNOWLEDGED_KEY = 'subagent_context_health_acknowledged_through';

export interface Checkpoint {
  /** the stored text, byte-identical (what a compare-and-set compares); undefined when absent */
  raw: string | undefined;
  at: Micros | undefined;
  /** the acknowledgment, if any (never parsed into the compare-and-set) */
  acknowledgedThrough: Micros | undefined;
}

export class CheckpointError extends SubagentContextError {
  override readonly name = 'CheckpointError';
  constructor(
    readonly key: string,
    readonly value: string,
  ) {
    super(
      `kandev_meta key ${key} holds ${quoteHostValue(value)}, which is not an RFC 3339 instant; ` +
        `delete the key (the next scheduled check then starts again from capture_since, or from the other health key) ` +
        `or set it to an instant in the key form (e.g. 2026-08-12T13:24:58.123456000Z)`,
    );
  }
}

export async function readCheckpoint(db: Queryable): Promise<Checkpoint> {
  const rows = await db.query<{ key: string; value: string }>(
    'SELECT key, value FROM kandev_meta WHERE key IN ($1, $2)',
    [CHECKPOINT_KEY, ACKNOWLEDGED_KEY],
  );
  const value = (key: string) => rows.find((r) => r.key === key)?.value;
  const instant = (key: string): Micros | undefined => {
    const raw = value(key);
    if (raw === undefined) return undefined;
    const at = parseStoredTimestamp(raw);
    if (at === undefined) throw new CheckpointError(key, raw);
    return at;
  };
  return { raw: value(CHECKPOINT_KEY), at: instant(CHECKPOINT_KEY), acknowledgedThrough: instant(ACKNOWLEDGED_KEY) };
}

/** Records an acknowledgment; a later one replaces an earlier one, never the reverse (the key form orders as text). */
export async function recordAcknowledgment(db: Queryable, through: Micros): Promise<void> {
  await db.query(
    `INSERT INTO kandev_meta (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE kandev_meta.value < excluded.value`,
    [ACKNOWLEDGED_KEY, formatKey(through)],
  );
}

/**
 * Sets the checkpoint to `next` only if it still holds `expected` (absent: only if still absent).
 * Returns whether this call wrote it; false means another run moved it first, and that run's
 * value stands (it was verified by that run).
 */
export async function compareAndSetCheckpoint(db: Queryable, expected: Checkpoint, next: Micros): Promise<boolean> {
  const value = formatKey(next);
  const rows =
    expected.raw === undefined
      ? await db.query(
          'INSERT INTO kandev_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key',
          [CHECKPOINT_KEY, value],
        )
      : await db.query('UPDATE kandev_meta SET value = $2 WHERE key = $1 AND value = $3 RETURNING key', [
          CHECKPOINT_KEY,
          value,
          expected.raw,
        ]);
  return rows.length === 1;
}
