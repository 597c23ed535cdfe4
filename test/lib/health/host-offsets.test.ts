import { describe, expect, it } from 'vitest';
import { backfillInsertSql } from '../../../lib/migrate/backfill-sql.js';
import { formatKey, formatRfc3339, parseStoredTimestamp } from '../../../lib/time.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, seedMessage, setCaptureSince } from './seed.js';

/*
 * R4-3, issue 48 item 9: one instant reader for the host's text (readableInstant: any `±HH:MM`
 * offset read as the UTC instant it is) shared by the health check, the backfill and the report.
 * A SQLite message created at `2026-12-03 18:20:00+02:00` is 16:20 UTC: before a capture that
 * began at 17:00, so the history's, never a live shortfall; the backfill writes it at 16:20 UTC.
 * A created_at that is no instant is never called missing.
 */

const SINCE = at('2026-12-03T17:00:00Z');
const NOW = SINCE + 120n * MINUTE;
const CREATED = at('2026-12-03T16:20:00Z');

const GARBAGE: Record<'sqlite' | 'postgres', string[]> = {
  sqlite: ["''", "'10000-01-01 00:00:00+00:00'", '1700000000', "'garbage+02:00'"],
  postgres: ["'infinity'", "'294276-01-01 00:00:00'"],
};

describe.each(TARGET_FIXTURES)(
  'R4-3: health and backfill on %s, %s host schema, read host offsets',
  (name, fixture) => {
    const t = useTestDatabase(name, { fixture });
    const sqlite = name === 'sqlite';

    /** The message as the host's Go driver writes it on SQLite (local time with its offset); PostgreSQL's timestamp holds the UTC instant. */
    async function hostMessage(toolCallId: string) {
      await seedMessage(t.db, { toolCallId, createdAt: CREATED });
      if (sqlite)
        await t.db.query(
          `UPDATE task_session_messages SET created_at = '2026-12-03 18:20:00+02:00', updated_at = '2026-12-03 11:20:00.5-05:00' WHERE metadata LIKE '%"${toolCallId}"%'`,
        );
    }

    it('R4-3: a message at 18:20:00+02:00 (16:20 UTC, before capture) is no live shortfall, in either kind', async () => {
      await setCaptureSince(t.db, formatKey(SINCE));
      await hostMessage('early');
      const scheduled = await check(t.db, NOW, { kind: 'scheduled' });
      expect(scheduled).toMatchObject({ shortfall: 0, missing: [] });
      const full = await check(t.db, NOW, { kind: 'full' });
      expect(full).toMatchObject({ shortfall: 0, missing: [] });
      // it is the history's: no row yet, so the history audit names it
      expect(full.history?.shortfall).toBe(1);
    });

    it('R4-3: the backfill writes that message at the instant it is (16:20 UTC), the report reads the same', async () => {
      await hostMessage('early');
      await t.db.query(backfillInsertSql(t.db.dialect));
      const rows = await t.db.query<{ observed_at: unknown; updated_at: unknown }>(
        'SELECT observed_at, updated_at FROM task_session_subagents',
      );
      expect(rows).toHaveLength(1);
      const read = (v: unknown) =>
        v instanceof Date ? v.toISOString() : formatRfc3339(parseStoredTimestamp(String(v))!);
      expect(read(rows[0]!.observed_at)).toMatch(/^2026-12-03T16:20:00(\.000000)?Z$|^2026-12-03T16:20:00\.000Z$/);
    });

    it.each(GARBAGE[sqlite ? 'sqlite' : 'postgres'])(
      'R4-3: a created_at of %s is never called missing by health --full, and the backfill writes no row for it',
      async (value) => {
        await setCaptureSince(t.db, formatKey(SINCE));
        await seedMessage(t.db, { toolCallId: 'odd', createdAt: CREATED });
        await t.db.query(`UPDATE task_session_messages SET created_at = ${value} WHERE metadata LIKE '%"odd"%'`);
        const full = await check(t.db, NOW, { kind: 'full' });
        expect(full).toMatchObject({ shortfall: 0, missing: [] });
        expect(full.history?.shortfall ?? 0).toBe(0);
        await t.db.query(backfillInsertSql(t.db.dialect));
        expect(await t.db.query('SELECT id FROM task_session_subagents')).toEqual([]);
      },
    );
  },
);
