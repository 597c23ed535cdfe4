import { describe, expect, it } from 'vitest';
import {
  ACKNOWLEDGED_KEY,
  CHECKPOINT_KEY,
  CheckpointError,
  compareAndSetCheckpoint,
  readCheckpoint,
  recordAcknowledgment,
} from '../../../lib/health/checkpoint.js';
import { formatKey, type Micros } from '../../../lib/time.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

// docs/health.md: an operator's acknowledgment only ever moves forward (issue 20: a mutation letting
// it move backwards survived the suite).
describe.each(TARGETS)('the health acknowledgment on %s', (name) => {
  const t = useTestDatabase(name);
  const T1 = 1_786_541_000_000_000n as Micros;
  const T2 = 1_786_542_000_000_000n as Micros;

  it('a later acknowledgment replaces an earlier one', async () => {
    await recordAcknowledgment(t.db, T1);
    await recordAcknowledgment(t.db, T2);
    expect((await readCheckpoint(t.db)).acknowledgedThrough).toBe(T2);
  });

  it('an earlier acknowledgment never moves it backwards', async () => {
    await recordAcknowledgment(t.db, T2);
    await recordAcknowledgment(t.db, T1);
    expect((await readCheckpoint(t.db)).acknowledgedThrough).toBe(T2);
  });

  it('the same acknowledgment twice leaves it where it is', async () => {
    await recordAcknowledgment(t.db, T1);
    await recordAcknowledgment(t.db, T1);
    expect((await readCheckpoint(t.db)).acknowledgedThrough).toBe(T1);
  });
});

// docs/health.md: the checkpoint only moves by compare-and-set, so two overlapping runs can never
// move it past a message neither verified.
describe.each(TARGETS)('the health checkpoint on %s', (name) => {
  const t = useTestDatabase(name);
  const T1 = 1_786_541_000_000_000n as Micros;
  const T2 = 1_786_542_000_000_000n as Micros;
  const T3 = 1_786_543_000_000_000n as Micros;
  const setKey = (key: string, value: string) =>
    t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);

  it('reads the checkpoint and the acknowledgment from the kandev_meta keys docs/health.md names', async () => {
    await setKey('subagent_context_health_verified_through', formatKey(T1));
    await setKey('subagent_context_health_acknowledged_through', formatKey(T2));
    expect(await readCheckpoint(t.db)).toMatchObject({ at: T1, acknowledgedThrough: T2 });
  });

  it('reads an empty store as no checkpoint and no acknowledgment', async () => {
    expect(await readCheckpoint(t.db)).toEqual({ raw: undefined, at: undefined, acknowledgedThrough: undefined });
  });

  it('reads the stored text byte-identical beside the instant it names, and the acknowledgment apart from it', async () => {
    await setKey(CHECKPOINT_KEY, ' 2026-08-12T13:23:20Z');
    await recordAcknowledgment(t.db, T2);
    expect(await readCheckpoint(t.db)).toEqual({ raw: ' 2026-08-12T13:23:20Z', at: T1, acknowledgedThrough: T2 });
  });

  it('compare-and-set from no checkpoint writes it in the key form and says it wrote', async () => {
    expect(await compareAndSetCheckpoint(t.db, await readCheckpoint(t.db), T1)).toBe(true);
    expect(await readCheckpoint(t.db)).toMatchObject({ raw: formatKey(T1), at: T1 });
  });

  it('compare-and-set from no checkpoint, when another run wrote one first, writes nothing and says so', async () => {
    const before = await readCheckpoint(t.db);
    expect(await compareAndSetCheckpoint(t.db, before, T2)).toBe(true);
    expect(await compareAndSetCheckpoint(t.db, before, T1)).toBe(false);
    expect((await readCheckpoint(t.db)).at).toBe(T2);
  });

  it('compare-and-set from the value still stored moves it forward and says it wrote', async () => {
    await compareAndSetCheckpoint(t.db, await readCheckpoint(t.db), T1);
    expect(await compareAndSetCheckpoint(t.db, await readCheckpoint(t.db), T2)).toBe(true);
    expect((await readCheckpoint(t.db)).at).toBe(T2);
  });

  it("compare-and-set from a value another run has since moved writes nothing: that run's value stands", async () => {
    await compareAndSetCheckpoint(t.db, await readCheckpoint(t.db), T1);
    const before = await readCheckpoint(t.db);
    expect(await compareAndSetCheckpoint(t.db, before, T3)).toBe(true);
    expect(await compareAndSetCheckpoint(t.db, before, T2)).toBe(false);
    expect((await readCheckpoint(t.db)).at).toBe(T3);
  });

  it('compare-and-set never touches the acknowledgment', async () => {
    await recordAcknowledgment(t.db, T1);
    await compareAndSetCheckpoint(t.db, await readCheckpoint(t.db), T3);
    expect(await readCheckpoint(t.db)).toMatchObject({ at: T3, acknowledgedThrough: T1 });
  });

  it.each([CHECKPOINT_KEY, ACKNOWLEDGED_KEY])(
    'a %s that is not an instant fails with CheckpointError naming the key, its value and how to fix it',
    async (key) => {
      await setKey(key, 'yesterday');
      const error = await readCheckpoint(t.db).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(CheckpointError);
      expect(error).toMatchObject({ name: 'CheckpointError', key, value: 'yesterday' });
      expect((error as Error).message).toBe(
        `kandev_meta key ${key} holds "yesterday", which is not an RFC 3339 instant; ` +
          'delete the key (the next scheduled check then starts again from capture_since, or from the other health key) ' +
          'or set it to an instant in the key form (e.g. 2026-08-12T13:24:58.123456000Z)',
      );
    },
  );
});
