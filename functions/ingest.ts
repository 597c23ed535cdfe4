import { signedSqs } from '../lib/aws/sqs.js';
import { loadDatabaseUrl } from '../lib/config/database-url.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { createIngestHandler } from '../lib/ingest/handler.js';

/**
 * SQS FIFO → task_session_subagents (docs/ingest.md). Env: DATABASE_URL (deployed: read once from the
 * SSM SecureString named by DATABASE_URL_SSM_PARAMETER), DLQ_URL. Module scope: built once per
 * container, reused by warm invocations. The DLQ is reached through a signed fetch (lib/aws/sqs.ts,
 * not the ~450 KiB SDK client); its endpoint comes from the region (or AWS_ENDPOINT_URL_SQS
 * locally), never from DLQ_URL's host: an emulator's queue URLs name hosts that need not resolve.
 */
export const handler = createIngestHandler({
  db: databaseFromEnv,
  sqs: signedSqs,
  dlqUrl: process.env.DLQ_URL,
  loadConfig: loadDatabaseUrl,
});
