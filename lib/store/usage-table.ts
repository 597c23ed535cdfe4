import { CONFLICT_KEY } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { SQL_TYPE_NAME, type SqlType } from '../db/dialect/dialect.js';
import { USAGE_COUNT_FIELDS } from '../producer/usage/run-usage.js';

/**
 * R6-2 (docs/spend.md#the-usage-table): our table beside the host's, one row per subagent key with
 * the run usage of the newest observation that carried one. No column is added to the host's
 * `task_session_subagents`: the host's writer and health never see this table.
 */
export const USAGE_TABLE = 'task_session_subagent_usage';

/** The subagent key, the host table's UNIQUE constraint in its order: a usage row joins its subagent on it. */
export const USAGE_KEY = CONFLICT_KEY;

export interface UsageColumn {
  readonly name: string;
  readonly type: SqlType;
  readonly nullable: boolean;
}

/**
 * Every column, R6-1's fields under their own names. Counts and cost are BIGINT: a run's tokens
 * pass 2^31 (R6-1 allows any safe integer); SQLite's INTEGER is 64-bit already. `complete` is
 * 0/1 (NULL: not reported), `observed_at` the observation the usage is as of.
 */
export const USAGE_COLUMNS: readonly UsageColumn[] = [
  ...USAGE_KEY.map((name) => ({ name, type: 'text' as const, nullable: false })),
  ...USAGE_COUNT_FIELDS.map((name) => ({ name, type: 'bigint' as const, nullable: true })),
  { name: 'cost_subcents', type: 'bigint', nullable: true },
  { name: 'cost_source', type: 'text', nullable: true },
  { name: 'model', type: 'text', nullable: true },
  { name: 'complete', type: 'integer', nullable: true },
  { name: 'observed_at', type: 'timestamp', nullable: false },
];

/**
 * R6-7 (docs/otlp.md#run-usage): when our writer last wrote the row, by the database's clock (UTC).
 * `observed_at` is the observation the usage is as of, which `spend` sets to its row's newest
 * (so the row's merge leaves the row as it was): it says nothing of when the usage arrived. The
 * OTLP export needs that to send usage written after a span was sent. Not one of R6-1's fields:
 * the writers bind USAGE_COLUMNS and the upsert stamps this itself. NULL: written by someone else.
 */
export const USAGE_WRITTEN_AT = 'written_at';

/** Adds the write clock to a usage table created before it (R6-7); both dialects. */
export const ADD_USAGE_WRITTEN_AT = `ALTER TABLE ${USAGE_TABLE} ADD COLUMN ${USAGE_WRITTEN_AT} ${SQL_TYPE_NAME.timestamp}`;

/** The same text is valid on PostgreSQL and SQLite; deleting a session deletes its usage (R6-2). */
export const CREATE_USAGE_TABLE = `CREATE TABLE IF NOT EXISTS ${USAGE_TABLE} (
${USAGE_COLUMNS.map((c) => `  ${c.name} ${SQL_TYPE_NAME[c.type]}${c.nullable ? '' : ' NOT NULL'}`).join(',\n')},
  ${USAGE_WRITTEN_AT} ${SQL_TYPE_NAME.timestamp},
  PRIMARY KEY (${USAGE_KEY.join(', ')}),
  FOREIGN KEY (task_session_id) REFERENCES task_sessions(id) ON DELETE CASCADE
)`;

/** The usage table's column names (empty: no table). */
export async function usageTableColumns(db: Queryable): Promise<Set<string>> {
  const columns = await db.query<{ column_name: string }>(db.dialect.columnDefaults, [USAGE_TABLE]);
  return new Set(columns.map((c) => c.column_name));
}

/**
 * Whether the usage table's columns, as a catalog read lists them (none: no table), hold every
 * R6-1 column above: a store migrate has not reached since R6-2, or one the host activated itself,
 * has none, and the readers then read no usage and say "spend not collected", never a 0 (R6-2).
 */
export function isUsageTable(columnNames: ReadonlySet<string>): boolean {
  return USAGE_COLUMNS.every((c) => columnNames.has(c.name));
}
