import type { Logger } from '@aws-lambda-powertools/logger';
import { SendMessageBatchCommand, SQSClient, type BatchResultErrorEntry } from '@aws-sdk/client-sqs';
import { logger as defaultLogger } from '../observability.js';
import { messageSize, packBatches, SQS_MAX_BATCH_BYTES, SQS_MAX_BATCH_ENTRIES } from '../queue/pack.js';
import { deduplicationId } from './canonical.js';

/** MessageGroupId for frames without a session: they are skipped by the consumer, but must still be sendable. */
export const NO_SESSION_GROUP = 'no-session';

export type DropReason = 'buffer_full' | 'too_large' | 'unserializable' | 'rejected' | 'send_failed' | 'closed';

export interface FrameProducerOptions {
  queueUrl: string;
  /** defaults to a new SQSClient from the environment (destroyed by close()) */
  sqs?: SQSClient;
  /** frames held (buffered or being sent) before new ones are dropped; default 10 000 */
  maxBufferedFrames?: number;
  /** a partial batch is sent after this long; default 200 ms */
  flushIntervalMs?: number;
  /** attempts per batch for throttling / 5xx / network failures; default 5 */
  maxAttempts?: number;
  /** first backoff; doubles per attempt with full jitter, capped at 5 s; default 100 ms */
  backoffMs?: number;
  logger?: Logger;
}

export interface ProducerStats {
  recorded: number;
  sent: number;
  dropped: Record<DropReason, number>;
}

export interface FrameProducer {
  /** enqueue a frame; never throws, never blocks: a frame that cannot be sent is counted and logged */
  record(frame: unknown): void;
  /** resolves once every frame recorded so far was sent or dropped; never rejects */
  flush(): Promise<void>;
  /** flush, then refuse further frames (counted as dropped 'closed'); never rejects */
  close(): Promise<void>;
  readonly stats: ProducerStats;
}

interface Entry {
  body: string;
  group: string;
  dedup: string;
  size: number;
}

const THROTTLING = new Set(['ThrottlingException', 'RequestThrottled', 'RequestThrottledException', 'TooManyRequestsException', 'KmsThrottled']);

/**
 * The host's side of the pipeline (SPEC §7, AC-27): frames are buffered and sent with
 * SendMessageBatch (≤ 10 entries, ≤ 256 KiB, never reordered), one batch in flight at a time so
 * a session's frames reach the FIFO queue in the order they were recorded. Telemetry must never
 * break the product path: nothing here throws or rejects; what cannot be sent is counted and WARNed.
 */
