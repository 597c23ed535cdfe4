import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as z from 'zod/mini';
import type { frameSchema } from '../../../lib/frame/schema.js';
import type { Frame } from '../../../lib/producer/producer.js';
import { createFrameProducer } from '../../../lib/producer/producer.js';
import { frame } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';

/*
 * Issue 51, item 4: the producer exports the frame's type and `record` takes it, so a TypeScript
 * host gets a compile-time check; what a JavaScript host records that is not a frame is dropped
 * by the producer (counted `not_a_frame`), not sent to be parked by the consumer.
 */

describe('issue 51: the producer’s Frame', () => {
  it('issue 51: record takes the exported Frame; a string is a compile-time error', () => {
    type Recorded = Parameters<ReturnType<typeof createFrameProducer>['record']>[0];
    expectTypeOf<Recorded>().toEqualTypeOf<Frame>();
    expectTypeOf<string>().not.toExtend<Recorded>();
  });

  it('issue 51: the producer’s Frame is the consumer schema’s frame, field for field', () => {
    type Schema = z.input<typeof frameSchema>;
    expectTypeOf<keyof Frame>().toEqualTypeOf<keyof Schema>();
    expectTypeOf<keyof Frame['subagent_task']>().toEqualTypeOf<keyof Schema['subagent_task']>();
  });

  const q = useSqs();
  it.each<[string, unknown]>([
    ['a string', 'not a frame'],
    ['null', null],
    ['an array', [frame()]],
    ['an object without version 1', { ...frame(), version: 2 }],
  ])('issue 51: record(%s) is dropped as not_a_frame, nothing sent', async (_, value) => {
    const producer = createFrameProducer({
      queueUrl: q.queueUrl,
      sqs: q.sqs,
      logger: new Logger({ logLevel: 'CRITICAL' }),
    });
    producer.record(value as Frame); // what a JavaScript host can pass
    producer.record(frame());
    await producer.flush();
    expect(producer.stats.dropped.not_a_frame).toBe(1);
    expect(await takeAll(q.sqs, q.queueUrl)).toHaveLength(1);
    await producer.close();
  });
});
