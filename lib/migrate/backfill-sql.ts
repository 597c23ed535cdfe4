import { COLUMN_NAMES, type ColumnName, MAX_METRIC, TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { UNKNOWN_EXECUTION } from '../row.js';
import { QUALIFYING, subagentMessages } from '../store/messages.js';
import { TERMINAL_TOOL_STATUSES } from '../terminal.js';
import { storedTextSql } from '../text.js';

/*
 * The backfill's two statements (docs/migrate.md#3-the-backfill-transaction), built from the guarded message reader
 * (lib/store/messages.ts) and the column list (lib/columns.ts). Every metadata read goes through
 * the dialect's JSON guards, so no document (NULL, '', 'null', '{bad', "123", 1.5) can abort them.
 */

const payload = (field: string) => `$.normalized.subagent_task.${field}`;

/** Non-empty JSON string or NULL (docs/merge.md#recording-one-frame: empty text is NULL), verbatim: an identity (R2-1). */
const identity = (d: Dialect, path: string) => `NULLIF(${d.jsonString('q.doc', path)}, '')`;

/** Non-empty JSON string or NULL, cleaned as ingest cleans stored text (R2-1, lib/text.ts). */
const text = (d: Dialect, path: string) => `NULLIF(${storedTextSql(d, d.jsonString('q.doc', path))}, '')`;

/**
 * docs/merge.md#recording-one-frame: 0 is "not reported" for these two; tool_use_count keeps a real 0 (AC-7, AC-7a). Above
 * MAX_METRIC is malformed (R2-10): NULL, so the host's 32-bit column can never fail the insert.
 */
const metric = (d: Dialect, field: string, zeroIsUnreported: boolean) => {
  const value = d.jsonInteger('q.doc', payload(field), MAX_METRIC);
  return zeroIsUnreported ? `NULLIF(${value}, 0)` : value;
};

const TERMINAL_LIST = TERMINAL_TOOL_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * docs/migrate.md#4-column-sources, one entry per column of the table. `id` and `updated_at` are the message's own, as
 * the host's backfill makes them, so both backfills name a row the same way.
 */
const SOURCES = {
  id: () => 'q.id',
  task_session_id: () => 'q.task_session_id',
  task_id: () => 'q.task_id',
  turn_id: () => `NULLIF(q.turn_id, '')`,
  tool_call_id: () => 'q.meta_tool_call_id',
  agent_execution_id: () => `'${UNKNOWN_EXECUTION}'`,
  parent_tool_call_id: (d) => identity(d, '$.parent_tool_call_id'),
  subagent_type: (d) => text(d, payload('subagent_type')),
  description: (d) => text(d, payload('description')),
  agent_id: (d) => text(d, payload('agent_id')),
  child_session_id: (d) => text(d, payload('child_session_id')),
  model: (d) => text(d, payload('model')),
  // The child's own status; the launching call's status is the top-level one (tool_status).
  agent_status: (d) => text(d, payload('status')),
  tool_status: (d) => text(d, '$.status'),
  is_async: (d) => `CASE WHEN ${d.jsonIsTrue('q.doc', payload('is_async'))} THEN 1 ELSE 0 END`,
  total_tokens: (d) => metric(d, 'total_tokens', true),
  tool_use_count: (d) => metric(d, 'tool_use_count', false),
  duration_ms: (d) => metric(d, 'duration_ms', true),
  source: () => `'backfill'`,
  observed_at: (d) => d.storedTimestamp('q.created_at'),
  settled_at: (d) =>
    `CASE WHEN ${text(d, '$.status')} IN (${TERMINAL_LIST}) THEN ${d.storedTimestamp('q.updated_at')} END`,
  // an unreadable updated_at (R4-3) is no observation: the row's newest is its created_at
  updated_at: (d) => `COALESCE(${d.storedTimestamp('q.updated_at')}, ${d.storedTimestamp('q.created_at')})`,
  // The row's values are the message's as of its updated_at, so that is the newest observation they
  // reflect (R2-7, R3-1): a live frame observed between created_at and updated_at only fills NULLs.
  // Never earlier than observed_at, should a host row hold updated_at < created_at.
  last_observed_at: (d) =>
    `CASE WHEN ${d.readableInstant('q.updated_at')} > ${d.readableInstant('q.created_at')} THEN ${d.storedTimestamp('q.updated_at')} ELSE ${d.storedTimestamp('q.created_at')} END`,
} satisfies Record<ColumnName, (d: Dialect) => string>;

/** A column without a source here does not compile: the record is keyed by every column name. */
function source(dialect: Dialect, column: ColumnName): string {
  return SOURCES[column](dialect);
}

/**
 * The backfill reads every message whose created_at is an instant (each document parsed once,
 * lib/store/messages.ts). R4-3, issue 48: the one instant reader (`readableInstant`: any offset,
 * `+02:00` read as the UTC instant it is) decides, as in the health check and the report; a
 * created_at that is no instant ('', year 10000, a number) gives no row, whose observed_at the
 * report could not read; the health check counts such messages unreadable, never missing.
 */
const readableMessages = (dialect: Dialect, where?: string) => ({
  fenced: true,
  where: [`${dialect.readableInstant('msg.created_at')} IS NOT NULL`, ...(where === undefined ? [] : [where])].join(
    ' AND ',
  ),
});

/**
 * `{ newest, matched }`: MAX(created_at) with every digit the host stored (or NULL) and COUNT(*) of
 * qualifying messages. Every digit: a key rounded from the comparable form would be up to 999 ns
 * earlier than a message the host stored with nanoseconds (R3-2).
 */
export function highWaterSql(dialect: Dialect): string {
  return `SELECT MAX(${dialect.exact('sm_all.created_at')}) AS newest, COUNT(*) AS matched
FROM ${subagentMessages(dialect, readableMessages(dialect))} WHERE ${QUALIFYING}`;
}

/**
 * The one unbounded INSERT … SELECT … ON CONFLICT DO NOTHING (AC-22, AC-23a): for each
 * (session, tool_call_id) the message with the greatest created_at, then greatest id (AC-21b).
 * A live row already there wins: its key conflicts and nothing is written. No conflict target:
 * a row the host's own backfill wrote (same id) is skipped too, whichever constraint meets it.
 */
export function backfillInsertSql(dialect: Dialect, read: { createdBefore?: number } = {}): string {
  const newestFirst = `${dialect.readableInstant('sm_all.created_at')} DESC, sm_all.id DESC`;
  // R3-4's rerun: only the history, messages created before the `$n` instant (capture_since).
  const messages = readableMessages(
    dialect,
    read.createdBefore === undefined
      ? undefined
      : `${dialect.readableInstant('msg.created_at')} < ${dialect.timestampParam(read.createdBefore)}`,
  );
  return `INSERT INTO ${TABLE} (${COLUMN_NAMES.join(', ')})
SELECT ${COLUMN_NAMES.map((name) => source(dialect, name)).join(',\n  ')}
FROM (
  SELECT sm_all.id, sm_all.task_session_id, sm_all.task_id, sm_all.turn_id, sm_all.meta_tool_call_id, sm_all.doc,
    sm_all.created_at, sm_all.updated_at,
    ROW_NUMBER() OVER (PARTITION BY sm_all.task_session_id, sm_all.meta_tool_call_id ORDER BY ${newestFirst}) AS newest
  FROM ${subagentMessages(dialect, messages)}
  WHERE ${QUALIFYING}
) q
WHERE q.newest = 1
ON CONFLICT DO NOTHING`;
}
