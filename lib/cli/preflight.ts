import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { DatabaseError } from '../db/errors.js';
import { describeShape, hostShape, MIGRATED_TABLES, missingTables } from '../store/probe.js';
import { terminalSafe } from '../terminal-text.js';
import { EXIT } from './exit-codes.js';
import { cliFailure } from './failure.js';

const list = (names: readonly string[]) => `${names.join(' or ')} table`;

/**
 * Every command reads the host's tables: a database without them (an empty one, the wrong one), or
 * whose tables lack a column every command reads (issue 51), is named as such before anything
 * runs or is written, in the same words on both dialects.
 */
export async function requireHostStore(db: Queryable): Promise<void> {
  const shape = await hostShape(db);
  const problem = describeShape(shape);
  if (problem === undefined) return;
  throw cliFailure(
    `${await databaseName(db)} ${problem}`,
    shape.missingTables.length > 0 ? 'not_host_database' : 'host_shape',
  );
}

/**
 * Which database was reached, in words: a URL without a database name reaches the server's default
 * (`postgres`), so "not the host's store" names it (issue 34). `the database` when it cannot be read.
 */
async function databaseName(db: Queryable): Promise<string> {
  try {
    if (db.dialect.name === 'postgres') {
      const [row] = await db.query<{ name: string }>('SELECT current_database() AS name');
      return row ? `the database "${terminalSafe(row.name)}"` : 'the database';
    }
    const [row] = await db.query<{ file: string }>("SELECT file FROM pragma_database_list WHERE name = 'main'");
    return row?.file ? `the SQLite store ${terminalSafe(row.file)}` : 'the SQLite store';
  } catch {
    return 'the database';
  }
}

/**
 * A command that needs what migrate creates. `attention` for health (a store not yet activated is
 * something to look at, exit 3, as its `not_activated` status), `failure` for ingest (it cannot run).
 */
export async function requireMigrated(db: Queryable, exitCode: 1 | 3 = EXIT.failure): Promise<void> {
  await requireHostStore(db);
  const missing = await missingTables(db, MIGRATED_TABLES);
  if (missing.length > 0) throw cliFailure(`the store has no ${list(missing)}`, 'not_migrated', exitCode);
}

/**
 * A command that writes (ingest) finds a store it may not write once, before any frame is spent
 * (issue 51): an UPDATE that matches no row still takes the write lock (SQLite) and is checked
 * against read-only transactions and privileges (PostgreSQL), so it fails exactly where the
 * first write would, and changes nothing where it succeeds.
 */
export async function requireWritable(db: Queryable, what: string): Promise<void> {
  try {
    await db.query(`UPDATE ${TABLE} SET tool_call_id = tool_call_id WHERE 1 = 0`);
  } catch (err) {
    if (!(err instanceof DatabaseError)) throw err;
    throw cliFailure(`${what}: the store refused a write (${err.detail})`, err.hintClass);
  }
}
