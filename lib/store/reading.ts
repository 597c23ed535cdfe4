import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { postgresJsonDocument } from '../db/dialect/postgres.js';
import { SubagentContextError } from '../errors.js';

/*
 * R3-3 (docs/health.md#a-store-the-host-activated): since release 0.89 the host creates
 * `task_session_subagents` and may write the keys itself, so health, report and export can meet a
 * store where nothing of this project's exists yet: no `subagent_context_json(text)` on PostgreSQL,
 * no `last_observed_at`, no `idx_subagents_observed_at`. Those read paths take their connection
 * through `forReading`, which picks a way to read host metadata that the store supports, and
 * names `migrate` where none exists. It creates nothing: a read path never writes.
 */

/** The host's expression index over metadata's tool_call_id (docs/table.md, Appendix B). */
export const HOST_TOOL_CALL_INDEX = 'idx_messages_metadata_tool_call_id';

/** How metadata is parsed on this store (PostgreSQL; SQLite's json_valid needs nothing of ours). */
export type JsonGuard =
  /** our guard function, created by migrate */
  | 'function'
  /** PostgreSQL 16+: pg_input_is_valid, inline */
  | 'inline'
  /** the host's index parses every document on insert, so a plain cast cannot fail */
  | 'host-index';

export interface StoreFacts {
  /** `task_session_subagents` exists */
  table: boolean;
  /** the host's metadata index exists (and on PostgreSQL is valid) */
  hostToolCallIndex: boolean;
  jsonGuard: JsonGuard | undefined;
}

export class NotMigratedError extends SubagentContextError {
  override readonly name = 'NotMigratedError';
  constructor(
    readonly missing: string,
    why: string,
  ) {
    super(
      `${missing} does not exist in this database, and ${why}; run \`subagent-context migrate\` ` +
        '(or invoke the migrate function) once to create it, then run this command again',
    );
  }
}

const POSTGRES_FACTS = `SELECT
  to_regclass($1::text) IS NOT NULL AS has_table,
  to_regprocedure('subagent_context_json(text)') IS NOT NULL AS has_function,
  current_setting('server_version_num')::int >= 160000 AS has_input_is_valid,
  EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
    WHERE c.relname = $2 AND ns.nspname = current_schema() AND i.indisvalid) AS has_host_index`;

const SQLITE_FACTS = `SELECT
  EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1) AS has_table,
  EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' AND tbl_name = 'task_session_messages' AND name = $2) AS has_host_index`;

/** One catalog read: what of ours and of the host's this store has. */
export async function readStoreFacts(db: Queryable): Promise<StoreFacts> {
  const postgres = db.dialect.name === 'postgres';
  const [row] = await db.query<Record<string, unknown>>(postgres ? POSTGRES_FACTS : SQLITE_FACTS, [
    TABLE,
    HOST_TOOL_CALL_INDEX,
  ]);
  const yes = (column: string) => row?.[column] === true || Number(row?.[column]) === 1;
  const hostToolCallIndex = yes('has_host_index');
  let jsonGuard: JsonGuard | undefined;
  if (postgres) {
    if (yes('has_function')) jsonGuard = 'function';
    else if (yes('has_input_is_valid')) jsonGuard = 'inline';
    else if (hostToolCallIndex) jsonGuard = 'host-index';
  }
  return { table: yes('has_table'), hostToolCallIndex, jsonGuard };
}

/** The dialect with its metadata parser swapped for one this store supports (same NULL-for-invalid contract). */
function withJsonGuard(dialect: Dialect, guard: JsonGuard | undefined): Dialect {
  if (dialect.name !== 'postgres' || guard === 'function' || guard === undefined) return dialect;
  // The depth rule stays (R2-1 parity: nothing deeper than SQLite reads), whatever parses.
  const jsonDocument = postgresJsonDocument(
    guard === 'inline'
      ? (column: string) => `(CASE WHEN pg_input_is_valid(${column}, 'jsonb') THEN (${column})::jsonb END)`
      : // Every document passed the host index's own metadata::jsonb cast on insert.
        (column: string) => `(${column})::jsonb`,
  );
  return { ...dialect, jsonDocument };
}

export interface ReadingConnection extends Queryable {
  readonly facts: StoreFacts;
}

/**
 * `db` as the read paths (health, report, export) use it: the same connection, its dialect's
 * metadata parser one this store has. Throws NotMigratedError (naming migrate) when the table is
 * missing, or when PostgreSQL 15 has neither our guard nor the host's index to make a cast safe.
 */
export async function forReading(db: Queryable): Promise<ReadingConnection> {
  const facts = await readStoreFacts(db);
  if (!facts.table) {
    throw new NotMigratedError(TABLE, 'nothing (neither the host nor this project) has created it');
  }
  if (db.dialect.name === 'postgres' && facts.jsonGuard === undefined) {
    throw new NotMigratedError(
      'the function subagent_context_json(text)',
      `this PostgreSQL (before 16) cannot otherwise read host metadata that may not be JSON (no ${HOST_TOOL_CALL_INDEX} either)`,
    );
  }
  const dialect = withJsonGuard(db.dialect, facts.jsonGuard);
  return { dialect, facts, query: <T>(sql: string, params?: readonly unknown[]) => db.query<T>(sql, params) };
}
