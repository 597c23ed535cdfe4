import { randomUUID } from 'node:crypto';
import { COLUMNS } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { foldByKey } from '../merge.js';
import { rowKey, type SubagentWrite } from '../row.js';
import { nowMicros, type Micros } from '../time.js';
import { upsertSql } from './upsert.js';

const sqlByDialect = new Map<string, string>();

/**
 * Persists writes given in arrival order so the table ends exactly as one upsert per write, in
 * order, would leave it — in one statement (one round trip) whatever the batch size.
 */
export async function writeBatch(db: Queryable, writes: readonly SubagentWrite[], now: Micros = nowMicros()): Promise<void> {
  if (writes.length === 0) return;
  const { dialect } = db;
  const updatedAt = dialect.encodeTimestamp(now);
  // Rows in conflict-key order: concurrent batches sharing keys then lock them in one order and
  // cannot deadlock (40P01) against each other on PostgreSQL.
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
  let sql = sqlByDialect.get(dialect.name);
  if (!sql) {
    sql = upsertSql(dialect);
    sqlByDialect.set(dialect.name, sql);
  }
  await db.query(sql, dialect.bindRows(COLUMNS, rows));
}
