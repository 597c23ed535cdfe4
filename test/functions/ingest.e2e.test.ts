import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../lib/ingest/handler.js';
import type { BatchReport } from '../../lib/ingest/report.js';
import type { Frame } from '../../lib/producer/frame.js';
import { createFrameProducer } from '../../lib/producer/producer.js';
import { toWireMessage } from '../../lib/producer/wire.js';
import { createPoller } from '../../lib/queue/poller.js';
import { sqsViaSdk } from '../../lib/queue/sqs-via-sdk.js';
import { readSession } from '../../lib/store/read.js';
import { handlerDatabase, makeUnavailable } from '../lib/ingest/support.js';
import { faultFreeTable, sessionFrames, tableContent } from '../lib/ingest/traffic.js';
import { frame, seedSession } from '../support/frames.js';
import { queueDepth, sendRaw, takeAll, useSqs } from '../support/sqs.js';
import { TARGET_FIXTURES, useTestDatabase } from '../support/targets.js';

const SESSIONS = ['s1', 's2', 's3'];

describe.each(TARGET_FIXTURES)(
  'producer → SQS FIFO → poller → ingest handler on %s, %s host schema',
  (name, fixture) => {
    const t = useTestDatabase(name, { fixture });
    const q = useSqs();

    /** The pipeline with an optional wrapper around the handler (fault injection, observation). */
    const pipeline = async (
      wrap?: (handler: (e: SQSEvent) => Promise<unknown>) => (e: SQSEvent) => Promise<unknown>,
    ) => {
      for (const s of SESSIONS) await seedSession(t.db, s, `task-${s}`);
      const db = await handlerDatabase(t);
      const reports: BatchReport[] = [];
      const handler = createIngestHandler({
        db: () => db,
        sqs: sqsViaSdk(q.sqs),
        dlqUrl: q.dlqUrl,
        logger: new Logger({ logLevel: 'CRITICAL' }),
        onReport: (r) => reports.push(r),
      });
      const invoke = wrap ? wrap(handler) : handler;
      const poller = createPoller({
        sqs: q.sqs,
        queueUrl: q.queueUrl,
        handler: invoke as typeof handler,
        waitTimeSeconds: 1,
      });
      const producer = createFrameProducer({ queueUrl: q.queueUrl, sqs: q.sqs, flushIntervalMs: 5 });
      const total = (counter: keyof BatchReport['counts']) => reports.reduce((sum, r) => sum + r.counts[counter], 0);
      return { producer, poller, reports, total };
    };
    const allFrames = () => SESSIONS.flatMap(sessionFrames);

    it('docs/ingest.md: a fault-free run leaves the table one-at-a-time ingest leaves', async () => {
      const { producer, poller, total } = await pipeline();
      for (const f of allFrames()) producer.record(f as unknown as Frame);
      await producer.close();
      expect(producer.stats.sent).toBe(allFrames().length);
      await poller.drain();
      const table = await tableContent(t.db);
      expect(table).toHaveLength(9);
      expect(total('persisted')).toBe(allFrames().length);
      expect(table).toEqual(await faultFreeTable(t.db, allFrames()));
    });

    it('docs/frame.md, docs/ingest.md: invalid frames land on the DLQ with a readable reason, never reach the table and never block their group', async () => {
      const { producer, poller, total } = await pipeline();
      const invalid: Record<string, string> = {
        'not JSON': '{"version":1,',
        'version 2': JSON.stringify({ ...frame(), version: 2 }),
        'bad observed_at': JSON.stringify(frame({ observed_at: '2026-13-45 25:00' })),
        'missing subagent_task': JSON.stringify({
          version: 1,
          task_session_id: 's1',
          task_id: 't',
          tool_call_id: 'x',
          observed_at: '2026-08-12T13:24:58Z',
        }),
        'identity of the wrong type': JSON.stringify(frame({ tool_call_id: 42 as unknown as string })),
      };
      const valid = sessionFrames('s1');
      // invalid frames interleaved with the group's valid ones
      for (const [i, f] of valid.entries()) {
        producer.record(f as unknown as Frame);
        await producer.flush();
        const body = Object.values(invalid)[i];
        if (body) await sendRaw(q.sqs, q.queueUrl, body, 's1', `invalid-${i}`);
      }
      await poller.drain();
      expect(await tableContent(t.db)).toEqual(await faultFreeTable(t.db, valid));
      const parked = await takeAll(q.sqs, q.dlqUrl);
      expect(parked.map((m) => m.Body)).toEqual(Object.values(invalid));
      const reasons = parked.map((m) => m.MessageAttributes?.reason?.StringValue);
      expect(reasons).toEqual([
        expect.stringMatching(/not JSON/),
        expect.stringMatching(/version must be 1/),
        expect.stringMatching(/observed_at .* is not an RFC 3339 instant/),
        expect.stringMatching(/subagent_task is required/),
        expect.stringMatching(/tool_call_id must be a string/),
      ]);
      expect(total('invalid')).toBe(5);
    });

    it('docs/ingest.md: the database unreachable for part of the run loses nothing: the table equals a fault-free run', async () => {
      let restore: (() => Promise<void>) | undefined;
      let invocations = 0;
      const { producer, poller, total } = await pipeline((handler) => async (event) => {
        invocations += 1;
        if (invocations === 3) await restore?.(); // two whole invocations hit the outage
        return handler(event);
      });
      for (const f of allFrames()) producer.record(f as unknown as Frame);
      await producer.close();
      restore = await makeUnavailable(t);
      await poller.drain();
      expect(total('failed')).toBeGreaterThanOrEqual(2 * SESSIONS.length);
      expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);
      expect(await tableContent(t.db)).toEqual(await faultFreeTable(t.db, allFrames()));
    });

    it('docs/ingest.md: duplicate deliveries of the same frames give the same table', async () => {
      const { poller } = await pipeline();
      const frames = sessionFrames('s1');
      // every frame twice in a row, then the whole stream again (distinct deduplication ids defeat SQS's own dedup)
      const deliveries = [...frames.flatMap((f) => [f, f]), ...frames];
      for (const [i, f] of deliveries.entries()) await sendRaw(q.sqs, q.queueUrl, JSON.stringify(f), 's1', `d${i}`);
      await poller.drain();
      expect(await tableContent(t.db)).toEqual(await faultFreeTable(t.db, frames));
    });

    it('AC-16, docs/ingest.md: a session deleted while its frames are queued yields no row and no endless retry', async () => {
      const { producer, poller, total } = await pipeline();
      for (const f of [...sessionFrames('s1'), ...sessionFrames('s2')]) producer.record(f as unknown as Frame);
      await producer.close();
      await t.db.query('DELETE FROM task_sessions WHERE id = $1', ['s1']);
      await poller.drain();
      expect(await readSession(t.db, 's1')).toEqual([]);
      expect(await readSession(t.db, 's2')).toHaveLength(3);
      expect(total('orphaned')).toBe(sessionFrames('s1').length);
      expect(await queueDepth(q.sqs, q.queueUrl)).toBe(0);
      expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);
    });

    it('docs/ingest.md: frames of one session are applied in order when a transient failure hits in the middle of its group', async () => {
      const frames = sessionFrames('s1');
      const sent = frames.map((f) => toWireMessage(f).body); // the producer sends the stored part (docs/producers.md)
      const middle = sent[3];
      const acknowledged: string[] = [];
      let failedOnce = false;
      const { producer, poller } = await pipeline((handler) => async (event) => {
        const hitsMiddle = !failedOnce && event.Records.some((r) => r.body === middle);
        const restore = hitsMiddle ? await makeUnavailable(t) : undefined;
        try {
          const response = (await handler(event)) as { batchItemFailures: { itemIdentifier: string }[] };
          const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
          acknowledged.push(...event.Records.filter((r) => !failed.has(r.messageId)).map((r) => r.body));
          return response;
        } finally {
          if (restore) {
            failedOnce = true;
            await restore();
          }
        }
      });
      for (const f of frames) producer.record(f as unknown as Frame);
      await producer.close();
      await poller.drain();
      expect(failedOnce).toBe(true);
      expect(acknowledged).toEqual(sent);
      expect(await tableContent(t.db)).toEqual(await faultFreeTable(t.db, frames));
    });
  },
);
