import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { STATEMENT_TIMEOUT_SECONDS } from '../lib/defaults.js';
import { createHealthHandler } from '../lib/health/handler.js';

export type { HealthReport } from '../lib/health/report.js';

/**
 * Scheduled (EventBridge) divergence check, docs/health.md: the 5-minute window by default, the
 * full audit for `{ "kind": "full" }`. DATABASE_URL deployed: from the SSM SecureString.
 */
export const handler = createHealthHandler({
  db: () => databaseFromEnv({ statementTimeoutMs: STATEMENT_TIMEOUT_SECONDS.health * 1000 }),
  loadConfig: loadDatabaseUrl,
});
