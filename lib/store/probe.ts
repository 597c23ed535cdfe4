import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { DatabaseError } from '../db/errors.js';

/** The host's tables every command reads (docs/table.md): without them this is not the host's store. */
export const HOST_TABLES = ['task_sessions', 'task_session_messages'] as const;

/**
 * The columns of the host's tables that every command reads (docs/table.md#host-tables-this-project-reads).
 * Optional ones (`task_sessions.started_at`, `tasks.title`, the cost ledger) are asked of the
 * catalog where they are read (lib/report/catalog.ts).
 */
export const HOST_COLUMNS: Readonly<Record<(typeof HOST_TABLES)[number], readonly string[]>> = {
  task_sessions: ['id', 'task_id'],
  task_session_messages: ['id', 'task_session_id', 'task_id', 'turn_id', 'metadata', 'created_at', 'updated_at'],
};

/** What migrate creates: without them the store was never migrated. */
export const MIGRATED_TABLES = ['kandev_meta', TABLE] as const;

/**
 * The tables of `names` this database lacks. A probe that selects nothing: a missing table is
 * 42P01 on PostgreSQL and SQLITE_ERROR (42000) on SQLite, the only failure a statement this simple
 * can have on a reachable database; anything else (unreachable, credentials) is thrown as it is.
 */
export async function missingTables(db: Queryable, names: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const name of names) {
    try {
      await db.query(`SELECT 1 FROM ${name} WHERE 1 = 0`);
    } catch (err) {
      if (!(err instanceof DatabaseError) || (err.sqlstate !== '42P01' && err.sqlstate !== '42000')) throw err;
      missing.push(name);
    }
  }
  return missing;
}

/** How the host's tables differ from the shape every command reads: the missing tables, then the missing columns. */
export interface HostShape {
  missingTables: string[];
  /** `table.column`, for tables that exist */
  missingColumns: string[];
}

/**
 * The host store's shape, read from the catalog (issue 51): a catalog read fails on no missing
 * object, so it runs inside a transaction too (a failed statement would abort a PostgreSQL one),
 * and before anything is written a store of another shape is named as such.
 */
export async function hostShape(db: Queryable): Promise<HostShape> {
  const shape: HostShape = { missingTables: [], missingColumns: [] };
  for (const table of HOST_TABLES) {
    const present = new Set(
      (await db.query<{ column_name: string }>(db.dialect.columnDefaults, [table])).map((c) => c.column_name),
    );
    if (present.size === 0) shape.missingTables.push(table);
    else for (const c of HOST_COLUMNS[table]) if (!present.has(c)) shape.missingColumns.push(`${table}.${c}`);
  }
  return shape;
}

/** The shape's difference in words (`has no task_sessions table`, `has no task_session_messages.metadata column`), or undefined when it fits. */
export function describeShape(shape: HostShape): string | undefined {
  if (shape.missingTables.length > 0) return `has no ${shape.missingTables.join(' or ')} table`;
  if (shape.missingColumns.length === 0) return undefined;
  const s = shape.missingColumns.length > 1 ? 's' : '';
  return `is not the host's shape: it has no ${shape.missingColumns.join(', ')} column${s} (docs/table.md#host-tables-this-project-reads)`;
}
