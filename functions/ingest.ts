import { SQSClient } from '@aws-sdk/client-sqs';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { createIngestHandler } from '../lib/ingest/handler.js';

// Module scope: created once per container and reused by warm invocations.
const sqs = new SQSClient({});

/** SQS FIFO → task_session_subagents (SPEC §7). Env: DATABASE_URL, DLQ_URL. */
export const handler = createIngestHandler({ db: databaseFromEnv, sqs, dlqUrl: process.env.DLQ_URL });
