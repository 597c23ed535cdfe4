import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { STATEMENT_TIMEOUT_SECONDS } from '../lib/defaults.js';
import { createMigrateHandler } from '../lib/migrate/handler.js';

export type { MigrationReport } from '../lib/migrate/run-migration.js';

/** Operator-invoked (docs/migrate.md) on DATABASE_URL (deployed: from the SSM SecureString). */
export const handler = createMigrateHandler({
  db: () => databaseFromEnv({ statementTimeoutMs: STATEMENT_TIMEOUT_SECONDS.migrate * 1000 }),
  loadConfig: loadDatabaseUrl,
});
