import { loadDatabaseUrl, refreshingCredentials } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { runMigration, type MigrationReport } from '../lib/migrate/run-migration.js';

export type { MigrationReport } from '../lib/migrate/run-migration.js';

/**
 * Operator-invoked (docs/migrate.md): schema plus the one transactional backfill on DATABASE_URL.
 * Rejects with a message naming the failed step; invoking again retries.
 */
export async function handler(_event?: unknown): Promise<MigrationReport> {
  await loadDatabaseUrl(); // deployed: from the SSM SecureString named in serverless.yml
  return refreshingCredentials(() => runMigration(databaseFromEnv()));
}
