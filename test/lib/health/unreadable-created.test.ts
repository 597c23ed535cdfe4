import { describe, expect, it } from 'vitest';
import { renderHealth } from '../../../lib/cli/commands/health.js';
import type { HealthKind } from '../../../lib/health/report.js';
import { formatKey } from '../../../lib/time.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, SECOND, seedMessage, seedRow, setCaptureSince, subagentMetadata } from './seed.js';

/*
 * R4-3 for the health check: the host's task_session_messages has no CHECKs either, so a message's
 * created_at can hold a value that is not an instant. Such a message has no place in time: it is in
 * no window of either kind (docs/health.md), and it never makes the check fail. The full audit's
 * history never calls it missing either (test/lib/health/host-offsets.test.ts).
 */

const SINCE = at('2026-08-12T12:00:00Z');
const NOW = SINCE + 120n * MINUTE;
const LIVE = SINCE + 10n * MINUTE;

const ODD: Record<'sqlite' | 'postgres', string[]> = {
  sqlite: ["'garbage'", "''", '1700000000', "'10000-01-01 00:00:00+00:00'"],
  postgres: ["'infinity'", "'-infinity'", "'294276-01-01 00:00:00'", "'0044-03-15 12:00:00 BC'"],
};

describe.each(TARGET_FIXTURES)('R4-3: health on %s, %s host schema, with an unreadable created_at', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  const dialect = name === 'sqlite' ? 'sqlite' : 'postgres';

  describe.each(['scheduled', 'full'] as HealthKind[])('%s', (kind) => {
    it.each(ODD[dialect])('R4-3: a message created at %s is in no window and fails nothing', async (value) => {
      await setCaptureSince(t.db, formatKey(SINCE));
      await seedMessage(t.db, { toolCallId: 'good', createdAt: LIVE });
      await seedRow(t.db, { toolCallId: 'good', observedAt: LIVE + SECOND });
      await seedMessage(t.db, { toolCallId: 'odd', createdAt: LIVE });
      await t.db.query(`UPDATE task_session_messages SET created_at = ${value} WHERE metadata LIKE '%"odd"%'`);
      const report = await check(t.db, NOW, { kind });
      expect(report).toMatchObject({ kind, shortfall: 0, missing: [], lastObservedAt: '2026-08-12T12:10:01.000000Z' });
      if (kind === 'scheduled') expect(report.status).toBe('healthy');
    });
  });

  it('R4-3, round 2 leftover (issue 57): the full audit counts the messages whose created_at is not an instant, the scheduled check says where they are counted; neither fails nor reads them as 0', async () => {
    await setCaptureSince(t.db, formatKey(SINCE));
    await seedMessage(t.db, { toolCallId: 'good', createdAt: LIVE });
    await seedRow(t.db, { toolCallId: 'good', observedAt: LIVE + SECOND });
    // every odd value of this dialect on a subagent message of its own, and one on a message that
    // is no subagent invocation (the comparison never reads it: not counted)
    const odd = ODD[dialect];
    for (const [i, value] of odd.entries()) {
      await seedMessage(t.db, { toolCallId: `odd${i}`, createdAt: LIVE });
      await t.db.query(`UPDATE task_session_messages SET created_at = ${value} WHERE metadata LIKE '%"odd${i}"%'`);
    }
    await seedMessage(t.db, { metadata: subagentMetadata('other', 'tool_call'), createdAt: LIVE });
    await t.db.query(`UPDATE task_session_messages SET created_at = ${odd[0]} WHERE metadata LIKE '%"other"%'`);
    const full = await check(t.db, NOW, { kind: 'full' });
    expect(full).toMatchObject({ status: 'healthy', shortfall: 0, unreadableCreatedAt: odd.length });
    expect(full.history).toMatchObject({ shortfall: 0 });
    expect(renderHealth(full, { graceSeconds: 0 })).toMatch(
      new RegExp(`unreadable created_at +${odd.length} \\(subagent messages whose created_at is not an instant: `),
    );
    const scheduled = await check(t.db, NOW);
    expect(scheduled).toMatchObject({ status: 'healthy', shortfall: 0, unreadableCreatedAt: null });
    // the scheduled text says nothing of them (its JSON's null says it did not count): a line in
    // every run's text for what only the full audit counts was noise beside the window's facts
    expect(renderHealth(scheduled, { graceSeconds: 0 })).not.toMatch(/unreadable created_at/);
  });
});
