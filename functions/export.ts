import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { EXPORT_TIMEOUT_SECONDS } from '../lib/defaults.js';
import { createExportHandler } from '../lib/export/handler.js';

export type { ExportSummary } from '../lib/export/run.js';

/**
 * Scheduled OTLP export (docs/otlp.md#scheduled-export), off unless exportEnabled: the fan-out
 * trees that changed since the stored position, to the endpoint named in SSM.
 */
export const handler = createExportHandler({
  db: () => databaseFromEnv({ statementTimeoutMs: EXPORT_TIMEOUT_SECONDS * 1000 }),
  loadConfig: loadDatabaseUrl,
});
