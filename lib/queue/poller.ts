import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { INGEST_BATCH_SIZE } from '../defaults.js';
import { SQS_MAX_BATCH_ENTRIES } from './pack.js';

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** the function the event source invokes, e.g. createIngestHandler(…) */
  // biome-ignore lint/suspicious/noConfusingVoidType: a Lambda handler may resolve to nothing, as the AWS types allow
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>;
  /** records per invocation, 1–10 (Lambda's FIFO maximum is 10) */
  batchSize?: number;
  /** long-poll seconds per receive */
  waitTimeSeconds?: number;
  /** called when the handler throws (the whole batch is then redelivered, as Lambda does) */
  onError?: (error: unknown) => void;
}

export interface PollResult {
  received: number;
  deleted: number;
  /** left on the queue: reappear after the visibility timeout */
  failed: number;
}

export interface Poller {
  /** one receive → invoke → delete cycle */
  pollOnce(): Promise<PollResult>;
  /** polls until the queue holds no message, visible, in flight or delayed (failures are waited for) */
  drain(options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<PollResult>;
  /** polls continuously in the background until stop() */
  start(): void;
  stop(): Promise<void>;
}

/**
 * The local stand-in for Lambda's SQS event source with ReportBatchItemFailures: receive up to
 * batchSize messages, invoke the handler with a Lambda-shaped event, delete what it acknowledged,
 * and leave reported failures (or the whole batch, if the handler throws) to reappear after the
 * visibility timeout. The queue's FIFO group locking keeps each group in order.
 */
export function createPoller(options: PollerOptions): Poller {
  const { sqs, queueUrl } = options;
  const batchSize = Math.min(Math.max(options.batchSize ?? INGEST_BATCH_SIZE, 1), SQS_MAX_BATCH_ENTRIES);
  let queueArn: string | undefined;
  let running: Promise<void> | undefined;
  let stopping = false;

  const pollOnce = async (waitTimeSeconds = options.waitTimeSeconds ?? 1): Promise<PollResult> => {
    queueArn ??= await attribute(sqs, queueUrl, 'QueueArn');
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: batchSize,
        WaitTimeSeconds: waitTimeSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return { received: 0, deleted: 0, failed: 0 };
    const records = Messages.map((m) => toRecord(m, queueArn!));
    let failedIds: Set<string>;
    try {
      const response = await options.handler({ Records: records });
      failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      options.onError?.(err);
      failedIds = new Set(records.map((r) => r.messageId));
    }
    const done = records.filter((r) => !failedIds.has(r.messageId));
    if (done.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r.receiptHandle })),
        }),
      );
    }
    return { received: records.length, deleted: done.length, failed: records.length - done.length };
  };

  const isEmpty = async (): Promise<boolean> => {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    );
    return Object.values(Attributes).every((v) => v === '0');
  };

  return {
    pollOnce: () => pollOnce(),
    async drain({ timeoutMs = 60_000, signal } = {}) {
      const total: PollResult = { received: 0, deleted: 0, failed: 0 };
      const deadline = Date.now() + timeoutMs;
      // signal: stop between batches (Ctrl-C, lib/cli/interrupt.ts); the batch in hand is finished
      while (!signal?.aborted && !(await isEmpty())) {
        if (Date.now() > deadline) throw new Error(`queue ${queueUrl} not drained within ${timeoutMs} ms`);
        const r = await pollOnce();
        total.received += r.received;
        total.deleted += r.deleted;
        total.failed += r.failed;
      }
      return total;
    },
    start() {
      if (running) return;
      stopping = false;
      running = (async () => {
        while (!stopping) {
          try {
            await pollOnce();
          } catch (err) {
            options.onError?.(err);
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        }
      })();
    },
    async stop() {
      stopping = true;
      await running;
      running = undefined;
    },
  };
}

async function attribute(sqs: SQSClient, queueUrl: string, name: 'QueueArn'): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [name] }));
  return Attributes?.[name] ?? '';
}

/** A received message in the shape Lambda's SQS event source delivers. */
export function toRecord(message: Message, queueArn: string): SQSRecord {
  const a = message.Attributes ?? {};
  return {
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? '',
      SenderId: a.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? '',
      ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      ...(a.MessageDeduplicationId ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, v]) => [
        name,
        { dataType: v.DataType ?? 'String', stringValue: v.StringValue, stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(':')[3] ?? '',
  };
}