export function createFrameProducer(options: FrameProducerOptions): FrameProducer {
  // As in functions/ingest.ts: the endpoint comes from the environment, not the queue URL host.
  const sqs = options.sqs ?? new SQSClient({ useQueueUrlAsEndpoint: false });
  const log = options.logger ?? defaultLogger;
  const maxBuffered = options.maxBufferedFrames ?? 10_000;
  const flushIntervalMs = options.flushIntervalMs ?? 200;
  const maxAttempts = options.maxAttempts ?? 5;
  const backoffMs = options.backoffMs ?? 100;
  const stats: ProducerStats = {
    recorded: 0,
    sent: 0,
    dropped: { buffer_full: 0, too_large: 0, unserializable: 0, rejected: 0, send_failed: 0, closed: 0 },
  };
  const buffer: Entry[] = [];
  let bufferedBytes = 0;
  let inFlight = 0;
  let pumping: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const drop = (reason: DropReason, count: number, context: Record<string, unknown> = {}) => {
    stats.dropped[reason] += count;
    try {
      log.warn('subagent frames dropped by the producer', { reason, count, ...context });
    } catch {
      // a failing logger must not break the product path either
    }
  };

  const sendBatch = async (batch: Entry[]): Promise<void> => {
    let entries = batch;
    for (let attempt = 1; ; attempt += 1) {
      let retry: Entry[] = [];
      let lastError: string | undefined;
      try {
        const result = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: entries.map((e, i) => ({ Id: `f${i}`, MessageBody: e.body, MessageGroupId: e.group, MessageDeduplicationId: e.dedup })),
          }),
        );
        const failed = new Map((result.Failed ?? []).map((f) => [f.Id, f]));
        stats.sent += entries.length - failed.size;
        entries.forEach((entry, i) => {
          const failure = failed.get(`f${i}`);
          if (!failure) return;
          if (isRetryableEntry(failure)) retry.push(entry);
          else drop('rejected', 1, { code: failure.Code, error: failure.Message, message_group_id: entry.group });
        });
        lastError = [...failed.values()].map((f) => f.Code).join(', ');
      } catch (err) {
        if (!isRetryable(err)) {
          drop('send_failed', entries.length, { error: (err as Error).message, name: (err as Error).name });
          return;
        }
        retry = entries;
        lastError = (err as Error).message;
      }
      if (retry.length === 0) return;
      if (attempt >= maxAttempts) {
        drop('send_failed', retry.length, { error: lastError, attempts: attempt });
        return;
      }
      await sleep(Math.random() * Math.min(5000, backoffMs * 2 ** (attempt - 1)));
      entries = retry;
    }
  };

  const pump = (): Promise<void> => {
    pumping ??= (async () => {
      try {
        while (buffer.length > 0) {
          const batch = packBatches(buffer, (e) => e.size).batches[0]!;
          buffer.splice(0, batch.length);
          bufferedBytes -= batch.reduce((sum, e) => sum + e.size, 0);
          inFlight = batch.length;
          try {
            await sendBatch(batch);
          } catch (err) {
            drop('send_failed', batch.length, { error: (err as Error).message });
          } finally {
            inFlight = 0;
          }
        }
      } finally {
        pumping = undefined;
      }
    })();
    return pumping;
  };

  const flush = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    // A pump already running also takes frames recorded while it runs; one more covers a race
    // where it finished between our check and our await.
    while (pumping || buffer.length > 0) await pump();
  };

  const record = (frame: unknown): void => {
    try {
      stats.recorded += 1;
      if (closed) return drop('closed', 1);
      let body: string;
      let dedup: string;
      try {
        body = JSON.stringify(frame);
        dedup = deduplicationId(frame);
        if (typeof body !== 'string') throw new Error('frame serialises to nothing');
      } catch (err) {
        return drop('unserializable', 1, { error: (err as Error).message });
      }
      const session = frame !== null && typeof frame === 'object' ? (frame as { task_session_id?: unknown }).task_session_id : undefined;
      const group = typeof session === 'string' && session !== '' ? session : NO_SESSION_GROUP;
      const size = messageSize(body);
      if (size > SQS_MAX_BATCH_BYTES) return drop('too_large', 1, { bytes: size, message_group_id: group });
      if (buffer.length + inFlight >= maxBuffered) return drop('buffer_full', 1, { message_group_id: group, max_buffered_frames: maxBuffered });
      buffer.push({ body, group, dedup, size });
      bufferedBytes += size;
      if (buffer.length >= SQS_MAX_BATCH_ENTRIES || bufferedBytes >= SQS_MAX_BATCH_BYTES) void pump();
      else if (!timer && !pumping) {
        timer = setTimeout(() => {
          timer = undefined;
          void pump();
        }, flushIntervalMs);
        timer.unref();
      }
    } catch (err) {
      try {
        drop('unserializable', 1, { error: (err as Error).message });
      } catch {
        // never throw into the host
      }
    }
  };

  return {
    record,
    flush: () => flush().catch(() => undefined),
    async close() {
      closed = true;
      await flush().catch(() => undefined);
      if (!options.sqs) sqs.destroy();
    },
    stats,
  };
}

/** Throttling, server faults (5xx) and network failures (no HTTP status) are worth retrying. */
function isRetryable(err: unknown): boolean {
  const e = err as { name?: string; $fault?: string; $retryable?: { throttling?: boolean }; $metadata?: { httpStatusCode?: number } };
  if (e.$retryable?.throttling || THROTTLING.has(e.name ?? '')) return true;
  if (e.$fault === 'server') return true;
  const status = e.$metadata?.httpStatusCode;
  return status === undefined || status >= 500;
}

function isRetryableEntry(failure: BatchResultErrorEntry): boolean {
  return failure.SenderFault === false || THROTTLING.has(failure.Code ?? '');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
