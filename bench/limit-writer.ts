import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { COLUMNS } from '../lib/columns.js';
import type { Database } from '../lib/db/database.js';
import { parseFrame } from '../lib/frame/parse.js';
import { foldByKey } from '../lib/merge.js';
import { normalizeFrame } from '../lib/normalize.js';
import { rowKey, type SubagentWrite } from '../lib/row.js';
import { upsertSql } from '../lib/store/upsert.js';
import { nowMicros } from '../lib/time.js';

/** One batch's statement parameters, bound before the clock starts. */
export interface PreparedStatement {
  params: unknown[];
}

/**
 * The database's own limit for the handler's work: the same rows (parsed, normalized, folded per
 * batch and sorted by conflict key, ids and updated_at bound) prepared before timing, so only the
 * one `INSERT … SELECT FROM unnest(…) ON CONFLICT` statement per batch is timed, issued straight
 * through the same driver and connection. Whatever the handler spends above this is its own work.
 */
export function prepareLimitBatch(db: Database, event: SQSEvent): PreparedStatement | undefined {
  const { dialect } = db;
  const writes: SubagentWrite[] = [];
  for (const record of event.Records) {
    const parsed = parseFrame(record.body);
    if (!parsed.ok) continue;
    const normalized = normalizeFrame(parsed.frame);
    if (normalized.kind === 'write') writes.push(normalized.row);
  }
  if (writes.length === 0) return undefined;
  const updatedAt = dialect.encodeTimestamp(nowMicros());
  const folded = foldByKey(writes, rowKey)
    .map((write) => ({ key: rowKey(write), write }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const rows = folded.map(({ write }) =>
    COLUMNS.map(({ name }) => {
      if (name === 'id') return randomUUID();
      if (name === 'updated_at') return updatedAt;
      const value = write[name as keyof SubagentWrite];
      return typeof value === 'bigint' ? dialect.encodeTimestamp(value) : value;
    }),
  );
  return { params: dialect.bindRows(COLUMNS, rows) };
}

export function limitSql(db: Database): string {
  return upsertSql(db.dialect);
}
