import { TABLE } from '../columns.js';
import type { Database, Queryable } from '../db/database.js';

const COLUMN = 'last_observed_at';

/** Whether the table already has the column, per dialect (SQLite has no ADD COLUMN IF NOT EXISTS). */
function hasColumnSql(db: Queryable): string {
  return db.dialect.name === 'postgres'
    ? 'SELECT 1 AS present FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2'
    : 'SELECT 1 AS present FROM pragma_table_info($1) WHERE name = $2';
}

const isDatabase = (db: Queryable): db is Database => typeof (db as Partial<Database>).transaction === 'function';

/**
 * R2-7 (docs/merge.md#replays-and-older-frames, docs/migrate.md): a table created without
 * `last_observed_at` (by the host, or by an earlier version of this project) gets the column,
 * nullable, and every row's value filled from observed_at, in one transaction. Runs only when the
 * column is missing, so every later schema step costs one catalog read. Rows the host's writer
 * adds later keep NULL, which reads as observed_at.
 * @returns whether the column was added
 */
export async function addLastObservedAt(db: Queryable): Promise<boolean> {
  const present = await db.query(hasColumnSql(db), [TABLE, COLUMN]);
  if (present.length > 0) return false;
  const add = async (q: Queryable) => {
    const ifNotExists = q.dialect.name === 'postgres' ? 'IF NOT EXISTS ' : '';
    await q.query(`ALTER TABLE ${TABLE} ADD COLUMN ${ifNotExists}${COLUMN} TIMESTAMP`);
    await q.query(`UPDATE ${TABLE} SET ${COLUMN} = observed_at WHERE ${COLUMN} IS NULL`);
  };
  if (isDatabase(db)) await db.transaction(add);
  else await add(db);
  return true;
}
