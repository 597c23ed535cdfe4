import {
  type BatchResultErrorEntry,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { PRODUCER_DEFAULTS } from '../defaults.js';
import { SQS_MAX_BATCH_BYTES, SQS_MAX_BATCH_ENTRIES } from '../queue/pack.js';
import { createDropLog, DROP_REASONS, type DropReason } from './drop-log.js';
import { queueEndpoint } from './endpoint.js';
import { watchExit } from './exit.js';
import { type Frame, notAFrame } from './frame.js';
import { type ProducerLogger, stderrLogger } from './logger.js';
import { sizeLowerBound, toWireMessage, type WireMessage } from './wire.js';

export type { DropReason } from './drop-log.js';
export type { Frame, SubagentTask } from './frame.js';
export type { ProducerLogger } from './logger.js';
export { NO_SESSION_GROUP } from './wire.js';

export interface FrameProducerOptions {
  /**
   * The queue's URL. Its host is where frames go (docs/producers.md "Which endpoint"): an AWS URL
   * through the SDK in the URL's region, any other host (LocalStack, ElasticMQ, fauxqs) as the
   * endpoint itself.
   */
  queueUrl: string;
  /**
   * defaults to a new SQSClient for the queue URL's endpoint, credentials from the environment
   * (destroyed by close()); a client given here is used as it is
   */
  sqs?: SQSClient;
  /** frames held (buffered or being sent) before new ones are dropped; default 10 000 */
  maxBufferedFrames?: number;
  /** bytes of message bodies held before new frames are dropped; default 8 MiB */
  maxBufferedBytes?: number;
  /** a partial batch is sent after this long; default 200 ms */
  flushIntervalMs?: number;
  /** sends per frame for throttling / 5xx / network failures / timeouts; default 5 */
  maxAttempts?: number;
  /** first backoff; doubles per attempt with full jitter, capped at 5 s; default 100 ms */
  backoffMs?: number;
  /** each SendMessageBatch call is aborted after this long (and retried); default 3 s */
  requestTimeoutMs?: number;
  /** how long the flush on an emptied event loop (beforeExit) may take; default 5 s */
  exitTimeoutMs?: number;
  /** drops are WARNed once per reason per interval, with the count; default 60 s */
  dropLogIntervalMs?: number;
  /** where the drop WARNs go; default one JSON line each on stderr */
  logger?: ProducerLogger;
}

export interface ProducerStats {
  recorded: number;
  sent: number;
  dropped: Record<DropReason, number>;
}

export interface FrameProducer {
  /** enqueue a frame; never throws, never blocks: a frame that cannot be sent is counted and logged */
  record(frame: Frame): void;
  /** resolves once every frame recorded so far was sent or dropped; never rejects */
  flush(): Promise<void>;
  /**
   * Sends what is held, then refuses further frames (counted as dropped 'closed'). Always resolves
   * within `timeoutMs` (default 5 s): what is still unsent then is counted as dropped 'timeout'.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
  readonly stats: ProducerStats;
}

interface Held extends WireMessage {
  /** failed sends so far */
  attempts: number;
  /** not sent again before this time (backoff) */
  notBefore: number;
  /** sent or dropped: a late answer for it is ignored */
  settled: boolean;
}

const THROTTLING = new Set([
  'ThrottlingException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'KmsThrottled',
]);
const MAX_BACKOFF_MS = PRODUCER_DEFAULTS.maxBackoffMs;

/**
 * The host's side of the pipeline (docs/producers.md, AC-27). Frames are held per session
 * (MessageGroupId) and sent with SendMessageBatch, one call in flight at a time, **at most one
 * frame per session per call**: when SQS fails some entries of a batch (throttling, partial
 * failure) or a call times out, nothing later of the same session has been sent yet, so a retried
 * frame never overtakes a later one of its session and the FIFO queue sees each session in
 * recorded order. Sessions share a call (up to 10 per call); a session whose next frame is
 * backing off does not hold up the others.
 *
 * Bounded: frames and bytes held (`maxBufferedFrames`, `maxBufferedBytes`), time per call
 * (`requestTimeoutMs`), close() time, WARN lines (one per drop reason per interval). Nothing here
 * throws or rejects, and nothing is lost silently: every frame is sent or counted as dropped.
 */
export function createFrameProducer(options: FrameProducerOptions): FrameProducer {
  // issue 58 #18: a missing URL (an unset variable behind `process.env.X!`) is a wiring mistake found
  // once, at start-up; accepted, every frame was later dropped with the code "Error" and no cause.
  // record() still never throws: this is the one refusal, and it comes before any frame.
  if (typeof options?.queueUrl !== 'string' || options.queueUrl.trim() === '') {
    throw new TypeError(
      `createFrameProducer needs queueUrl, the SQS queue's URL (got ${typeof options?.queueUrl === 'string' ? 'an empty string' : typeof options?.queueUrl}): set the variable it is read from, e.g. FRAMES_QUEUE_URL=https://sqs.<region>.amazonaws.com/<account>/<name>.fifo`,
    );
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? PRODUCER_DEFAULTS.requestTimeoutMs;
  // R4-11: the queue URL's host is the endpoint (an AWS host: the SDK's endpoint for its region).
  // One attempt per SDK call: the producer retries itself, per frame, in session order.
  const target = queueEndpoint(options.queueUrl);
  const sqs =
    options.sqs ??
    new SQSClient({
      ...(target.endpoint
        ? {
            endpoint: target.endpoint,
            // an emulator signs with any region; the SDK would refuse to start without one
            region: process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1',
          }
        : {}),
      ...(target.region ? { region: target.region } : {}),
      ...(target.useFipsEndpoint ? { useFipsEndpoint: true } : {}),
      ...(target.useDualstackEndpoint ? { useDualstackEndpoint: true } : {}),
      useQueueUrlAsEndpoint: false,
      maxAttempts: 1,
      requestHandler: { connectionTimeout: requestTimeoutMs, requestTimeout: requestTimeoutMs },
    });
  const maxFrames = options.maxBufferedFrames ?? PRODUCER_DEFAULTS.maxBufferedFrames;
  const maxBytes = options.maxBufferedBytes ?? PRODUCER_DEFAULTS.maxBufferedBytes;
  const flushIntervalMs = options.flushIntervalMs ?? PRODUCER_DEFAULTS.flushIntervalMs;
  const maxAttempts = options.maxAttempts ?? PRODUCER_DEFAULTS.maxAttempts;
  const backoffMs = options.backoffMs ?? PRODUCER_DEFAULTS.backoffMs;
  const exitTimeoutMs = options.exitTimeoutMs ?? PRODUCER_DEFAULTS.exitTimeoutMs;
  const stats: ProducerStats = {
    recorded: 0,
    sent: 0,
    dropped: Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>,
  };
  const drops = createDropLog({
    logger: options.logger ?? stderrLogger,
    // every drop WARN names where the frames were going (host:port, never a credential)
    context: { endpoint: target.label },
    intervalMs: options.dropLogIntervalMs ?? PRODUCER_DEFAULTS.dropLogIntervalMs,
    dropped: stats.dropped,
  });

  /** per session, in recorded order; Map order = whose turn it is (a served session moves to the end) */
  const sessions = new Map<string, Held[]>();
  let heldFrames = 0;
  let heldBytes = 0;
  let pumping: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  let exitFlush: Promise<void> | undefined;
  /** aborted when a deadline passes: the call in flight and any backoff wait stop at once */
  let halt = new AbortController();
  /** ends the pump's backoff wait early: a new session's frame need not wait for another's backoff */
  let wake: (() => void) | undefined;

  const settle = (entry: Held, outcome: 'sent' | DropReason, detail?: Record<string, unknown>) => {
    if (entry.settled) return;
    entry.settled = true;
    heldFrames -= 1;
    heldBytes -= entry.size;
    const queue = sessions.get(entry.group);
    if (queue) {
      const at = queue.indexOf(entry); // the head, in practice: only heads are sent
      if (at >= 0) queue.splice(at, 1);
      if (queue.length === 0) sessions.delete(entry.group);
    }
    if (outcome === 'sent') stats.sent += 1;
    else drops.add(outcome, 1, detail);
  };

  const dropAllHeld = (reason: DropReason, detail?: Record<string, unknown>) => {
    let count = 0;
    for (const queue of sessions.values()) {
      for (const entry of queue) entry.settled = true;
      count += queue.length;
    }
    sessions.clear();
    heldFrames = 0;
    heldBytes = 0;
    drops.add(reason, count, detail);
  };

  const retryLater = (entry: Held, code: string | undefined) => {
    entry.attempts += 1;
    if (entry.attempts >= maxAttempts) return settle(entry, 'send_failed', { code, attempts: entry.attempts });
    entry.notBefore = Date.now() + Math.random() * Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** (entry.attempts - 1));
  };

  /** The next frame of each session that is due, up to 10 sessions and 256 KiB. */
  const nextBatch = (now: number): { batch: Held[]; waitMs: number } => {
    const batch: Held[] = [];
    let bytes = 0;
    let waitMs = Number.POSITIVE_INFINITY;
    for (const queue of sessions.values()) {
      const head = queue[0]!;
      if (head.notBefore > now) {
        waitMs = Math.min(waitMs, head.notBefore - now);
        continue;
      }
      if (bytes + head.size > SQS_MAX_BATCH_BYTES) continue;
      batch.push(head);
      bytes += head.size;
      if (batch.length === SQS_MAX_BATCH_ENTRIES) break;
    }
    for (const entry of batch) {
      // fairness: a busy session does not keep quieter ones waiting
      const queue = sessions.get(entry.group)!;
      sessions.delete(entry.group);
      sessions.set(entry.group, queue);
    }
    return { batch, waitMs };
  };

  const sendBatch = async (batch: Held[]): Promise<void> => {
    const stop = halt.signal;
    if (stop.aborted) return;
    const request = new AbortController();
    const onHalt = () => request.abort();
    stop.addEventListener('abort', onHalt, { once: true });
    const deadline = setTimeout(() => request.abort(), requestTimeoutMs);
    deadline.unref();
    let result: SendMessageBatchCommandOutput;
    try {
      result = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: batch.map((e, i) => ({
            Id: `f${i}`,
            MessageBody: e.body,
            MessageGroupId: e.group,
            MessageDeduplicationId: e.dedup,
          })),
        }),
        { abortSignal: request.signal },
      );
    } catch (err) {
      if (stop.aborted) return; // the deadline has counted these frames already
      // A timed-out call may have reached SQS: sending it again is safe, the deduplication id is
      // the same and later frames of these sessions have not been sent.
      if (request.signal.aborted) for (const e of batch) retryLater(e, 'RequestTimeout');
      else if (isRetryable(err)) for (const e of batch) retryLater(e, errorCode(err));
      else for (const e of batch) settle(e, 'send_failed', { code: errorCode(err) });
      return;
    } finally {
      clearTimeout(deadline);
      stop.removeEventListener('abort', onHalt);
    }
    const failed = new Map((result.Failed ?? []).map((f) => [f.Id, f]));
    batch.forEach((entry, i) => {
      const failure = failed.get(`f${i}`);
      if (!failure) settle(entry, 'sent');
      else if (isRetryableEntry(failure)) retryLater(entry, failure.Code);
      else settle(entry, 'rejected', { code: failure.Code });
    });
  };

  const pump = (): Promise<void> => {
    pumping ??= (async () => {
      try {
        while (heldFrames > 0) {
          const { batch, waitMs } = nextBatch(Date.now());
          if (batch.length > 0) await sendBatch(batch);
          else await new Promise<void>((resolve) => (wake = sleep(waitMs, halt.signal, resolve)));
          wake = undefined;
        }
      } catch (err) {
        // a bug here must not leave frames held forever (flush() would never resolve)
        dropAllHeld('send_failed', { code: errorCode(err) });
      } finally {
        pumping = undefined;
      }
    })();
    return pumping;
  };

  const drain = async (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (heldFrames > 0) await pump();
  };

  /** Sends what is held until `timeoutMs` passes, then stops the call in flight and counts the rest. */
  const drainWithin = async (timeoutMs: number): Promise<void> => {
    let expire: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      // not unref()'d: on an emptied event loop this timer is what keeps the final flush running
      expire = setTimeout(resolve, timeoutMs);
    });
    try {
      await Promise.race([drain(), expired]);
    } finally {
      clearTimeout(expire);
    }
    if (heldFrames > 0) {
      halt.abort();
      halt = new AbortController();
      dropAllHeld('timeout');
    }
  };

  const unwatch = watchExit({
    beforeExit() {
      if (heldFrames > 0 && !closing && !exitFlush) {
        exitFlush = drainWithin(exitTimeoutMs)
          .catch(() => undefined)
          .finally(() => {
            exitFlush = undefined;
            drops.report();
          });
      } else if (heldFrames === 0) drops.report();
    },
    exit() {
      if (heldFrames > 0) dropAllHeld('exited');
      drops.report();
    },
  });

  const full = {
    reason: 'buffer_full' as const,
    detail: { max_buffered_frames: maxFrames, max_buffered_bytes: maxBytes },
  };

  /** The frame as it will be held, or why it is refused. */
  const admit = (frame: unknown): Held | { reason: DropReason; detail?: Record<string, unknown> } => {
    if (closing) return { reason: 'closed' };
    // Refuse cheaply while the buffer is full: serialising a frame only to drop it would make a
    // dead endpoint cost the host a full JSON pass per frame.
    const atLeast = sizeLowerBound(frame);
    if (atLeast > SQS_MAX_BATCH_BYTES) return { reason: 'too_large', detail: { bytes_at_least: atLeast } };
    if (heldFrames >= maxFrames || heldBytes + atLeast > maxBytes) return full;
    let message: WireMessage;
    try {
      message = toWireMessage(frame);
    } catch (err) {
      return { reason: 'unserializable', detail: { code: errorCode(err) } };
    }
    if (message.size > SQS_MAX_BATCH_BYTES)
      return { reason: 'too_large', detail: { bytes: message.size, message_group_id: message.group } };
    if (heldBytes + message.size > maxBytes) return full;
    return { ...message, attempts: 0, notBefore: 0, settled: false };
  };

  const record = (frame: Frame): void => {
    try {
      stats.recorded += 1;
      // a JavaScript host has no compile-time check: what is not a frame is dropped here, not sent (issue 51)
      const problem = notAFrame(frame);
      if (problem !== undefined) {
        drops.add('not_a_frame', 1, { problem });
        return;
      }
      const entry = admit(frame);
      if ('reason' in entry) {
        drops.add(entry.reason, 1, entry.detail);
        return;
      }
      const queue = sessions.get(entry.group);
      heldFrames += 1;
      heldBytes += entry.size;
      if (queue) queue.push(entry);
      else {
        sessions.set(entry.group, [entry]);
        wake?.();
      }
      if (pumping) return; // the running pump takes it
      if (heldFrames >= SQS_MAX_BATCH_ENTRIES || heldBytes >= SQS_MAX_BATCH_BYTES) void pump();
      else if (!timer) {
        timer = setTimeout(() => {
          timer = undefined;
          void pump();
        }, flushIntervalMs);
        timer.unref(); // a host that ends without close() is flushed by the beforeExit hook
      }
    } catch (err) {
      try {
        drops.add('unserializable', 1, { code: errorCode(err) });
      } catch {
        // never throw into the host
      }
    }
  };

  return {
    record,
    flush: () => drain().catch(() => undefined),
    close({ timeoutMs = 5_000 } = {}) {
      closing ??= (async () => {
        try {
          await drainWithin(timeoutMs);
        } catch {
          // never reject
        } finally {
          drops.report();
          unwatch();
          if (!options.sqs) sqs.destroy();
        }
      })();
      return closing;
    },
    stats,
  };
}

