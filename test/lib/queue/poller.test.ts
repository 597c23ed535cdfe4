import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createPoller } from '../../../lib/queue/poller.js';
import { queueDepth, sendRaw, takeAll, useSqs } from '../../support/sqs.js';

describe('local SQS event source (poller)', () => {
  const q = useSqs({ maxReceiveCount: 2 });

  /** A handler that records what it saw and fails the bodies `fail` says to. */
  const recording = (fail: (body: string, receiveCount: number) => boolean | 'throw') => {
    const seen: { body: string; receiveCount: number; group?: string; arn: string }[] = [];
    const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      const failures: string[] = [];
      for (const r of event.Records) {
        const receiveCount = Number(r.attributes.ApproximateReceiveCount);
        seen.push({ body: r.body, receiveCount, group: r.attributes.MessageGroupId, arn: r.eventSourceARN });
        const verdict = fail(r.body, receiveCount);
        if (verdict === 'throw') throw new Error('handler crashed');
        if (verdict) failures.push(r.messageId);
      }
      return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
    };
    return { seen, handler };
  };

  it('docs/ingest.md: invokes the handler with Lambda-shaped records and deletes what it acknowledged', async () => {
    const { seen, handler } = recording(() => false);
    await sendRaw(q.sqs, q.queueUrl, 'a', 'g1', 'a');
    await sendRaw(q.sqs, q.queueUrl, 'b', 'g2', 'b');
    await createPoller({ sqs: q.sqs, queueUrl: q.queueUrl, handler }).drain();
    expect(seen.map(({ body, group, receiveCount, arn }) => [body, group, receiveCount, arn])).toEqual([
      ['a', 'g1', 1, q.queueArn],
      ['b', 'g2', 1, q.queueArn],
    ]);
    expect(await queueDepth(q.sqs, q.queueUrl)).toBe(0);
  });

  it('docs/ingest.md: a reported failure reappears after the visibility timeout, before the later messages of its group', async () => {
    const { seen, handler } = recording((body, receiveCount) => body === 'm1' && receiveCount === 1);
    for (const body of ['m1', 'm2', 'm3']) await sendRaw(q.sqs, q.queueUrl, body, 'g', body);
    await createPoller({ sqs: q.sqs, queueUrl: q.queueUrl, handler }).drain();
    expect(seen.map((s) => `${s.body}#${s.receiveCount}`)).toEqual(['m1#1', 'm1#2', 'm2#1', 'm3#1']);
  });

  it('docs/ingest.md: a handler that throws leaves the whole batch for redelivery', async () => {
    let crashes = 1;
    const { seen, handler } = recording(() => (crashes-- > 0 ? 'throw' : false));
    const errors: unknown[] = [];
    await sendRaw(q.sqs, q.queueUrl, 'x', 'g', 'x');
    await createPoller({ sqs: q.sqs, queueUrl: q.queueUrl, handler, onError: (e) => errors.push(e) }).drain();
    expect(seen.map((s) => s.receiveCount)).toEqual([1, 2]);
    expect(errors).toHaveLength(1);
  });

  it('docs/ingest.md: a record failing maxReceiveCount times is moved to the DLQ by the queue, and its group moves on', async () => {
    const { seen, handler } = recording((body) => body === 'poison');
    await sendRaw(q.sqs, q.queueUrl, 'poison', 'g', 'p');
    await sendRaw(q.sqs, q.queueUrl, 'next', 'g', 'n');
    await createPoller({ sqs: q.sqs, queueUrl: q.queueUrl, handler }).drain();
    expect(seen.map((s) => s.body)).toEqual(['poison', 'poison', 'next']);
    expect((await takeAll(q.sqs, q.dlqUrl)).map((m) => m.Body)).toEqual(['poison']);
  });
});
