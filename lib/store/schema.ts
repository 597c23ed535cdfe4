import { COLUMNS, CONFLICT_KEY, type Column, TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { type Dialect, SQL_TYPE_NAME } from '../db/dialect/dialect.js';
import { addLastObservedAt } from './last-observed-at.js';
import { ADD_USAGE_WRITTEN_AT, CREATE_USAGE_TABLE, USAGE_WRITTEN_AT, usageTableColumns } from './usage-table.js';

/** The host writes `id TEXT PRIMARY KEY` (PostgreSQL implies NOT NULL; SQLite does not). */
const isKey = (c: Column) => c.ddl?.includes('PRIMARY KEY') === true;

/**
 * The table's DDL: the host's own, constraint for constraint (docs/table.md, R2-10). The same text
 * is valid on PostgreSQL and SQLite.
 */
export const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
${COLUMNS.map((c) => `  ${c.name} ${SQL_TYPE_NAME[c.type]}${c.nullable || isKey(c) ? '' : ' NOT NULL'}${c.ddl ? ` ${c.ddl}` : ''}`).join(',\n')},
  UNIQUE (${CONFLICT_KEY.join(', ')}),
  FOREIGN KEY (task_session_id) REFERENCES task_sessions(id) ON DELETE CASCADE
)`;

/**
 * The health check's row side reads rows by observation time (docs/health.md). On SQLite the
 * index is on the same microsecond-exact expression the statements compare, since the stored
 * text's width varies and the bare column would not order like the instant.
 */
export function observedAtIndex(dialect: Dialect): string {
  return `CREATE INDEX IF NOT EXISTS idx_subagents_observed_at ON ${TABLE} (${dialect.comparable('observed_at')})`;
}

export interface TableIndex {
  /** the host's name for it */
  name: string;
  column: string;
  /** the name an earlier version of this project gave the same index */
  legacyName: string;
}

/** The host's three indexes, under the host's names (docs/table.md). */
export const INDEXES: readonly TableIndex[] = [
  { name: 'idx_subagents_session_id', column: 'task_session_id', legacyName: `idx_${TABLE}_task_session_id` },
  { name: 'idx_subagents_task_id', column: 'task_id', legacyName: `idx_${TABLE}_task_id` },
  { name: 'idx_subagents_turn_id', column: 'turn_id', legacyName: `idx_${TABLE}_turn_id` },
];

/**
 * DEFAULTs of the host's DDL that a table from version 0.1 lacks, so an insert in the host's own
 * style (without `agent_execution_id`) works there too. Only added where missing (a table the host
 * created has them and may not be ours to alter); on SQLite a DEFAULT needs a rebuild: left alone.
 */
async function addMissingDefaults(db: Queryable): Promise<void> {
  const defaults = await db.query<{ column_name: string; column_default: string | null }>(db.dialect.columnDefaults, [
    TABLE,
  ]);
  for (const column of COLUMNS) {
    const wanted = column.ddl?.match(/DEFAULT ('[^']*'|\d+)/)?.[1];
    const current = defaults.find((d) => d.column_name === column.name);
    if (wanted === undefined || current === undefined || current.column_default !== null) continue;
    const statement = db.dialect.setColumnDefault(TABLE, column.name, wanted);
    if (statement) await db.query(statement);
  }
}

export const createIndexSql = (index: TableIndex) =>
  `CREATE INDEX IF NOT EXISTS ${index.name} ON ${TABLE} (${index.column})`;

/**
 * Creates the table, its indexes and the dialect's helpers; existing data is untouched (AC-17).
 * A column that already has a plain one-column index (the host's, or one an earlier version of
 * this project made) gets no second one: an index of ours under its old name is renamed to the
 * host's name, so whichever side boots next finds every index it would create (R2-10).
 */
export async function ensureSubagentTable(db: Queryable): Promise<void> {
  await db.query(CREATE_TABLE);
  await addLastObservedAt(db); // a table the host (or an earlier version) created lacks it (R2-7)
  await addMissingDefaults(db);
  const existing = await db.query<{ index_name: string; column_name: string }>(db.dialect.singleColumnIndexes, [TABLE]);
  for (const index of INDEXES) {
    const covering = existing.filter((e) => e.column_name === index.column).map((e) => e.index_name);
    if (covering.includes(index.name)) continue;
    if (covering.includes(index.legacyName)) {
      for (const statement of db.dialect.renameIndex(index.legacyName, index.name, createIndexSql(index))) {
        await db.query(statement);
      }
      continue;
    }
    if (covering.length === 0) await db.query(createIndexSql(index));
  }
  await db.query(observedAtIndex(db.dialect));
  for (const statement of db.dialect.extraDdl) await db.query(statement);
  // R6-2: run usage lives beside the host's table, never in it.
  await db.query(CREATE_USAGE_TABLE);
  // R6-7: a usage table created before its write clock gains it (its rows keep NULL: not stamped).
  if (!(await usageTableColumns(db)).has(USAGE_WRITTEN_AT)) await db.query(ADD_USAGE_WRITTEN_AT);
}
