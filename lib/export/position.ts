import type { Queryable } from '../db/database.js';
import { SubagentContextError } from '../errors.js';
import type { TurnPosition } from '../report/trees.js';
import { formatKey, parseStoredTimestamp } from '../time.js';

/*
 * The export's resumable position (docs/otlp.md#incremental-export): the last turn a collector
 * accepted, in the tree reader's `changed` order, kept in the host's kandev_meta under a key of
 * ours. It is written only after the collector accepted the batch that held that turn, so a
 * failed run resumes where the last accepted batch ended and loses nothing.
 */

export const POSITION_KEY = 'subagent_context_otlp_position';

export class PositionError extends SubagentContextError {
  override readonly name = 'PositionError';
}

/** A key of ours: our prefix, nothing a shell or the table would mangle. */
export function checkPositionKey(key: string): string {
  if (!/^subagent_context_otlp_position[a-z0-9_.-]*$/.test(key))
    throw new PositionError(
      `--position-key must start with ${POSITION_KEY} and use only a-z, 0-9, _ . - (got ${JSON.stringify(key)})`,
    );
  return key;
}

/** The stored position's text as it is (null: none), what `movePosition` compares with. */
export async function readPositionText(db: Queryable, key: string): Promise<string | null> {
  const rows = await db.query<{ value: string }>('SELECT value FROM kandev_meta WHERE key = $1', [key]);
  return rows[0]?.value ?? null;
}

export function parsePosition(key: string, raw: string | null): TurnPosition | undefined {
  if (raw === null) return undefined;
  const fail = () =>
    new PositionError(
      `kandev_meta key ${key} does not hold an export position; delete the key to export everything again (ids stay the same, so a collector that dedupes by id keeps one copy)`,
    );
  let value: { changed?: unknown; task_session_id?: unknown; turn_key?: unknown };
  try {
    value = JSON.parse(raw);
  } catch {
    throw fail();
  }
  const changed = typeof value.changed === 'string' ? parseStoredTimestamp(value.changed) : undefined;
  if (changed === undefined || typeof value.task_session_id !== 'string' || typeof value.turn_key !== 'string')
    throw fail();
  return { changed, task_session_id: value.task_session_id, turn_key: value.turn_key };
}

export function positionText(position: TurnPosition): string {
  return JSON.stringify({
    changed: formatKey(position.changed),
    task_session_id: position.task_session_id,
    turn_key: position.turn_key,
  });
}

/**
 * Moves the position from `from` (the text this run last read or wrote; null: none stored) to
 * `to` (`positionText` of the new position), compare-and-set: false when the key no longer holds `from`, because another export using
 * the same key moved it meanwhile. Without the comparison the slower of two runs would put the
 * position back behind the faster one's.
 */
export async function movePosition(db: Queryable, key: string, from: string | null, to: string): Promise<boolean> {
  const rows =
    from === null
      ? await db.query(
          'INSERT INTO kandev_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key',
          [key, to],
        )
      : await db.query('UPDATE kandev_meta SET value = $3 WHERE key = $1 AND value = $2 RETURNING key', [
          key,
          from,
          to,
        ]);
  return rows.length === 1;
}

/** The error of a run whose position another export moved (`movePosition` answered false). */
export function positionMoved(key: string, turns: number): PositionError {
  return new PositionError(
    `another export moved the position under kandev_meta key ${key} while this one ran; this run stopped after ${turns} turn(s) (the collector may have received them twice, with the same ids). Run one export per --position-key at a time, then run again to resume`,
  );
}
