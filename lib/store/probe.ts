import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { DatabaseError } from '../db/errors.js';

/** The host's tables every command reads (docs/table.md): without them this is not the host's store. */
export const HOST_TABLES = ['task_sessions', 'task_session_messages'] as const;

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
