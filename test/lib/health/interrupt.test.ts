import { describe, expect, it } from 'vitest';
import { HealthCheckInterrupted } from '../../../lib/health/check.js';
import { CHECKPOINT_KEY } from '../../../lib/health/checkpoint.js';
import { CREATE_META_TABLE } from '../../../lib/migrate/keys.js';
import { formatKey, formatRfc3339 } from '../../../lib/time.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, SECOND, seedMessage, seedRow, setCaptureSince } from './seed.js';

/*
 * Issue 58 #11: the scheduled check's Ctrl-C boundary (runHealthCheck's `signal`): it stops before
 * its next checkpoint write and names the checkpoint the slices before it wrote, or none.
 */

const SINCE = at('2026-08-12T10:00:00Z');
const NOW = at('2026-08-12T14:00:00Z');

describe.each(TARGETS)('issue 58 #11: the health check stopped by its signal on %s', (name) => {
  const t = useTestDatabase(name);
  const prepare = async () => {
    await t.db.query(CREATE_META_TABLE);
    await setCaptureSince(t.db, formatKey(SINCE));
    await seedMessage(t.db, { toolCallId: 'c1', createdAt: SINCE + MINUTE });
    await seedRow(t.db, { toolCallId: 'c1', observedAt: SINCE + MINUTE + SECOND });
  };
  const stored = async () =>
    (await t.db.query<{ value: string }>('SELECT value FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]))[0]?.value;

  it('issue 58 #11: aborted before the first checkpoint write: no checkpoint written, none named', async () => {
    await prepare();
    const ctrlC = new AbortController();
    ctrlC.abort();
    const stopped = await check(t.db, NOW, { signal: ctrlC.signal }).catch((err: unknown) => err);
    expect(stopped).toBeInstanceOf(HealthCheckInterrupted);
    expect((stopped as HealthCheckInterrupted).checkpoint).toEqual({
      before: null,
      after: null,
      moved: false,
      acknowledged: false,
    });
    expect(await stored()).toBeUndefined();
  });

  it('issue 58 #11: aborted between slices: the slices before it wrote the checkpoint, and it is named', async () => {
    await prepare();
    const ctrlC = new AbortController();
    let writes = 0;
    const stopped = await check(t.db, NOW, {
      signal: ctrlC.signal,
      maxWindowSeconds: 3_600,
      catchUpSeconds: 60,
      // the first slice's write goes ahead; Ctrl-C comes during the second slice
      beforeCheckpoint: async () => {
        if (++writes === 2) ctrlC.abort();
      },
    }).catch((err: unknown) => err);
    expect(stopped).toBeInstanceOf(HealthCheckInterrupted);
    const firstSliceEnd = formatRfc3339(SINCE + 60n * MINUTE);
    expect((stopped as HealthCheckInterrupted).checkpoint).toEqual({
      before: null,
      after: firstSliceEnd,
      moved: true,
      acknowledged: false,
    });
    expect(await stored()).toBe(formatKey(SINCE + 60n * MINUTE));
  });
});
