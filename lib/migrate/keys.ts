import type { Queryable } from '../db/database.js';

/** The host's own kandev_meta shape (docs/table.md#host-tables-this-project-reads); created only when the host has not. */
export const CREATE_META_TABLE = `CREATE TABLE IF NOT EXISTS kandev_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT '')`;

/** A key already present — even a legacy second-precision one — is never rewritten (docs/migrate.md#6-the-keys). */
export async function writeKeyOnce(db: Queryable, key: string, value: string): Promise<void> {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
}
