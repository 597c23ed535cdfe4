import { describe, expect, it } from 'vitest';
import { recordAcknowledgment } from '../../../lib/health/checkpoint.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { at, check, seedMessage, seedRow, setCaptureSince } from './seed.js';

const NOW = at('2026-08-12T14:00:00Z');

describe.each(TARGETS)('the daily audit on %s', (name) => {
  const t = useTestDatabase(name);

  async function twoLosses(): Promise<void> {
    await setCaptureSince(t.db, '2026-08-12T12:00:00.000000000Z');
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:10:00Z'), toolCallId: 'accepted' });
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:40:00Z'), toolCallId: 'open' });
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:50:00Z'), toolCallId: 'seen' });
    await seedRow(t.db, { observedAt: at('2026-08-12T12:50:01Z'), toolCallId: 'seen' });
  }

  it('issue 26: its alarm figure is the shortfall nobody acknowledged; the shortfall still counts all of it', async () => {
    await twoLosses();
    await recordAcknowledgment(t.db, at('2026-08-12T12:30:00Z'));
    expect(await check(t.db, NOW, { kind: 'full' })).toMatchObject({ shortfall: 2, unacknowledgedShortfall: 1 });
  });

  it('issue 26: without an acknowledgment every loss counts', async () => {
    await twoLosses();
    expect(await check(t.db, NOW, { kind: 'full' })).toMatchObject({ shortfall: 2, unacknowledgedShortfall: 2 });
  });

  it('issue 26: the audit finds a message committed after the scheduled check passed its creation', async () => {
    await setCaptureSince(t.db, '2026-08-12T12:00:00.000000000Z');
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:50:00Z'), toolCallId: 'seen' });
    await seedRow(t.db, { observedAt: at('2026-08-12T12:50:01Z'), toolCallId: 'seen' });
    expect(await check(t.db, NOW, { overlapSeconds: 300 })).toMatchObject({ status: 'healthy' });
    // Committed 40 minutes after its created_at: behind the checkpoint and its overlap.
    await seedMessage(t.db, { createdAt: at('2026-08-12T13:00:00Z'), toolCallId: 'late' });
    expect(await check(t.db, NOW + at('2026-08-12T00:05:00Z') - at('2026-08-12T00:00:00Z'))).toMatchObject({
      shortfall: 0,
    });
    expect(await check(t.db, NOW, { kind: 'full' })).toMatchObject({
      status: 'shortfall',
      shortfall: 1,
      unacknowledgedShortfall: 1,
      missing: [{ task_session_id: 's1', tool_call_id: 'late' }],
    });
  });
});
