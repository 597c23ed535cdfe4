import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { createHealthHandler } from '../lib/health/handler.js';

export type { HealthReport } from '../lib/health/report.js';

/**
 * Scheduled (EventBridge) divergence check, docs/health.md: the 5-minute window by default, the
 * full audit for `{ "kind": "full" }`. DATABASE_URL deployed: from the SSM SecureString.
 */
export const handler = createHealthHandler({ db: databaseFromEnv, loadConfig: loadDatabaseUrl });
