import { TABLE } from '../columns.js';
import type { Database } from '../db/database.js';

const COLUMN = 'last_observed_at';

/** Whether the table already has the column, per dialect (SQLite has no ADD COLUMN IF NOT EXISTS). */
function hasColumnSql(db: Database): string {
  return db.dialect.name === 'postgres'
    ? 'SELECT 1 AS present FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2'
    : 'SELECT 1 AS present FROM pragma_table_info($1) WHERE name = $2';
}

/**
 * R2-7 (docs/merge.md, docs/migrate.md): a table created before `last_observed_at` existed (ours or
 * the host's) gets the column, nullable, and every row's value filled from observed_at, in one
 * transaction. Runs only when the column is missing, so a migrate re-run costs one catalog read.
 * Rows the host's writer adds later keep NULL, which reads as observed_at.
 * @returns whether the column was added
 */
export async function addLastObservedAt(db: Database): Promise<boolean> {
  const present = await db.query(hasColumnSql(db), [TABLE, COLUMN]);
  if (present.length > 0) return false;
  await db.transaction(async (tx) => {
    const ifNotExists = tx.dialect.name === 'postgres' ? 'IF NOT EXISTS ' : '';
    await tx.query(`ALTER TABLE ${TABLE} ADD COLUMN ${ifNotExists}${COLUMN} TIMESTAMP`);
    await tx.query(`UPDATE ${TABLE} SET ${COLUMN} = observed_at WHERE ${COLUMN} IS NULL`);
  });
  return true;
}
