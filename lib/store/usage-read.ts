import type { Queryable, Row } from '../db/database.js';
import { readTimestamp } from './read.js';
import { USAGE_COLUMNS, USAGE_KEY, USAGE_TABLE } from './usage-table.js';

/** One stored usage row as our writers leave it: counts as numbers, `observed_at` as RFC 3339 UTC. */
export type UsageRow = Record<(typeof USAGE_KEY)[number], string> & {
  [name: string]: string | number | null;
};

/**
 * A BIGINT reads back as text on PostgreSQL (the driver keeps 64 bits exact); our writers store
 * safe integers only (R6-1), so a number is exact here. Anything else is returned as stored.
 */
const asNumber = (value: unknown) =>
  typeof value === 'string' && /^\d+$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;

function toUsageRow(row: Row): UsageRow {
  const out: Row = {};
  for (const column of USAGE_COLUMNS) {
    const value = row[column.name];
    out[column.name] =
      column.name === 'observed_at' ? readTimestamp(value) : column.type === 'text' ? value : asNumber(value);
  }
  return out as UsageRow;
}

/** A session's stored usage rows (R6-2), in key order. */
export async function readSessionUsage(db: Queryable, taskSessionId: string): Promise<UsageRow[]> {
  const rows = await db.query(
    `SELECT ${USAGE_COLUMNS.map((c) => c.name).join(', ')} FROM ${USAGE_TABLE} WHERE task_session_id = $1 ORDER BY ${USAGE_KEY.join(', ')}`,
    [taskSessionId],
  );
  return rows.map(toUsageRow);
}
