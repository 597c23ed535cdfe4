import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { PUBLISH_TIMEOUT_SECONDS } from '../lib/defaults.js';
import { createPublishHandler } from '../lib/publish/handler.js';

export type { PublishSummary } from '../lib/publish/run.js';

/**
 * Scheduled report publish (docs/publish.md), off unless publishEnabled: the page and its JSON
 * document to the stack's bucket, under a dated folder and then latest/.
 */
export const handler = createPublishHandler({
  db: () => databaseFromEnv({ statementTimeoutMs: PUBLISH_TIMEOUT_SECONDS * 1000 }),
  loadConfig: loadDatabaseUrl,
});
