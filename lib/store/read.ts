import { COLUMN_NAMES, TABLE, TIMESTAMP_COLUMNS } from '../columns.js';
import type { Queryable, Row } from '../db/database.js';
import type { SubagentRow } from '../row.js';
import { formatRfc3339, parseStoredTimestamp } from '../time.js';

/** A stored timestamp (any dialect's text form) as RFC 3339 UTC with microseconds. */
export function readTimestamp(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const us = parseStoredTimestamp(String(value));
  if (us === undefined) throw new Error(`unreadable timestamp ${JSON.stringify(value)} in ${TABLE}`);
  return formatRfc3339(us);
}

export function toSubagentRow(row: Row): SubagentRow {
  const out: Row = { ...row };
  for (const column of TIMESTAMP_COLUMNS) out[column] = readTimestamp(row[column]);
  // last_observed_at reads as the row's newest applied observation (R2-7, R3-1, lib/merge.ts
  // newestObservation): the greater of it (NULL on a row the host's own writer made: observed_at)
  // and updated_at, which the host's writer sets at each of its writes. Same fixed-width text form:
  // the strings order as the instants.
  out.last_observed_at ??= out.observed_at;
  if ((out.updated_at as string) > (out.last_observed_at as string)) out.last_observed_at = out.updated_at;
  // The one untyped edge: the driver returns plain objects; every read SELECTs COLUMN_NAMES.
  return out as unknown as SubagentRow;
}

function orderBy(db: Queryable): string {
  return `ORDER BY ${db.dialect.comparable('observed_at')}, tool_call_id, agent_execution_id`;
}

/** A session's subagents in AC-13 order: observed_at, tool_call_id, agent_execution_id (never id). */
export async function readSession(db: Queryable, taskSessionId: string): Promise<SubagentRow[]> {
  const rows = await db.query(
    `SELECT ${COLUMN_NAMES.join(', ')} FROM ${TABLE} WHERE task_session_id = $1 ${orderBy(db)}`,
    [taskSessionId],
  );
  return rows.map(toSubagentRow);
}

export async function readTurn(db: Queryable, turnId: string): Promise<SubagentRow[]> {
  const rows = await db.query(`SELECT ${COLUMN_NAMES.join(', ')} FROM ${TABLE} WHERE turn_id = $1 ${orderBy(db)}`, [
    turnId,
  ]);
  return rows.map(toSubagentRow);
}

export async function readAll(db: Queryable): Promise<SubagentRow[]> {
  const rows = await db.query(`SELECT ${COLUMN_NAMES.join(', ')} FROM ${TABLE} ${orderBy(db)}, task_session_id`);
  return rows.map(toSubagentRow);
}
