import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import type { HealthCheckOptions } from '../../../lib/health/check.js';
import { HealthCheckError } from '../../../lib/health/check.js';
import type { HealthKind } from '../../../lib/health/report.js';
import { formatKey, formatRfc3339 } from '../../../lib/time.js';
import { fixtureHolds, TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import {
  at,
  check as checkOnce,
  MINUTE,
  SECOND,
  seedMessage,
  seedRow,
  setCaptureSince,
  subagentMetadata,
} from './seed.js';

// A whole-second activation instant: the host's SQLite text trims it to `…12:00:00+00:00`, so a
// raw string comparison against a fractional form would misplace rows at the boundary.
const SINCE = at('2026-08-12T12:00:00Z');
const NOW = SINCE + 120n * MINUTE;
const LIVE = SINCE + 10n * MINUTE;

const KINDS: HealthKind[] = ['scheduled', 'full'];

// Both kinds answer the same questions; on a first run (no checkpoint yet) the scheduled window
// starts at capture_since, so every rule below holds for each.
describe.each(TARGET_FIXTURES)('health check on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  const activate = () => setCaptureSince(t.db, formatKey(SINCE));

  describe.each(KINDS)('%s', (kind) => {
    const check = (db: Queryable, now: bigint, options: Partial<HealthCheckOptions> = {}) =>
      checkOnce(db, now, { kind, ...options });
    const window = { from: formatRfc3339(SINCE), to: formatRfc3339(NOW - 15n * MINUTE) };
    // The minimal host schema has no idx_messages_metadata_tool_call_id: there the scheduled
    // check leaves excess to the full audit (issue 26; test/lib/health/excess-left-to-audit.test.ts).
    const leftToAudit = kind === 'scheduled' && fixture === 'minimal';
    const excess = (n: number) => (leftToAudit ? null : n);
    const checkpoint =
      kind === 'full'
        ? null
        : { before: null, after: formatRfc3339(NOW - 15n * MINUTE), moved: true, acknowledged: false };

    it('AC-28: is healthy after live writes cover every subagent message', async () => {
      await activate();
      for (const call of ['c1', 'c2']) {
        await seedMessage(t.db, { toolCallId: call, createdAt: LIVE });
        await seedRow(t.db, { toolCallId: call, observedAt: LIVE + SECOND });
      }
      expect(await check(t.db, NOW)).toEqual({
        status: 'healthy',
        kind,
        window,
        recent: null,
        checkpoint,
        shortfall: 0,
        excess: excess(0),
        excessLeftToAudit: leftToAudit
          ? expect.objectContaining({ missingIndex: 'idx_messages_metadata_tool_call_id' })
          : null,
        collisions: 0,
        lastObservedAt: formatRfc3339(LIVE + SECOND),
        captureSince: formatRfc3339(SINCE),
        missing: [],
        // the full audit also compares the history before capture_since (R3-4), none here
        history: kind === 'full' ? { before: formatRfc3339(SINCE), shortfall: 0, missing: [] } : null,
        unacknowledgedShortfall: kind === 'full' ? 0 : null,
        unreadableCreatedAt: kind === 'full' ? 0 : null,
        checkedAt: formatRfc3339(NOW),
      });
    });

    it('AC-29: the first missed subagent is a shortfall even with standing excess', async () => {
      await activate();
      for (const call of ['x1', 'x2', 'x3']) await seedRow(t.db, { toolCallId: call, observedAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      await seedRow(t.db, { toolCallId: 'c1', observedAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'missed', createdAt: LIVE });
      const report = await check(t.db, NOW);
      expect(report).toMatchObject({
        status: 'shortfall',
        shortfall: 1,
        excess: excess(3),
        missing: [{ task_session_id: 's1', tool_call_id: 'missed' }],
      });
    });

    it('AC-29: excess alone is reported and does not alarm', async () => {
      await activate();
      for (const call of ['x1', 'x2']) await seedRow(t.db, { toolCallId: call, observedAt: LIVE });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'healthy', shortfall: 0, excess: excess(2) });
    });

    it('AC-29: excess counts a row with no subagent message even when a non-subagent message shares its key', async () => {
      await activate();
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE, metadata: subagentMetadata('c1', 'tool_call') });
      await seedRow(t.db, { toolCallId: 'c1', observedAt: LIVE });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'healthy', excess: excess(1) });
    });

    it('AC-28: two messages describing one subagent are one key, not a shortfall', async () => {
      await activate();
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE + MINUTE });
      await seedRow(t.db, { toolCallId: 'c1', observedAt: LIVE });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'healthy', shortfall: 0, excess: excess(0) });
    });

    it('AC-28: a missed subagent described by two messages counts once', async () => {
      await activate();
      await seedRow(t.db, { toolCallId: 'other', observedAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE + MINUTE });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'shortfall', shortfall: 1 });
    });

    it.each([
      ['no tool_call_id', { metadata: subagentMetadata(undefined) }],
      ['an empty tool_call_id', { metadata: subagentMetadata('') }],
      ['an empty task_id column', { taskId: '' }],
    ])('AC-2: a message with %s (skipped by the writer) does not alarm', async (_label, seed) => {
      await activate();
      await seedRow(t.db, { toolCallId: 'other', observedAt: LIVE });
      await seedMessage(t.db, { createdAt: LIVE, ...seed });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'healthy', shortfall: 0 });
    });

    it('AC-32: a tool call id reused across executions is counted as a collision and does not alarm', async () => {
      await activate();
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      await seedRow(t.db, { toolCallId: 'c1', execution: 'e1', observedAt: LIVE });
      await seedRow(t.db, { toolCallId: 'c1', execution: 'e2', observedAt: LIVE + MINUTE });
      expect(await check(t.db, NOW)).toMatchObject({
        status: 'healthy',
        shortfall: 0,
        excess: excess(0),
        collisions: 1,
      });
    });

    it('AC-28a: without capture_since it is not_activated and runs no comparison', async () => {
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      const before = t.db.stats.roundTrips;
      const report = await check(t.db, NOW);
      expect(t.db.stats.roundTrips - before).toBe(1);
      expect(report).toEqual({
        status: 'not_activated',
        kind,
        window: null,
        recent: null,
        checkpoint: null,
        shortfall: null,
        excess: null,
        excessLeftToAudit: null,
        collisions: null,
        lastObservedAt: null,
        captureSince: null,
        missing: [],
        history: null,
        unacknowledgedShortfall: null,
        unreadableCreatedAt: null,
        checkedAt: formatRfc3339(NOW),
      });
    });

    it('AC-24f: an empty capture_since is the sentinel, not_activated, never parsed', async () => {
      await setCaptureSince(t.db, '');
      expect(await check(t.db, NOW)).toMatchObject({ status: 'not_activated', shortfall: null });
    });

    it('refuses an unparsable capture_since with the key and how to fix it', async () => {
      await setCaptureSince(t.db, 'yesterday');
      await expect(check(t.db, NOW)).rejects.toThrow(HealthCheckError);
      await expect(check(t.db, NOW)).rejects.toThrow(/subagent_context_capture_since.*"yesterday".*re-invoke migrate/);
    });

    it('is silent when only backfilled or pre-activation rows exist (an unscoped MAX would look healthy)', async () => {
      await activate();
      await seedMessage(t.db, { toolCallId: 'b1', createdAt: SINCE - 60n * MINUTE });
      await seedRow(t.db, { toolCallId: 'b1', observedAt: SINCE - 60n * MINUTE, source: 'backfill' });
      await seedMessage(t.db, { toolCallId: 'early', createdAt: SINCE - SECOND });
      await seedRow(t.db, { toolCallId: 'early', observedAt: SINCE - SECOND });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'silent', shortfall: 0, lastObservedAt: null });
    });

    it('AC-28b: a shortfall that resolves before confirmation is not reported', async () => {
      await activate();
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      let waited = 0;
      const report = await check(t.db, NOW, {
        beforeConfirm: async () => {
          waited += 1;
          await seedRow(t.db, { toolCallId: 'c1', observedAt: NOW - MINUTE });
        },
      });
      expect(waited).toBe(1);
      expect(report).toMatchObject({ status: 'healthy', shortfall: 0, missing: [] });
    });

    it('AC-28b: a shortfall that persists through confirmation is reported', async () => {
      await activate();
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: LIVE });
      let waited = 0;
      const report = await check(t.db, NOW, {
        beforeConfirm: async () => {
          waited += 1;
        },
      });
      expect(waited).toBe(1);
      expect(report).toMatchObject({ status: 'shortfall', shortfall: 1 });
    });

    it('a zero shortfall is not re-evaluated', async () => {
      await activate();
      let waited = 0;
      await check(t.db, NOW, {
        beforeConfirm: async () => {
          waited += 1;
        },
      });
      expect(waited).toBe(0);
    });

    it('names at most 20 missing keys, in key order, while counting all of them', async () => {
      await activate();
      const calls = Array.from({ length: 25 }, (_, i) => `c${String(i).padStart(2, '0')}`);
      for (const call of [...calls].reverse()) await seedMessage(t.db, { toolCallId: call, createdAt: LIVE });
      const report = await check(t.db, NOW);
      expect(report.shortfall).toBe(25);
      expect(report.missing).toEqual(
        calls.slice(0, 20).map((tool_call_id) => ({ task_session_id: 's1', tool_call_id })),
      );
    });

    // The real host's store refuses a document its indexes cannot parse: such a message cannot exist there.
    it.each(
      (
        [
          ['NULL', null],
          ["''", ''],
          ["'null'", 'null'],
          ['invalid JSON', '{"tool_call_id": "c1", "normalized": {'],
          ['a JSON array', '[1, 2]'],
          ['a JSON string', '"subagent_task"'],
          ['normalized as a string', '{"tool_call_id": "c1", "normalized": "subagent_task"}'],
        ] as [string, string | null][]
      ).filter(([, metadata]) => fixtureHolds(name, fixture, metadata)),
    )('AC-23b: metadata holding %s does not raise and does not alarm', async (_label, metadata) => {
      await activate();
      await seedMessage(t.db, { createdAt: LIVE, metadata });
      await seedRow(t.db, { toolCallId: 'c1', observedAt: LIVE });
      expect(await check(t.db, NOW)).toMatchObject({ status: 'healthy', shortfall: 0, excess: excess(1) });
    });

    it.each([
      ['1 µs inside the grace period', 0, 900n * SECOND - 1n],
      ['exactly at the grace boundary', 0, 900n * SECOND],
      ['1 µs older than the grace period', 1, 900n * SECOND + 1n],
    ])('a message %s counts %i toward the shortfall', async (_label, expected, age) => {
      await activate();
      await seedRow(t.db, { toolCallId: 'other', observedAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: NOW - age });
      expect((await check(t.db, NOW)).shortfall).toBe(expected);
    });

    it('honours a configured grace period', async () => {
      await activate();
      await seedRow(t.db, { toolCallId: 'other', observedAt: LIVE });
      await seedMessage(t.db, { toolCallId: 'c1', createdAt: NOW - 2n * MINUTE });
      expect((await check(t.db, NOW, { graceSeconds: 60 })).shortfall).toBe(1);
      expect((await check(t.db, NOW, { graceSeconds: 180 })).shortfall).toBe(0);
    });

    // AC-24e: exact to the microsecond, for the nanosecond key form and an older writer's second-precision key.
    describe.each([
      ['a nanosecond key', formatKey(SINCE)],
      ['a second-precision key', '2026-08-12T12:00:00Z'],
    ])('AC-24e: with %s', (_form, key) => {
      it('a message 1 µs before capture_since is not expected; one exactly at it is', async () => {
        await setCaptureSince(t.db, key);
        await seedRow(t.db, { toolCallId: 'other', observedAt: LIVE });
        await seedMessage(t.db, { toolCallId: 'before', createdAt: SINCE - 1n });
        await seedMessage(t.db, { toolCallId: 'at', createdAt: SINCE });
        expect(await check(t.db, NOW)).toMatchObject({
          shortfall: 1,
          missing: [{ task_session_id: 's1', tool_call_id: 'at' }],
        });
      });

      it('a row 1 µs before capture_since does not cover a message; one exactly at it does', async () => {
        await setCaptureSince(t.db, key);
        await seedMessage(t.db, { toolCallId: 'c1', createdAt: SINCE + SECOND });
        await seedMessage(t.db, { toolCallId: 'c2', createdAt: SINCE + SECOND });
        await seedRow(t.db, { toolCallId: 'c1', observedAt: SINCE - 1n });
        await seedRow(t.db, { toolCallId: 'c2', observedAt: SINCE });
        expect(await check(t.db, NOW)).toMatchObject({
          shortfall: 1,
          missing: [{ task_session_id: 's1', tool_call_id: 'c1' }],
          lastObservedAt: formatRfc3339(SINCE),
        });
      });

      it('only a row 1 µs before capture_since leaves the writer silent', async () => {
        await setCaptureSince(t.db, key);
        await seedRow(t.db, { toolCallId: 'c1', observedAt: SINCE - 1n });
        expect(await check(t.db, NOW)).toMatchObject({ status: 'silent', lastObservedAt: null });
      });
    });
  });
});
