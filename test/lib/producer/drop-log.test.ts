import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { createDropLog, DROP_REASONS, type DropReason, MAX_DETAILS_PER_WARN } from '../../../lib/producer/drop-log.js';
import { captureOutput } from '../ingest/support.js';

const zero = () => Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('P2: bounded drop logging', () => {
  it('P2: one WARN per reason per interval carrying the count; counts are exact at once', async () => {
    const dropped = zero();
    const { lines } = await captureOutput(async () => {
      const drops = createDropLog({ logger: new Logger({ serviceName: 't' }), intervalMs: 30, dropped });
      for (let i = 0; i < 500; i += 1) drops.add('buffer_full', 1);
      drops.add('rejected', 2, { code: 'InvalidMessageContents' });
      expect(dropped).toMatchObject({ buffer_full: 500, rejected: 2 });
      await sleep(80); // the first interval ends: one line per reason
      drops.add('buffer_full', 3);
      drops.report(); // close() / exit report what is left at once
      drops.report(); // nothing new: no line
    });
    const warns = lines.filter((l) => l.level === 'WARN').map((l) => [l.reason, l.count, l.code]);
    expect(warns).toEqual([
      ['buffer_full', 500, undefined],
      ['rejected', 2, 'InvalidMessageContents'],
      ['buffer_full', 3, undefined],
    ]);
  });

  it(`issue 58 #18: one reason's WARN lists at most ${MAX_DETAILS_PER_WARN} distinct details, each with its count; the rest are counted as unlisted`, async () => {
    const { lines } = await captureOutput(async () => {
      const drops = createDropLog({ logger: new Logger({ serviceName: 't' }), intervalMs: 60_000, dropped: zero() });
      for (let i = 0; i < MAX_DETAILS_PER_WARN + 2; i += 1) drops.add('send_failed', 2, { code: `E${i}` });
      drops.add('send_failed', 1, { code: 'E0' });
      drops.report();
    });
    const [warn, ...rest] = lines.filter((l) => l.level === 'WARN');
    expect(rest).toEqual([]);
    expect(warn).toMatchObject({ reason: 'send_failed', count: 2 * (MAX_DETAILS_PER_WARN + 2) + 1, unlisted_count: 4 });
    expect(warn!.details).toEqual([
      { code: 'E0', count: 3 },
      ...Array.from({ length: MAX_DETAILS_PER_WARN - 1 }, (_, i) => ({ code: `E${i + 1}`, count: 2 })),
    ]);
    expect(warn).not.toHaveProperty('code');
  });

  it('AC-27: a logger that throws does not reach the caller', () => {
    const broken = {
      warn: () => {
        throw new Error('log sink down');
      },
    } as unknown as Logger;
    const drops = createDropLog({ logger: broken, intervalMs: 10, dropped: zero() });
    drops.add('closed', 1);
    expect(() => drops.report()).not.toThrow();
  });
});
