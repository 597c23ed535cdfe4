import { describe, expect, it } from 'vitest';
import { readCheckpoint, recordAcknowledgment } from '../../../lib/health/checkpoint.js';
import type { Micros } from '../../../lib/time.js';
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
