import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { SendMessageBatchClient } from '../aws/sqs.js';
import { forgetDatabaseUrl } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { deadlineFrom, phaseDeadline } from '../deadline.js';
import { atTheEdge } from '../edge.js';
import { createMetrics, logger as defaultLogger } from '../observability.js';
import type { Micros } from '../time.js';
import { publishBatchMetrics } from './metrics.js';
import { processBatch } from './process-batch.js';
import type { BatchReport } from './report.js';

export interface IngestHandlerDeps {
  /** the database, resolved per invocation; return a module-scope instance so warm invocations reuse it */
  db: () => Database;
  /** SendMessageBatch on the DLQ: lib/aws/sqs.ts `signedSqs` deployed, `sqsViaSdk(client)` elsewhere */
  sqs: SendMessageBatchClient;
  /** runs before each batch (deployed: reads DATABASE_URL from SSM once) */
  loadConfig?: () => Promise<void>;
  /** URL of the FIFO dead-letter queue (DLQ_URL) */
  dlqUrl: string | undefined;
  metrics?: Metrics;
  logger?: Logger;
  /** the writer's clock; tests pin it */
  clock?: () => Micros;
  /** called with each batch's counts, lag and round trips (CLI summaries, benchmarks) */
  onReport?: (report: BatchReport) => void;
  /**
   * called when the database rejected the credentials or the database name (28xxx, 3D000: R2-4); by default forgets the URL
   * read from SSM so the next invocation reads the (rotated) secret again
   */
  onCredentialsRejected?: () => void;
}

/** The writes leave a quarter of the remaining time, at most 2 s, for parking on the DLQ. */
const WRITE_PHASE = { share: 0.25, maxReserveMs: 2000 };

export type IngestHandler = (event: SQSEvent, context?: Context) => Promise<SQSBatchResponse>;

/**
 * The ingest Lambda (SQS FIFO event source with ReportBatchItemFailures), docs/ingest.md. Also what
 * the local poller, the CLI and the benchmarks drive. Throws only when it cannot work at all
 * (no DLQ_URL, no database configuration): then the whole batch is redelivered.
 */
export function createIngestHandler(deps: IngestHandlerDeps): IngestHandler {
  const metrics = deps.metrics ?? createMetrics();
  const log = deps.logger ?? defaultLogger;
  // R2-6: what the function returns and throws leaves through the redaction step (lib/edge.ts)
  return atTheEdge(async (event, context) => {
    await deps.loadConfig?.();
    if (!deps.dlqUrl)
      throw new Error('DLQ_URL is not set: give the URL of the FIFO dead-letter queue invalid frames are parked on');
    if (context) log.addContext(context);
    // R2-5: everything ends RESPONSE_MARGIN_MS before the Lambda would; the database work ends
    // earlier still, leaving time to park on the DLQ (docs/ingest.md).
    const deadline = deadlineFrom(context);
    const db = deps.db();
    const writesBy = phaseDeadline(deadline, WRITE_PHASE);
    if (writesBy !== undefined) db.setDeadline(writesBy, { caller: 'function', work: 'ingest' });
    let result: Awaited<ReturnType<typeof processBatch>>;
    try {
      result = await processBatch(event, {
        db,
        sqs: deps.sqs,
        dlqUrl: deps.dlqUrl,
        logger: log,
        clock: deps.clock,
        deadline,
      });
    } finally {
      if (writesBy !== undefined) db.setDeadline(undefined);
    }
    const { response, report, credentialsRejected } = result;
    if (credentialsRejected) (deps.onCredentialsRejected ?? forgetDatabaseUrl)();
    publishBatchMetrics(metrics, report);
    deps.onReport?.(report);
    return response;
  });
}
