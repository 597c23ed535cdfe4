import { TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { QUALIFYING, subagentMessages } from '../store/messages.js';
import { MISSING_SAMPLE_SIZE } from './report.js';

/*
 * The health statements (docs/health.md). Two kinds answer the same questions:
 * - the full audit: set-based EXCEPTs over every key since capture_since (one hash/sort pass each);
 * - the scheduled window: only messages created and rows observed in [$lo, $hi), each probing the
 *   other side by key through an index, so its cost is the window's, not the history's.
 * The window's answer is the full audit's restricted to the window (a property test proves it):
 * shortfall = the full shortfall's keys that have a qualifying message created in the window;
 * excess = the full excess's keys whose first row since capture_since is observed in the window;
 * collisions = rows observed in the window that are not the first row of their key since
 * capture_since (summed over windows that partition time, this is rows − distinct keys).
 * R2-8: excess and collisions only count rows observed at or after capture_since, in both kinds.
 */

/**
 * A condition on a host timestamp column that is a superset of `readableInstant(column) ∈ [$lo, $hi)`
 * and that the column's plain index can serve. PostgreSQL compares the column itself, so the
 * exact condition already is one. SQLite stores text whose width varies (docs/time.md), so the
 * exact reading wraps the column in an expression no index serves; the text of any stored
 * value starts with its 19-character `YYYY-MM-DD?HH:MM:SS` (? = ' ' or 'T'), which orders like
 * the local time to the second; an offset (`+02:00`, any up to ±23:59, issue 48) moves the instant
 * less than a day from it, so two text ranges of whole seconds, a day wider on each side, bound it
 * (one per separator).
 */
export function indexedRange(dialect: Dialect, column: string, lo: number, hi: number): string {
  if (dialect.name === 'postgres') return 'TRUE';
  const at = (p: number, shift: string) => `datetime(substr($${p}, 1, 19), '${shift}')`;
  const seconds = (p: number, shift: string, sep: string) =>
    sep === ' ' ? at(p, shift) : `replace(${at(p, shift)}, ' ', 'T')`;
  // Every character after the seconds ('.', '+', '-', 'Z') sorts before '~'.
  const range = (sep: string) =>
    `(${column} >= ${seconds(lo, '-1 day', sep)} AND ${column} < ${seconds(hi, '+1 day', sep)} || '~')`;
  return `(${range(' ')} OR ${range('T')})`;
}

/**
 * A message's created_at between two finite bounds, read by the one instant reader (R4-3,
 * issue 48: `readableInstant`, any offset read as its UTC instant, garbage as none). On
 * PostgreSQL the column itself is that reading there: `infinity`, BC and years past 9999 fall
 * outside any finite range, and the created_at index serves the column, not the guarded reading.
 * A range open below (the history's `< capture_since`) reads `readableInstant` on both.
 */
const createdBetween = (dialect: Dialect, column: string) =>
  dialect.name === 'postgres' ? dialect.comparable(column) : dialect.readableInstant(column);

// ---------------------------------------------------------------------------------------------
// Full audit
// ---------------------------------------------------------------------------------------------

/**
 * Qualifying message keys created in [$1 capture_since, $2 cutoff) with no row observed at or
 * after $1 (any execution). Returns up to MISSING_SAMPLE_SIZE keys, each carrying the total count.
 */
export function shortfallSql(dialect: Dialect, options: { messagesFrom?: number } = {}): string {
  const since = dialect.timestampParam(1);
  const cutoff = dialect.timestampParam(2);
  // `messagesFrom`: messages created from that `$n` on only (an acknowledgment); rows still from $1.
  const from = options.messagesFrom === undefined ? since : dialect.timestampParam(options.messagesFrom);
  const created = createdBetween(dialect, 'msg.created_at');
  // The audit reads most messages: each document parsed once; the creation range inside (its index).
  const read = { fenced: true, where: `${created} >= ${from} AND ${created} < ${cutoff}` };
  return `SELECT task_session_id, tool_call_id, COUNT(*) OVER () AS total FROM (
  SELECT sm_all.task_session_id, sm_all.meta_tool_call_id AS tool_call_id FROM ${subagentMessages(dialect, read)}
  WHERE ${QUALIFYING}
  EXCEPT
  SELECT task_session_id, tool_call_id FROM ${TABLE} WHERE ${dialect.comparable('observed_at')} >= ${since}
) missing
ORDER BY ${dialect.byteOrder('task_session_id')}, ${dialect.byteOrder('tool_call_id')}
LIMIT ${MISSING_SAMPLE_SIZE}`;
}

/**
 * R3-4, the history: qualifying message keys created before $1 capture_since (what the backfill
 * qualifies) with no row at all (any execution, any observed_at: a backfilled row is observed at
 * its message's created_at, and a live row may have come first). A lost backfill — the table
 * dropped and re-created, rows deleted — shows here and nowhere else. Up to MISSING_SAMPLE_SIZE
 * keys, each carrying the total count.
 */
export function historyShortfallSql(dialect: Dialect): string {
  const created = dialect.readableInstant('msg.created_at');
  const read = { fenced: true, where: `${created} < ${dialect.timestampParam(1)}` };
  return `SELECT task_session_id, tool_call_id, COUNT(*) OVER () AS total FROM (
  SELECT sm_all.task_session_id, sm_all.meta_tool_call_id AS tool_call_id FROM ${subagentMessages(dialect, read)}
  WHERE ${QUALIFYING}
  EXCEPT
  SELECT task_session_id, tool_call_id FROM ${TABLE}
) missing
ORDER BY ${dialect.byteOrder('task_session_id')}, ${dialect.byteOrder('tool_call_id')}
LIMIT ${MISSING_SAMPLE_SIZE}`;
}

/**
 * R4-3: qualifying messages whose created_at holds a value (NULL is not reported) that the one
 * instant reader does not read: no window of either kind holds them, so the full audit counts them
 * apart (`HealthReport.unreadableCreatedAt`). Any time: such a message has none.
 */
export function unreadableCreatedSql(dialect: Dialect): string {
  const read = {
    fenced: true,
    where: `msg.created_at IS NOT NULL AND ${dialect.readableInstant('msg.created_at')} IS NULL`,
  };
  return `SELECT COUNT(*) AS unreadable FROM ${subagentMessages(dialect, read)} WHERE ${QUALIFYING}`;
}

/** Keys of rows observed at or after $1 capture_since (R2-8) with no subagent message at all. */
export function excessSql(dialect: Dialect): string {
  return `SELECT COUNT(*) AS excess FROM (
  SELECT task_session_id, tool_call_id FROM ${TABLE} WHERE ${dialect.comparable('observed_at')} >= ${dialect.timestampParam(1)}
  EXCEPT
  SELECT sm_all.task_session_id, sm_all.meta_tool_call_id FROM ${subagentMessages(dialect, { fenced: true })}
  WHERE sm_all.kind = 'subagent_task'
) unexplained`;
}

/** Collisions (rows − distinct keys) and MAX(observed_at), both over rows observed at or after $1 (R2-8). */
export function rowFactsSql(dialect: Dialect): string {
  const observed = dialect.comparable('observed_at');
  const since = `${observed} >= ${dialect.timestampParam(1)}`;
  return `SELECT
  (SELECT COUNT(*) FROM ${TABLE} WHERE ${since}) AS row_count,
  (SELECT COUNT(*) FROM (SELECT DISTINCT task_session_id, tool_call_id FROM ${TABLE} WHERE ${since}) k) AS key_count,
  (${lastObservedSql(dialect)}) AS last_observed`;
}

/** MAX(observed_at) of rows at or after $1, read from the end of idx_subagents_observed_at. */
export function lastObservedSql(dialect: Dialect): string {
  const observed = dialect.comparable('observed_at');
  return `SELECT ${observed} FROM ${TABLE} WHERE ${observed} >= ${dialect.timestampParam(1)} ORDER BY ${observed} DESC LIMIT 1`;
}

// ---------------------------------------------------------------------------------------------
// Scheduled window: $1 capture_since, $2 lo, $3 hi (lo >= capture_since)
//
// Every correlated EXISTS / NOT EXISTS ends in the dialect's fence. PostgreSQL turns a plain one
// into a (hash) semi- or anti-join whenever the statistics say that is cheaper — and once ANALYZE
// knows the recent traffic it does, reading every row or message since capture_since (at 2M
// messages a 200k-row sequential scan spilling to temp). A subquery with OFFSET is never turned
// into a join, so each stays a per-row probe through the key's index: the window's cost, whatever
// the statistics say. SQLite always probes; its fence changes nothing there.
// ---------------------------------------------------------------------------------------------

/**
 * Qualifying message keys with a message created in [$2, $3) and no row observed at or after $1.
 * Each key carries the earliest such message's creation (`first_created`), and every returned row
 * the total and the earliest over all missing keys, so the checkpoint can stop right before it.
 */
export function windowShortfallSql(dialect: Dialect): string {
  const created = createdBetween(dialect, 'msg.created_at');
  // The window's messages through the created_at index, each document parsed once (the fence).
  const read = {
    fenced: true,
    where: `${indexedRange(dialect, 'msg.created_at', 2, 3)} AND ${created} >= ${dialect.timestampParam(2)} AND ${created} < ${dialect.timestampParam(3)}`,
  };
  return `SELECT task_session_id, tool_call_id, first_created, COUNT(*) OVER () AS total, MIN(first_created) OVER () AS earliest FROM (
  SELECT sm_all.task_session_id, sm_all.meta_tool_call_id AS tool_call_id, MIN(${createdBetween(dialect, 'sm_all.created_at')}) AS first_created
  FROM ${subagentMessages(dialect, read)}
  WHERE ${QUALIFYING}
    AND NOT EXISTS (SELECT 1 FROM ${TABLE} r WHERE r.task_session_id = sm_all.task_session_id
      AND r.tool_call_id = sm_all.meta_tool_call_id AND ${dialect.comparable('r.observed_at')} >= ${dialect.timestampParam(1)} ${dialect.fence})
  GROUP BY sm_all.task_session_id, sm_all.meta_tool_call_id
) missing
ORDER BY ${dialect.byteOrder('task_session_id')}, ${dialect.byteOrder('tool_call_id')}
LIMIT ${MISSING_SAMPLE_SIZE}`;
}

/** Rows observed in [$2, $3) (never before $1). */
function windowRows(dialect: Dialect, alias: string): string {
  const observed = dialect.comparable(`${alias}.observed_at`);
  return `${observed} >= ${dialect.timestampParam(1)} AND ${observed} >= ${dialect.timestampParam(2)} AND ${observed} < ${dialect.timestampParam(3)}`;
}

/**
 * Keys whose first row since $1 is observed in the window, with no subagent message at all (each
 * excess key counts in exactly one of any windows that partition time, so slices add up). Each
 * key probes its session's messages through the host's index on the metadata's tool_call_id (the
 * raw expression is the index's own, and safe: the index exists only where every document
 * parsed); the guarded reading then decides, as in the full audit. Only where that index exists:
 * without it nothing finds a key's message short of reading every message (the history), so the
 * scheduled check leaves excess to the full audit (windowStatements).
 */
export function windowExcessSql(dialect: Dialect): string {
  const earlier = dialect.comparable('o.observed_at');
  const keys = `SELECT DISTINCT task_session_id, tool_call_id FROM ${TABLE} r WHERE ${windowRows(dialect, 'r')}
    AND NOT EXISTS (SELECT 1 FROM ${TABLE} o WHERE o.task_session_id = r.task_session_id AND o.tool_call_id = r.tool_call_id
      AND ${earlier} >= ${dialect.timestampParam(1)} AND ${earlier} < ${dialect.timestampParam(2)} ${dialect.fence})`;
  const explained = (probe: string) => `NOT EXISTS (SELECT 1 FROM ${subagentMessages(dialect)}
  WHERE sm_all.task_session_id = k.task_session_id${probe}
    AND sm_all.kind = 'subagent_task' AND sm_all.meta_tool_call_id = k.tool_call_id ${dialect.fence})`;
  const probed = explained(` AND ${hostToolCallProbe(dialect, 'sm_all', 'k.tool_call_id')}`);
  // SQLite's index holds a repeated tool_call_id's first value, the guarded reading its last (R2-1,
  // docs/dialects.md#json-documents): a key the probe finds no message for is looked for among its
  // session's messages too. Only a key without a message pays for that (none, normally).
  const rechecked = dialect.name === 'sqlite' ? `\n  AND ${explained('')}` : '';
  return `SELECT COUNT(*) AS excess FROM (${keys}) k
WHERE ${probed}${rechecked}`;
}

/**
 * A condition the host's index serves: the message's tool_call_id, read as its index reads it, is
 * `key`. PostgreSQL's `->>` gives text for any JSON value, like our guarded reading. SQLite's
 * json_extract gives a JSON number as a number, and the index is only used when the compared
 * value has no affinity, so the key is offered both as text without affinity and as a number (a
 * host id that is a JSON number then still finds its message; the guarded reading decides).
 */
export function hostToolCallProbe(dialect: Dialect, alias: string, key: string): string {
  return dialect.name === 'postgres'
    ? `(${alias}.metadata::jsonb ->> 'tool_call_id') = ${key}`
    : `json_extract(${alias}.metadata, '$.tool_call_id') IN (${key} || '', CAST(${key} AS NUMERIC))`;
}

/** Rows observed in the window with an earlier row (observed_at, then id) of the same key since $1. */
export function windowCollisionsSql(dialect: Dialect): string {
  const mine = dialect.comparable('r.observed_at');
  const other = dialect.comparable('o.observed_at');
  return `SELECT COUNT(*) AS collisions FROM ${TABLE} r
WHERE ${windowRows(dialect, 'r')}
  AND EXISTS (SELECT 1 FROM ${TABLE} o WHERE o.task_session_id = r.task_session_id AND o.tool_call_id = r.tool_call_id
    AND ${other} >= ${dialect.timestampParam(1)} AND (${other} < ${mine} OR (${other} = ${mine} AND o.id < r.id)) ${dialect.fence})`;
}

/** The statements one scheduled window runs, each over $1 capture_since, $2 lo, $3 hi (lastObserved: $1). */
export interface WindowStatements {
  shortfall: string;
  /**
   * null on a store without the host's idx_messages_metadata_tool_call_id: the window's excess
   * would read every subagent message there (0.4 s at 1M messages, 5.9 s at 10M, issue 26), so
   * the scheduled check does not compute it and the full audit (daily by default) counts it
   */
  excess: string | null;
  collisions: string;
  lastObserved: string;
}

/** What the scheduled check runs per window on this store (docs/health.md#two-kinds). */
export function windowStatements(dialect: Dialect, hostToolCallIndex: boolean): WindowStatements {
  return {
    shortfall: windowShortfallSql(dialect),
    excess: hostToolCallIndex ? windowExcessSql(dialect) : null,
    collisions: windowCollisionsSql(dialect),
    lastObserved: lastObservedSql(dialect),
  };
}
