import type { Queryable } from '../db/database.js';
import { SubagentContextError } from '../errors.js';
import type { TurnPosition } from '../report/trees.js';
import { formatKey, type Micros, parseStoredTimestamp } from '../time.js';

/*
 * The export's resumable position (docs/otlp.md#incremental-export): the last turn a collector
 * accepted, in the tree reader's `changed` order, kept in the host's kandev_meta under a key of
 * ours. It is written only after the collector accepted the batch that held that turn, so a
 * failed run resumes where the last accepted batch ended and loses nothing. Beside that point it
 * records, for the turns of its lookback window, what was sent of each (a digest), so a rerun
 * sends only what changed (R4-8, docs/otlp.md#change-detection), and the partial successes it
 * passed.
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

/** What the position records of one turn it sent: the digest of its spans and its `changed` then. */
export interface SentTurn {
  /** turnDigest of what was sent ('' : the turn had nothing to send yet) */
  digest: string;
  changed: Micros;
}

/** A collector's partial successes this position passed (R4-8: moved and recorded, never silently). */
export interface RejectedRecord {
  /** spans rejected, summed over every run that moved this position */
  spans: number;
  /** the latest errorMessage (as messages show it) */
  message?: string;
  /** when the latest was answered (the key form) */
  at: string;
}

export interface StoredPosition {
  position: TurnPosition;
  /** turns sent within the lookback window, by turnKeyDigest (docs/otlp.md#change-detection) */
  sent: Map<string, SentTurn>;
  rejected?: RejectedRecord;
}

export function parsePosition(key: string, raw: string | null): StoredPosition | undefined {
  if (raw === null) return undefined;
  const fail = () =>
    new PositionError(
      `kandev_meta key ${key} does not hold an export position; delete the key to export everything again (ids stay the same, so a collector that dedupes by id keeps one copy)`,
    );
  let value: { changed?: unknown; task_session_id?: unknown; turn_key?: unknown; sent?: unknown; rejected?: unknown };
  try {
    value = JSON.parse(raw);
  } catch {
    throw fail();
  }
  const changed = typeof value?.changed === 'string' ? parseStoredTimestamp(value.changed) : undefined;
  if (changed === undefined || typeof value.task_session_id !== 'string' || typeof value.turn_key !== 'string')
    throw fail();
  const sent = new Map<string, SentTurn>();
  // A position written before R4-8 has no record: its lookback window is sent once more, then recorded.
  if (value.sent !== undefined) {
    if (!Array.isArray(value.sent)) throw fail();
    for (const entry of value.sent) {
      if (!Array.isArray(entry) || entry.length !== 3 || !entry.every((e) => typeof e === 'string')) throw fail();
      const [turn, digest, micros] = entry as [string, string, string];
      if (!/^-?\d{1,20}$/.test(micros)) throw fail();
      sent.set(turn, { digest, changed: BigInt(micros) });
    }
  }
  const r = value.rejected as { spans?: unknown; message?: unknown; at?: unknown } | undefined;
  const rejected =
    r !== undefined && r !== null && typeof r.spans === 'number' && typeof r.at === 'string'
      ? { spans: r.spans, at: r.at, ...(typeof r.message === 'string' ? { message: r.message } : {}) }
      : undefined;
  return {
    position: { changed, task_session_id: value.task_session_id, turn_key: value.turn_key },
    sent,
    ...(rejected ? { rejected } : {}),
  };
}

/**
 * The `changed` order, negative when a comes first: the turn's newest change, then its session,
 * then its turn, the strings in UTF-8 byte order, as the listing's ORDER BY has them (SQLite's
 * BINARY, PostgreSQL's COLLATE "C"; JavaScript's `<` orders UTF-16 units, which differs past
 * U+FFFF). The whole key: a resume at a tie goes on after the exact turn it stopped at (issue 48).
 */
export function comparePositions(a: TurnPosition, b: TurnPosition): number {
  if (a.changed !== b.changed) return a.changed < b.changed ? -1 : 1;
  return (
    Buffer.compare(Buffer.from(a.task_session_id), Buffer.from(b.task_session_id)) ||
    Buffer.compare(Buffer.from(a.turn_key), Buffer.from(b.turn_key))
  );
}

/** The position's point alone (what summaries show): changed, session, turn. */
export function pointText(position: TurnPosition): string {
  return JSON.stringify({
    changed: formatKey(position.changed),
    task_session_id: position.task_session_id,
    turn_key: position.turn_key,
  });
}

/** The stored form: the point, the record of turns sent in the window, and any rejections passed. */
export function positionText(stored: StoredPosition): string {
  const point = JSON.parse(pointText(stored.position)) as Record<string, unknown>;
  if (stored.sent.size > 0) point.sent = [...stored.sent].map(([turn, s]) => [turn, s.digest, String(s.changed)]);
  if (stored.rejected) point.rejected = stored.rejected;
  return JSON.stringify(point);
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
