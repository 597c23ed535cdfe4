import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { GetQueueAttributesCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { type DeadLetter, drainDeadLetters } from '../lib/cli/dead-letters.js';
import { createIngestTotals, type IngestTotals } from '../lib/cli/ingest-totals.js';
import type { Database } from '../lib/db/database.js';
import { MAX_RECEIVE_COUNT } from '../lib/defaults.js';
import { createIngestHandler } from '../lib/ingest/handler.js';
import type { BatchReport } from '../lib/ingest/report.js';
import { bodyDeduplicationId } from '../lib/producer/canonical.js';
import { messageGroupId } from '../lib/producer/wire.js';
import { messageSize, packBatches } from '../lib/queue/pack.js';
import { createPoller, type Poller } from '../lib/queue/poller.js';
import { sqsViaSdk } from '../lib/queue/sqs-via-sdk.js';
import { type LocalSqs, startLocalSqs } from './fauxqs.js';
import { createIngestQueues, type IngestQueues } from './queues.js';

export interface LocalPipelineOptions {
  db: Database;
  /** an SQS emulator or queue service to use; default: a fresh in-process fauxqs */
  sqs?: SQSClient;
  /** short, so records a batch reported as failed come back quickly */
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
  metrics?: Metrics;
  logger?: Logger;
  /** each ingest batch's report, after it is added to the totals */
  onReport?: (report: BatchReport) => void;
}

export interface QueueDepth {
  visible: number;
  inFlight: number;
}

/**
 * The ingest path without AWS: a FIFO queue and DLQ (as serverless.yml declares them) on an SQS
 * emulator, the poller standing in for Lambda's event source, and the real ingest handler.
 * Used by `npm start` and by `subagent-context ingest`.
 */
export interface LocalPipeline {
  readonly sqs: SQSClient;
  readonly queues: IngestQueues;
  readonly poller: Poller;
  readonly totals: IngestTotals;
  /** sends message bodies (valid frames or not) in order, as a producer would; returns how many (fewer when `signal` stopped it between batches) */
  send(bodies: readonly string[], signal?: AbortSignal): Promise<number>;
  depth(queueUrl?: string): Promise<QueueDepth>;
  /** takes everything off the dead-letter queue */
  deadLetters(): Promise<DeadLetter[]>;
  stop(): Promise<void>;
}

/**
 * A raw body as a producer would send it: grouped by session (frames of a session stay in order),
 * deduplicated by its bytes, as SQS's content-based deduplication does. The body is sent as it is,
 * so it is never walked: `JSON.parse` takes any depth and the group is one top-level field,
 * while re-serialising it (the producer's canonical JSON) recursed once per level and overflowed
 * the stack on a valid frame with a deeply nested extra field that the handler accepts
 * (issue 25). A body that is not JSON goes to the no-session group; the handler parks it with the reason.
 */
export function messageFor(body: string): { group: string; dedup: string } {
  let value: unknown = body;
  try {
    value = JSON.parse(body);
  } catch {
    // not JSON
  }
  // the producer's group rule (docs/producers.md): a session id SQS refuses as a group is hashed
  return { group: messageGroupId(value), dedup: bodyDeduplicationId(body) };
}

export async function startLocalPipeline(options: LocalPipelineOptions): Promise<LocalPipeline> {
  const emulator: LocalSqs | undefined = options.sqs ? undefined : await startLocalSqs();
  const sqs = options.sqs ?? emulator!.client();
  const queues = await createIngestQueues(sqs, {
    visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? 1,
    maxReceiveCount: options.maxReceiveCount ?? MAX_RECEIVE_COUNT,
  });
  const totals = createIngestTotals();
  const handler = createIngestHandler({
    db: () => options.db,
    sqs: sqsViaSdk(sqs),
    dlqUrl: queues.dlqUrl,
    metrics: options.metrics,
    logger: options.logger,
    onReport(report) {
      totals.add(report);
      options.onReport?.(report);
    },
  });
  const poller = createPoller({ sqs, queueUrl: queues.queueUrl, handler, waitTimeSeconds: 1 });

  return {
    sqs,
    queues,
    poller,
    totals,
    async send(bodies, signal) {
      const entries = bodies.map((body, i) => {
        const { group, dedup } = messageFor(body);
        return { Id: `m${i}`, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: dedup };
      });
      const { batches, oversize } = packBatches(entries, (e) => messageSize(e.MessageBody));
      if (oversize.length > 0)
        throw new Error(`${oversize.length} message(s) exceed the SQS batch size limit; split the input`);
      let sent = 0;
      for (const batch of batches) {
        if (signal?.aborted) return sent;
        const { Failed = [] } = await sqs.send(
          new SendMessageBatchCommand({ QueueUrl: queues.queueUrl, Entries: batch }),
        );
        if (Failed.length > 0)
          throw new Error(`the queue refused ${Failed.length} message(s): ${Failed[0]!.Code} ${Failed[0]!.Message}`);
        sent += batch.length;
      }
      return sent;
    },
    async depth(queueUrl = queues.queueUrl) {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
      };
    },
    deadLetters: () => drainDeadLetters(sqs, queues.dlqUrl),
    async stop() {
      await poller.stop();
      await emulator?.stop();
    },
  };
}
