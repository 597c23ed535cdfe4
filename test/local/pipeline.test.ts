import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { messageFor, startLocalPipeline } from '../../local/pipeline.js';
import { frame, seedSession } from '../support/frames.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

it("P6: the local pipeline groups raw bodies by the producer's rule (a session id SQS refuses as a group is hashed)", () => {
  expect(messageFor(JSON.stringify(frame({ task_session_id: 's1' }))).group).toBe('s1');
  expect(messageFor(JSON.stringify(frame({ task_session_id: 'sessión 1' }))).group).toMatch(/^sha256-[0-9a-f]{64}$/);
  expect(messageFor('not JSON').group).toBe('no-session');
});

it("P6: a line's deduplication id is the SHA-256 of its bytes, as SQS's content-based deduplication computes it: no walk, any depth (issue 25)", () => {
  const deep = `{"version":1,"extra":${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
  for (const body of [JSON.stringify(frame()), 'not JSON', deep]) {
    expect(messageFor(body).dedup).toBe(createHash('sha256').update(body, 'utf8').digest('hex'));
  }
});

// The local stand-in for the deployed queue pair: what the CLI and `npm start` report as "on the
// dead-letter queue, and why" must hold for every way a frame gets there.
describe.each(TARGETS)('the local pipeline on %s', (name) => {
  const t = useTestDatabase(name);

  it('parks an invalid frame with its reason and stores the valid one', async () => {
    await seedSession(t.db);
    const pipeline = await startLocalPipeline({ db: t.db });
    try {
      await pipeline.send([JSON.stringify(frame()), '{"version":1}']);
      await pipeline.poller.drain();
      expect(pipeline.totals.counts).toMatchObject({ persisted: 1, invalid: 1 });
      expect(await pipeline.deadLetters()).toMatchObject([{ failure: 'invalid_frame', body: '{"version":1}' }]);
      expect(await pipeline.deadLetters()).toEqual([]);
    } finally {
      await pipeline.stop();
    }
  });

  // SQLite is a file in this process: there is no connection to cut.
  it.skipIf(name === 'sqlite')(
    'moves a frame that keeps failing transiently to the dead-letter queue after maxReceiveCount (AC-27)',
    async () => {
      await seedSession(t.db);
      const pipeline = await startLocalPipeline({ db: t.connect(), maxReceiveCount: 2 });
      try {
        await pipeline.send([JSON.stringify(frame())]);
        t.proxy!.setAvailable(false);
        await pipeline.poller.drain({ timeoutMs: 60_000 });
        t.proxy!.setAvailable(true);
        expect(pipeline.totals.counts.persisted).toBe(0);
        expect(pipeline.totals.counts.failed).toBeGreaterThanOrEqual(2);
        const letters = await pipeline.deadLetters();
        expect(letters).toEqual([
          {
            failure: 'retries_exhausted',
            reason: expect.stringMatching(/transient/),
            messageGroupId: 's1',
            body: JSON.stringify(frame()),
          },
        ]);
      } finally {
        await pipeline.stop();
      }
    },
    90_000,
  );
});
