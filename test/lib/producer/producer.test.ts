import { Logger } from '@aws-lambda-powertools/logger';
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Frame } from '../../../lib/producer/frame.js';
import { createFrameProducer, NO_SESSION_GROUP } from '../../../lib/producer/producer.js';
import { storedPart, toWireMessage } from '../../../lib/producer/wire.js';
import { sqsClientFor } from '../../../local/fauxqs.js';
import { type BatchCall, type Fault, startSilentEndpoint, startSqsFaultProxy } from '../../../local/sqs-faults.js';
import { frame } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';
import { captureOutput } from '../ingest/support.js';

const quiet = new Logger({ logLevel: 'CRITICAL' });
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A client with no SDK retries (the producer retries itself), closed after the test. */
function clientFor(endpoint: string): SQSClient {
  const client = sqsClientFor(endpoint);
  client.config.maxAttempts = async () => 1;
  cleanups.push(() => client.destroy());
  return client;
}

const REFUSED_ENDPOINT = 'http://127.0.0.1:9';
const warnings = (lines: Record<string, unknown>[]) => lines.filter((l) => l.level === 'WARN');

describe('frame producer', () => {
  const q = useSqs();

  const proxied = async (plan: (call: BatchCall) => Fault) => {
    const proxy = await startSqsFaultProxy(q.endpoint, plan);
    cleanups.push(() => proxy.close());
    return { proxy, sqs: clientFor(proxy.endpoint) };
  };

  it('docs/ingest.md: sends frames with MessageGroupId = task_session_id (a fixed group when empty) and the stored frame hash as deduplication id', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet });
    const frames = [
      frame({ task_session_id: 's1', tool_call_id: 'a' }),
      frame({ task_session_id: '', tool_call_id: 'b' }),
    ];
    for (const f of frames) producer.record(f);
    await producer.flush();
    const messages = await takeAll(q.sqs, q.queueUrl);
    expect(messages.map((m) => [m.Body, m.Attributes?.MessageGroupId, m.Attributes?.MessageDeduplicationId])).toEqual([
      [JSON.stringify(frames[0]), 's1', toWireMessage(frames[0]).dedup],
      [JSON.stringify(frames[1]), NO_SESSION_GROUP, toWireMessage(frames[1]).dedup],
    ]);
  });

  it('docs/ingest.md: a re-recorded identical frame (any key order) is delivered once', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet });
    const f = frame();
    producer.record(f);
    producer.record(Object.fromEntries(Object.entries(f).reverse()) as unknown as Frame);
    await producer.flush();
    expect(await takeAll(q.sqs, q.queueUrl)).toHaveLength(1);
  });

  it('P1: a 300 KB result_text and U+FFFF/U+FFFE/unpaired surrogates reach the queue (SQS refused them before)', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet });
    const big = frame({
      tool_call_id: 'big',
      subagent_task: { result_text: 'r'.repeat(300 * 1024), prompt: 'p'.repeat(100_000), total_tokens: 7 },
    });
    const odd = frame({
      tool_call_id: 'odd',
      subagent_task: { description: 'a\uFFFFb\uFFFEc\uD800d', result_text: '\uFFFF' },
    });
    producer.record(big);
    producer.record(odd);
    await producer.close();
    expect(producer.stats).toMatchObject({ sent: 2, dropped: { too_large: 0, rejected: 0 } });
    const bodies = (await takeAll(q.sqs, q.queueUrl)).map((m) => JSON.parse(m.Body!) as unknown);
    expect(bodies).toEqual([JSON.parse(JSON.stringify(storedPart(big))), JSON.parse(JSON.stringify(storedPart(odd)))]);
    expect(bodies[1]).toMatchObject({ subagent_task: { description: 'a\uFFFFb\uFFFEc\uD800d' } });
  });

  it('docs/ingest.md: at most 10 entries and 256 KiB per SendMessageBatch, one frame per session per call, each session in recorded order', async () => {
    const { proxy, sqs } = await proxied(() => ({}));
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs, logger: quiet, flushIntervalMs: 60_000 });
    const big = 'x'.repeat(60_000);
    const frames = Array.from({ length: 40 }, (_, i) =>
      frame({
        task_session_id: `s${i % 12}`,
        tool_call_id: `c${i}`,
        subagent_task: i < 12 ? { description: big } : {},
      }),
    );
    for (const f of frames) producer.record(f);
    await producer.flush();
    for (const call of proxy.calls) {
      expect(call.entries.length).toBeLessThanOrEqual(10);
      expect(call.entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody), 0)).toBeLessThanOrEqual(
        256 * 1024,
      );
      expect(new Set(call.entries.map((e) => e.MessageGroupId)).size).toBe(call.entries.length);
    }
    expect(proxy.calls[0]!.entries.length).toBe(4); // four 60 KB frames fill a call
    const bySession = (list: { group: string; id: string }[]) => {
      const groups: Record<string, string[]> = {};
      for (const m of list) groups[m.group] = [...(groups[m.group] ?? []), m.id];
      return groups;
    };
    const received = (await takeAll(q.sqs, q.queueUrl)).map((m) => ({
      group: m.Attributes!.MessageGroupId!,
      id: JSON.parse(m.Body!).tool_call_id as string,
    }));
    expect(bySession(received)).toEqual(
      bySession(frames.map((f) => ({ group: f.task_session_id as string, id: f.tool_call_id as string }))),
    );
  });

  it('docs/ingest.md: retries whole-call throttling and 5xx, and throttled or failed entries, until the frames are sent', async () => {
    const { proxy, sqs } = await proxied(({ n, entries }) =>
      n === 1
        ? { call: 'throttle' }
        : n === 2
          ? { call: 'server-error' }
          : n === 3
            ? { entries: { [entries[0]!.Id]: 'throttle', [entries.at(-1)!.Id]: 'internal' } }
            : {},
    );
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs, logger: quiet, backoffMs: 1 });
    for (let i = 0; i < 3; i += 1) producer.record(frame({ task_session_id: `s${i}` }));
    await producer.flush();
    expect(proxy.calls.length).toBeGreaterThanOrEqual(4);
    expect(producer.stats.sent).toBe(3);
    expect(await takeAll(q.sqs, q.queueUrl)).toHaveLength(3);
  });

  it('P5: a throttled entry is retried before any later frame of its session is sent', async () => {
    const throttledOnce = new Set<string>();
    // the first attempt of every fourth frame (each session in turn) is throttled; the rest of its call goes through
    const { proxy, sqs } = await proxied(({ entries }) => {
      const first = entries.filter(
        (e) => Number(JSON.parse(e.MessageBody).tool_call_id.slice(1)) % 4 === 0 && !throttledOnce.has(e.MessageBody),
      );
      for (const e of first) throttledOnce.add(e.MessageBody);
      return { entries: Object.fromEntries(first.map((e) => [e.Id, 'throttle' as const])) };
    });
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs, logger: quiet, backoffMs: 1 });
    const frames = Array.from({ length: 30 }, (_, i) => frame({ task_session_id: `s${i % 3}`, tool_call_id: `c${i}` }));
    for (const f of frames) producer.record(f);
    await producer.flush();
    expect(proxy.calls.some((c) => c.entries.length > 1)).toBe(true);
    expect(producer.stats.sent).toBe(30);
    const order = (await takeAll(q.sqs, q.queueUrl)).map(
      (m) => `${m.Attributes!.MessageGroupId}:${JSON.parse(m.Body!).tool_call_id}`,
    );
    for (const s of ['s0', 's1', 's2']) {
      expect(order.filter((o) => o.startsWith(`${s}:`))).toEqual(
        frames.filter((f) => f.task_session_id === s).map((f) => `${s}:${f.tool_call_id}`),
      );
    }
  });

  it('AC-27: record() never throws, flush() never rejects, and what cannot be sent is counted and WARNed', async () => {
    const producer = createFrameProducer({ queueUrl: q.missingQueueUrl, sqs: q.sqs, backoffMs: 1, maxAttempts: 2 });
    const circular: Record<string, unknown> = { ...frame() };
    circular.self = circular;
    const { lines } = await captureOutput(async () => {
      expect(() => producer.record(frame({ tool_call_id: 'no-queue' }))).not.toThrow();
      expect(() => producer.record(circular as unknown as Frame)).not.toThrow();
      expect(() => producer.record(frame({ subagent_task: { description: 'x'.repeat(300 * 1024) } }))).not.toThrow();
      await expect(producer.flush()).resolves.toBeUndefined();
      await producer.close();
    });
    expect(producer.stats.dropped).toMatchObject({ send_failed: 1, unserializable: 1, too_large: 1 });
    expect(
      warnings(lines)
        .map((l) => l.reason)
        .sort(),
    ).toEqual(['send_failed', 'too_large', 'unserializable']);
    expect(JSON.stringify(lines)).not.toContain('xxxxxxxx');
  });

  it('P2: frames beyond the frame cap or the byte cap are dropped (buffer_full) while the queue is unreachable', async () => {
    const silent = await startSilentEndpoint();
    cleanups.push(() => silent.close());
    const description = 'd'.repeat(50_000);
    const size = toWireMessage(frame({ subagent_task: { description } })).size;
    const byBytes = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs: clientFor(silent.endpoint),
      logger: quiet,
      maxBufferedBytes: 10 * size,
      flushIntervalMs: 60_000,
    });
    const byFrames = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs: clientFor(silent.endpoint),
      logger: quiet,
      maxBufferedFrames: 3,
      flushIntervalMs: 60_000,
    });
    for (let i = 0; i < 100; i += 1) {
      byBytes.record(frame({ task_session_id: `s${i}`, subagent_task: { description } }));
      byFrames.record(frame({ task_session_id: `s${i}` }));
    }
    expect(byBytes.stats.dropped.buffer_full).toBe(90);
    expect(byFrames.stats.dropped.buffer_full).toBe(97);
    await Promise.all([byBytes.close({ timeoutMs: 50 }), byFrames.close({ timeoutMs: 50 })]);
    expect(byBytes.stats.dropped.timeout).toBe(10);
    byFrames.record(frame());
    expect(byFrames.stats.dropped.closed).toBe(1);
  });

  it('P2: 2,000 dropped frames give one WARN per reason with the count, not one line per frame', async () => {
    const producer = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs: clientFor(REFUSED_ENDPOINT),
      maxBufferedFrames: 10,
      flushIntervalMs: 60_000,
      backoffMs: 1,
      maxAttempts: 2,
    });
    const { lines } = await captureOutput(async () => {
      for (let i = 0; i < 2_000; i += 1)
        producer.record(frame({ task_session_id: `s${i % 7}`, tool_call_id: `c${i}` }));
      await producer.close();
    });
    expect(producer.stats.dropped).toMatchObject({ buffer_full: 1_990, send_failed: 10 });
    expect(warnings(lines).map((l) => [l.reason, l.count])).toEqual([
      ['buffer_full', 1_990],
      ['send_failed', 10],
    ]);
  });

  it('issue 58 #18: two different bad inputs in one flush give one not_a_frame WARN listing each problem with its own count', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs });
    const { lines } = await captureOutput(async () => {
      producer.record(null as unknown as Frame);
      producer.record(null as unknown as Frame);
      producer.record({ ...frame(), version: 2 } as unknown as Frame);
      await producer.close();
    });
    const warns = warnings(lines).filter((l) => l.reason === 'not_a_frame');
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({
      count: 3,
      details: [
        { problem: 'not an object (got null)', count: 2 },
        { problem: 'version is not 1', count: 1 },
      ],
    });
    expect(warns[0]).not.toHaveProperty('problem');
  });

  it.each([
    ['undefined', undefined, 'got undefined'],
    ['empty', '', 'got an empty string'],
    ['blank', '  ', 'got an empty string'],
    ['not a string', 42, 'got number'],
  ])(
    'issue 58 #18: a queueUrl that is %s is refused at creation, naming the option and how to fix it',
    (_, queueUrl, got) => {
      expect(() => createFrameProducer({ queueUrl: queueUrl as unknown as string, sqs: q.sqs })).toThrow(
        new RegExp(`createFrameProducer needs queueUrl.*\\(${got}\\).*set the variable`),
      );
    },
  );

  it('P3: every SQS call is bounded: a listener that never answers costs requestTimeoutMs per attempt, then the frame is counted', async () => {
    const silent = await startSilentEndpoint();
    cleanups.push(() => silent.close());
    const producer = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs: clientFor(silent.endpoint),
      logger: quiet,
      requestTimeoutMs: 100,
      maxAttempts: 2,
      backoffMs: 1,
    });
    producer.record(frame());
    const started = Date.now();
    await producer.flush();
    expect(Date.now() - started).toBeLessThan(5_000); // the SDK has no timeout of its own: unbounded without ours
    expect(producer.stats.dropped.send_failed).toBe(1);
  });

  it.each([
    ['a listener that never answers', 'silent'],
    ['a refused connection', 'refused'],
  ] as const)(
    'P3: close({ timeoutMs }) resolves by its deadline with %s, counting the unsent frames as dropped',
    async (_name, kind) => {
      const silent = kind === 'silent' ? await startSilentEndpoint() : undefined;
      if (silent) cleanups.push(() => silent.close());
      const producer = createFrameProducer({
        queueUrl: q.queueUrl,
        sqs: clientFor(silent?.endpoint ?? REFUSED_ENDPOINT),
        logger: quiet,
        requestTimeoutMs: 60_000,
        backoffMs: 10_000,
      });
      for (let i = 0; i < 50; i += 1) producer.record(frame({ task_session_id: `s${i}` }));
      const started = Date.now();
      await producer.close({ timeoutMs: 300 });
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(3_000); // calls of 60 s and backoffs of up to 5 s: only the deadline ends it this soon
      expect(producer.stats.sent + producer.stats.dropped.timeout).toBe(50);
      expect(producer.stats.dropped.timeout).toBe(50);
    },
  );

  it('P5: a call that timed out after SQS enqueued it is retried without a duplicate or a reordering', async () => {
    const { sqs } = await proxied(({ n }) =>
      n === 1 ? { call: 'stall-after-forward' } : n === 2 ? { call: 'stall' } : {},
    );
    const producer = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs,
      logger: quiet,
      requestTimeoutMs: 150,
      backoffMs: 1,
    });
    const frames = Array.from({ length: 6 }, (_, i) => frame({ tool_call_id: `c${i}` }));
    for (const f of frames) producer.record(f);
    await producer.flush();
    expect(producer.stats.sent).toBe(6);
    expect((await takeAll(q.sqs, q.queueUrl)).map((m) => JSON.parse(m.Body!).tool_call_id)).toEqual(
      frames.map((f) => f.tool_call_id),
    );
  });

  it('docs/ingest.md: flushes a partial batch on time without an explicit flush()', async () => {
    const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, logger: quiet, flushIntervalMs: 10 });
    producer.record(frame());
    const { Messages = [] } = await q.sqs.send(new ReceiveMessageCommand({ QueueUrl: q.queueUrl, WaitTimeSeconds: 5 }));
    expect(Messages).toHaveLength(1);
  });
});
