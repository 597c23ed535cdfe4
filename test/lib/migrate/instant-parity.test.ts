import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { readAll } from '../../../lib/store/read.js';
import { formatRfc3339 } from '../../../lib/time.js';
import { hostDriverInstant } from '../../../local/host-fixtures.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, setCaptureSince } from '../health/seed.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

/*
 * R2-1 parity and R3-2 at a microsecond tie (docs/time.md#sub-microsecond-digits): the host holds
 * instants with nanoseconds; its SQLite driver stores every digit, its PostgreSQL driver (pgx) the
 * microsecond with the rest truncated. Both dialects then compare a host instant as its truncated
 * microsecond, so an instant 0.6 µs past a microsecond ties with it on both (PostgreSQL's own text
 * input would have rounded it to the next one, where SQLite's comparable form truncates).
 */

/** A host message whose created_at and updated_at the host's driver stored from `hostText`. */
async function hostMessageAt(
  db: Queryable,
  message: { id: string; toolCallId: string; description: string; hostText: string },
): Promise<void> {
  const metadata = subagentDoc({
    top: { tool_call_id: message.toolCallId },
    task: { description: message.description },
  });
  await insertHostMessage(db, { id: message.id, metadata });
  await db.query(
    `UPDATE task_session_messages SET created_at = ${db.dialect.timestampParam(1)}, updated_at = ${db.dialect.timestampParam(1)} WHERE id = $2`,
    [hostDriverInstant(db.dialect.name, message.hostText), message.id],
  );
}

describe.each(TARGET_FIXTURES)(
  'R2-1, R3-2: host instants at a microsecond tie on %s, %s host schema',
  (name, fixture) => {
    const t = useTestDatabase(name, { fixture });

    it.each([
      // [created_at of m-a, of m-b, description of the row]: the newer message wins, a tie goes to the greater id (AC-21b).
      ['2026-08-12 10:00:00.0000016+00:00', '2026-08-12 10:00:00.000001+00:00', 'B (a tie: the greater id)'],
      ['2026-08-12 10:00:00.0000024+00:00', '2026-08-12 10:00:00.000001+00:00', 'A (newer)'],
      ['2026-08-12 10:00:00.000000999+00:00', '2026-08-12 10:00:00+00:00', 'B (a tie: the greater id)'],
    ])(
      'R2-1, R3-2: the backfill orders a key’s messages by the truncated microsecond: m-a at %s, m-b at %s → %s',
      async (a, b, expected) => {
        await hostMessageAt(t.db, { id: 'm-a', toolCallId: 'c1', description: 'A (newer)', hostText: a });
        await hostMessageAt(t.db, {
          id: 'm-b',
          toolCallId: 'c1',
          description: 'B (a tie: the greater id)',
          hostText: b,
        });
        await runMigration(t.db);
        expect((await readAll(t.db)).map((row) => row.description)).toEqual([expected]);
      },
    );

    it('R2-1, R3-2: a host message 0.6 µs past capture_since’s microsecond before it is outside the window on every dialect', async () => {
      const since = at('2026-08-12T10:00:00.000001Z');
      await hostMessageAt(t.db, {
        id: 'before',
        toolCallId: 'c-before',
        description: 'd',
        hostText: '2026-08-12 10:00:00.0000006+00:00',
      });
      await hostMessageAt(t.db, {
        id: 'at',
        toolCallId: 'c-at',
        description: 'd',
        hostText: '2026-08-12 10:00:00.0000016+00:00',
      });
      await setCaptureSince(t.db, formatRfc3339(since));
      const report = await check(t.db, since + 60n * MINUTE);
      expect(report).toMatchObject({ shortfall: 1, missing: [{ tool_call_id: 'c-at' }] });
    });
  },
);
