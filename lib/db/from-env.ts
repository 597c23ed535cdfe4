import type { Database } from './database.js';
import { type OpenOptions, openDatabase } from './open.js';

let cached: { url: string; db: Database } | undefined;

/**
 * The function's database from DATABASE_URL, opened once at module scope and reused by warm
 * invocations (a dead pooled connection is replaced by the adapter, see neon.ts).
 */
export function databaseFromEnv(options: Pick<OpenOptions, 'statementTimeoutMs'> = {}): Database {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set: give postgres://… (Neon/PostgreSQL) or sqlite:<path>; in AWS it comes from the SSM parameter named in serverless.yml',
    );
  }
  if (cached?.url !== url) {
    // A new URL (a rotated secret): the old pool's connections are useless; close them quietly.
    void cached?.db.close().catch(() => undefined);
    cached = { url, db: openDatabase(url, options) };
  }
  return cached.db;
}

/** Closes and forgets the cached database (tests, local stack shutdown). */
export async function closeDatabaseFromEnv(): Promise<void> {
  const current = cached;
  cached = undefined;
  await current?.db.close();
}
