import { createHash } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../lib/ingest/handler.js';
import type { Frame } from '../../lib/producer/frame.js';
import { createFrameProducer } from '../../lib/producer/producer.js';
import { createPoller } from '../../lib/queue/poller.js';
import { sqsViaSdk } from '../../lib/queue/sqs-via-sdk.js';
import { sqsClientFor } from '../../local/fauxqs.js';
import { type BatchCall, type Fault, type SqsFaultProxy, startSqsFaultProxy } from '../../local/sqs-faults.js';
import { handlerDatabase } from '../lib/ingest/support.js';
import { faultFreeTable, sessionFrames, tableContent } from '../lib/ingest/traffic.js';
import { seedSession } from '../support/frames.js';
import { takeAll, useSqs } from '../support/sqs.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

const SESSIONS = ['s1', 's2', 's3', 's4'];
const quiet = new Logger({ logLevel: 'CRITICAL' });
const hash = (text: string) => createHash('sha256').update(text).digest()[0]!;

/**
 * Faults SQS produces under load, each entry meeting at most one whole-call fault and one entry
 * fault (so the default 5 attempts always suffice and the run is deterministic): calls made only
 * of first attempts are throttled, 5xx-failed, never answered, or enqueued with the answer lost;
 * about half of all entries are throttled or failed on their own once (partial batch failures).
 */
function faultPlan(): (call: BatchCall) => Fault {
  const attempted = new Set<string>();
  const entryFaulted = new Set<string>();
  return ({ n, entries }) => {
    const fresh = entries.every((e) => !attempted.has(e.MessageDeduplicationId!));
    for (const e of entries) attempted.add(e.MessageDeduplicationId!);
    if (fresh) {
      const call = (['throttle', 'server-error', 'stall-after-forward', 'stall', undefined] as const)[n % 5];
      if (call) return { call };
    }
    const failing: Record<string, 'throttle' | 'internal'> = {};
    for (const e of entries) {
      const h = hash(e.MessageDeduplicationId!);
      if (h % 2 === 0 && !entryFaulted.has(e.MessageDeduplicationId!)) {
        entryFaulted.add(e.MessageDeduplicationId!);
        failing[e.Id] = h % 4 === 0 ? 'throttle' : 'internal';
      }
    }
    return { entries: failing };
  };
}

describe.each(TARGETS)('P5: producer → fault proxy → fauxqs → poller → ingest on %s', (name) => {
  const t = useTestDatabase(name);
  const q = useSqs();
  let proxy: SqsFaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  it('P5: with partial batch failures, throttling and timeouts injected at the SQS layer, the table equals the fault-free run', async () => {
    for (const s of SESSIONS) await seedSession(t.db, s, `task-${s}`);
    proxy = await startSqsFaultProxy(q.endpoint, faultPlan());
    const producerSqs = sqsClientFor(proxy.endpoint);
    producerSqs.config.maxAttempts = async () => 1; // every fault reaches the producer's own retry
    const producer = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs: producerSqs,
      logger: quiet,
      requestTimeoutMs: 300,
      backoffMs: 5,
      flushIntervalMs: 5,
    });

    // interleaved as a host records them: the sessions' frames alternate
    const perSession = SESSIONS.map(sessionFrames);
    const frames = perSession[0]!.flatMap((_, i) => perSession.map((list) => list[i]!));
    for (const f of frames) producer.record(f as unknown as Frame);
    await producer.close({ timeoutMs: 30_000 });
    producerSqs.destroy();
    expect(producer.stats).toMatchObject({ sent: frames.length, recorded: frames.length });
    expect(Object.values(producer.stats.dropped).every((n) => n === 0)).toBe(true);

    const attempts = proxy.calls.flatMap((c) => c.entries.map((e) => e.MessageDeduplicationId));
    expect(attempts.length - new Set(attempts).size).toBeGreaterThan(10); // the faults really happened: entries sent again

    const db = await handlerDatabase(t);
    const delivered: string[] = [];
    const handler = createIngestHandler({ db: () => db, sqs: sqsViaSdk(q.sqs), dlqUrl: q.dlqUrl, logger: quiet });
    const observed = async (event: SQSEvent) => {
      for (const r of event.Records)
        delivered.push(
          `${r.attributes.MessageGroupId}:${JSON.parse(r.body).tool_call_id}@${JSON.parse(r.body).observed_at}`,
        );
      return handler(event);
    };
    await createPoller({ sqs: q.sqs, queueUrl: q.queueUrl, handler: observed, waitTimeSeconds: 1 }).drain();
    expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);

    // each session reached the queue once per frame, in the order it was recorded
    for (const [i, s] of SESSIONS.entries()) {
      expect(delivered.filter((d) => d.startsWith(`${s}:`))).toEqual(
        perSession[i]!.map((f) => `${s}:${f.tool_call_id}@${f.observed_at}`),
      );
    }
    expect(await tableContent(t.db)).toEqual(await faultFreeTable(t.db, frames));
  }, 60_000);
});
