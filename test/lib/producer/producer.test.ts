import { Logger } from '@aws-lambda-powertools/logger';
import { ReceiveMessageCommand, SQSServiceException, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { deduplicationId } from '../../../lib/producer/canonical.js';
import { createFrameProducer, NO_SESSION_GROUP } from '../../../lib/producer/producer.js';
import { frame } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';
import { captureOutput } from '../ingest/support.js';

/** Makes the next `count` SendMessageBatch calls fail the way SQS does under load. */
function failNextSends(sqs: SQSClient, count: number, error: () => Error): { calls: () => number } {
  let calls = 0;
  sqs.middlewareStack.add(
    (next) => async (args) => {
      calls += 1;
      if (calls <= count) throw error();
      return next(args);
    },
    { step: 'initialize', name: `failNextSends${Math.random()}` },
  );
  return { calls: () => calls };
}

const throttled = () =>
  new SQSServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'Rate exceeded' });
const serverError = () => new SQSServiceException({ name: 'InternalError', $fault: 'server', $metadata: { httpStatusCode: 500 }, message: 'boom' });
const accessDenied = () =>
  new SQSServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'not allowed' });

describe('frame producer', () => {
  const q = useSqs();
  const quiet = new Logger({ logLevel: 'CRITICAL' });

  it('§7: sends frames with MessageGroupId = task_session_id (a fixed group when empty) and the canonical-frame hash as deduplication id', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet });
    const frames = [frame({ task_session_id: 's1', tool_call_id: 'a' }), frame({ task_session_id: '', tool_call_id: 'b' })];
    for (const f of frames) producer.record(f);
    await producer.flush();
    const messages = await takeAll(q.sqs, q.queueUrl);
    expect(messages.map((m) => [m.Body, m.Attributes?.MessageGroupId, m.Attributes?.MessageDeduplicationId])).toEqual([
      [JSON.stringify(frames[0]), 's1', deduplicationId(frames[0])],
      [JSON.stringify(frames[1]), NO_SESSION_GROUP, deduplicationId(frames[1])],
    ]);
  });

  it('§7: the deduplication id ignores key order, so a re-recorded identical frame is delivered once', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet });
    const f = frame();
    const reordered = Object.fromEntries(Object.entries(f).reverse());
    expect(deduplicationId(reordered)).toBe(deduplicationId(f));
    producer.record(f);
    producer.record(reordered);
    await producer.flush();
    expect(await takeAll(q.sqs, q.queueUrl)).toHaveLength(1);
  });

  it('§7: packs at most 10 entries and 256 KiB per SendMessageBatch and keeps the recorded order', async () => {
    const sqs = q.newClient();
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs, logger: quiet, flushIntervalMs: 60_000 });
    const batchSizes: number[] = [];
    sqs.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Entries?: { MessageBody: string }[] };
        if (input.Entries) {
          batchSizes.push(input.Entries.length);
          expect(input.Entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody), 0)).toBeLessThanOrEqual(256 * 1024);
        }
        return next(args);
      },
      { step: 'initialize', name: 'observeBatches' },
    );
    const big = 'x'.repeat(60_000);
    const frames = Array.from({ length: 25 }, (_, i) => frame({ tool_call_id: `c${i}`, subagent_task: i < 5 ? { description: big } : {} }));
    for (const f of frames) producer.record(f);
    await producer.flush();
    expect(batchSizes.every((n) => n <= 10)).toBe(true);
    expect(batchSizes[0]).toBeLessThan(5); // five 60 KB frames cannot share one batch
    expect((await takeAll(q.sqs, q.queueUrl)).map((m) => JSON.parse(m.Body!).tool_call_id)).toEqual(frames.map((f) => f.tool_call_id));
  });

  it('§7: retries throttling and 5xx with backoff until the frames are sent', async () => {
    const sqs = q.newClient();
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs, logger: quiet, backoffMs: 1 });
    const failures = failNextSends(sqs, 2, (() => { let n = 0; return () => (n++ === 0 ? throttled() : serverError()); })());
    producer.record(frame());
    await producer.flush();
    expect(failures.calls()).toBe(3);
    expect(producer.stats.sent).toBe(1);
    expect(await takeAll(q.sqs, q.queueUrl)).toHaveLength(1);
  });

  it('AC-27: record() never throws, flush() never rejects, and what cannot be sent is counted and WARNed', async () => {
    const sqs = q.newClient();
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs, backoffMs: 1, maxAttempts: 2 });
    failNextSends(sqs, 1, accessDenied);
    const circular: Record<string, unknown> = { version: 1 };
    circular.self = circular;
    const { lines } = await captureOutput(async () => {
      expect(() => producer.record(frame({ tool_call_id: 'denied' }))).not.toThrow();
      expect(() => producer.record(circular)).not.toThrow();
      expect(() => producer.record(frame({ subagent_task: { description: 'x'.repeat(300 * 1024) } }))).not.toThrow();
      await expect(producer.flush()).resolves.toBeUndefined();
    });
    expect(producer.stats.dropped).toMatchObject({ send_failed: 1, unserializable: 1, too_large: 1 });
    const warnings = lines.filter((l) => l.level === 'WARN').map((l) => l.reason);
    expect(warnings.sort()).toEqual(['send_failed', 'too_large', 'unserializable']);
  });

  it('§7: a bounded buffer drops (and counts) frames beyond its capacity while the queue is unreachable', async () => {
    const producer = createFrameProducer({ queueUrl: q.missingQueueUrl, sqs: q.sqs, logger: quiet, maxBufferedFrames: 3, flushIntervalMs: 60_000 });
    for (let i = 0; i < 5; i += 1) producer.record(frame({ tool_call_id: `c${i}` }));
    await producer.close();
    expect(producer.stats.dropped.buffer_full).toBe(2);
    expect(producer.stats.recorded).toBe(5);
    producer.record(frame());
    expect(producer.stats.dropped.closed).toBe(1);
  });

  it('§7: flushes a partial batch on time without an explicit flush()', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet, flushIntervalMs: 10 });
    producer.record(frame());
    const { Messages = [] } = await q.sqs.send(new ReceiveMessageCommand({ QueueUrl: q.queueUrl, WaitTimeSeconds: 5 }));
    expect(Messages).toHaveLength(1);
  });
});
