import { COLUMNS, CONFLICT_KEY, TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';

const SQL_TYPE = { text: 'TEXT', integer: 'INTEGER', bigint: 'BIGINT', timestamp: 'TIMESTAMP' } as const;

/** The table's DDL (docs/table.md). The same text is valid on PostgreSQL and SQLite. */
export const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
${COLUMNS.map((c) => `  ${c.name} ${SQL_TYPE[c.type]}${c.nullable ? '' : ' NOT NULL'}${c.ddl ? ` ${c.ddl}` : ''}`).join(',\n')},
  UNIQUE (${CONFLICT_KEY.join(', ')})
)`;

export const CREATE_INDEXES = ['task_session_id', 'task_id', 'turn_id'].map(
  (column) => `CREATE INDEX IF NOT EXISTS idx_${TABLE}_${column} ON ${TABLE} (${column})`,
);

/** Creates the table, its indexes and the dialect's helpers; existing data is untouched (AC-17). */
export async function ensureSubagentTable(db: Queryable): Promise<void> {
  for (const statement of [CREATE_TABLE, ...CREATE_INDEXES, ...db.dialect.extraDdl]) {
    await db.query(statement);
  }
}