/** Throttling, server faults (5xx) and network failures (no HTTP status) are worth retrying. */
function isRetryable(err: unknown): boolean {
  const e = err as {
    name?: string;
    $fault?: string;
    $retryable?: { throttling?: boolean };
    $metadata?: { httpStatusCode?: number };
  };
  if (e.$retryable?.throttling || THROTTLING.has(e.name ?? '')) return true;
  if (e.$fault === 'server') return true;
  const status = e.$metadata?.httpStatusCode;
  return status === undefined || status >= 500;
}

function isRetryableEntry(failure: BatchResultErrorEntry): boolean {
  return failure.SenderFault === false || THROTTLING.has(failure.Code ?? '');
}

/** An error's code or name for a WARN: never its message, which may quote what was sent. */
function errorCode(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown } | undefined;
  return String(e?.code ?? e?.name ?? 'Error');
}

/**
 * Calls `resolve` after `ms`, when `signal` aborts, or when the returned function is called,
 * whichever comes first; never keeps the process alive on its own.
 */
function sleep(ms: number, signal: AbortSignal, resolve: () => void): () => void {
  let done = false;
  const wake = () => {
    if (done) return;
    done = true;
    clearTimeout(t);
    signal.removeEventListener('abort', wake);
    resolve();
  };
  const t = setTimeout(wake, Math.min(ms, MAX_BACKOFF_MS));
  t.unref();
  if (signal.aborted) wake();
  else signal.addEventListener('abort', wake, { once: true });
  return wake;
}
