import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { createMigrateHandler } from '../lib/migrate/handler.js';

export type { MigrationReport } from '../lib/migrate/run-migration.js';

/** Operator-invoked (docs/migrate.md) on DATABASE_URL (deployed: from the SSM SecureString). */
export const handler = createMigrateHandler({ db: databaseFromEnv, loadConfig: loadDatabaseUrl });
