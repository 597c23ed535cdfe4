import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import type { Queryable } from '../../../lib/db/database.js';
import { runHealthCheck } from '../../../lib/health/check.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { readAll } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { parseStoredTimestamp } from '../../../lib/time.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

describe.each(TARGET_FIXTURES)('backfilled instants on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  const completed = subagentDoc({
    task: { status: 'completed', model: 'claude-x', total_tokens: 500, duration_ms: 4000 },
  });

  it("R3-1, R2-7: a backfilled row's last_observed_at is the message's updated_at, never its created_at", async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: completed,
      createdAt: '2026-08-12T10:00:00Z',
      updatedAt: '2026-08-12T10:05:00.000001Z',
    });
    await runMigration(t.db);
    expect(await readAll(t.db)).toMatchObject([
      { observed_at: '2026-08-12T10:00:00.000000Z', last_observed_at: '2026-08-12T10:05:00.000001Z' },
    ]);
  });

  it('R3-1, R2-7: a live frame observed between created_at and updated_at only fills NULLs of a backfilled row', async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: completed,
      createdAt: '2026-08-12T10:00:00Z',
      updatedAt: '2026-08-12T10:05:00Z',
    });
    await runMigration(t.db);
    await writeBatch(t.db, [
      write({
        execution_id: '',
        observed_at: '2026-08-12T10:03:00Z',
        subagent_task: { status: 'running', model: 'claude-old', total_tokens: 100, agent_id: 'a1' },
      }),
    ]);
    expect(await readAll(t.db)).toMatchObject([
      {
        source: 'backfill',
        agent_status: 'completed',
        model: 'claude-x',
        total_tokens: 500,
        duration_ms: 4000,
        agent_id: 'a1',
        last_observed_at: '2026-08-12T10:05:00.000000Z',
      },
    ]);
  });

  it('R3-1: a host message whose updated_at precedes its created_at gives last_observed_at = observed_at', async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: completed,
      createdAt: '2026-08-12T10:00:00Z',
      updatedAt: '2026-08-12T09:59:59Z',
    });
    await runMigration(t.db);
    expect(await readAll(t.db)).toMatchObject([
      { observed_at: '2026-08-12T10:00:00.000000Z', last_observed_at: '2026-08-12T10:00:00.000000Z' },
    ]);
  });
});

/**
 * The host's own drivers' text for one instant (Appendix B): SQLite keeps nanoseconds
 * (`2006-01-02 15:04:05.999999999-07:00`, zeros trimmed), PostgreSQL's `timestamp` microseconds.
 */
async function hostMessageAt(db: Queryable, id: string, hostText: string): Promise<void> {
  await insertHostMessage(db, { id, metadata: subagentDoc({ top: { tool_call_id: id } }) });
  await db.query(
    `UPDATE task_session_messages SET created_at = ${db.dialect.timestampParam(1)}, updated_at = ${db.dialect.timestampParam(1)} WHERE id = $2`,
    [hostText, id],
  );
}

describe.each(TARGET_FIXTURES)('R3-2: instants with sub-microsecond digits on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  it('R3-2: backfill_through is never earlier than the newest message covered (rounded up to the microsecond)', async () => {
    await hostMessageAt(t.db, 'm0', '2026-08-12 09:59:59.9999999+00:00');
    await hostMessageAt(t.db, 'm1', '2026-08-12 10:00:00.000000001+00:00');
    const report = await runMigration(t.db);
    // SQLite keeps the nanosecond: the key rounds up to .000001. PostgreSQL stored .000000 itself.
    const expected = name === 'sqlite' ? '2026-08-12T10:00:00.000001000Z' : '2026-08-12T10:00:00.000000000Z';
    expect(report.backfillThrough).toBe(expected);
    const [stored] = await t.db.query<{ created_at: string }>(
      `SELECT ${t.db.dialect.exact('created_at')} AS created_at FROM task_session_messages WHERE id = 'm1'`,
    );
    expect(parseStoredTimestamp(report.backfillThrough!)! >= parseStoredTimestamp(stored!.created_at)!).toBe(true);
  });

  it("R4-3, round 2 leftover (issue 57): backfill_through is the newest instant as the one reader reads it: another offset's later-looking text or a value that is no instant never becomes it", async () => {
    // SQLite: 18:59:59.999999999+02:00 is 16:59:59.999999999 UTC, its text later than 17:00 (the raw
    // MAX took it); PostgreSQL's timestamp holds no offset, and infinity is no instant
    const texts =
      name === 'sqlite'
        ? ['2026-08-12 18:59:59.999999999+02:00', '2026-08-12 17:00:00.000000001+00:00', 'garbage', '']
        : ['2026-08-12 16:59:59.999999', '2026-08-12 17:00:00.000001', 'infinity'];
    for (const [i, text] of texts.entries()) await hostMessageAt(t.db, `m${i}`, text);
    const report = await runMigration(t.db);
    expect(report.backfillThrough).toBe('2026-08-12T17:00:00.000001000Z');
    // every message that is an instant is backfilled, and only those
    expect(report.matched).toBe(2);
  });

  it('R3-2: a capture_since key the host wrote with sub-microsecond digits compares as the instant it is', async () => {
    // Messages 0.5 µs before and 0.5 µs after the key: only the later one is expected to have a row.
    await hostMessageAt(t.db, 'before', '2026-08-12 10:00:00+00:00');
    await hostMessageAt(t.db, 'after', '2026-08-12 10:00:00.000001+00:00');
    await t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2), ($3, $4)', [
      CAPTURE_SINCE_KEY,
      '2026-08-12T10:00:00.0000005Z',
      BACKFILL_THROUGH_KEY,
      '',
    ]);
    const report = await runHealthCheck(t.db, { kind: 'full', graceSeconds: 0, confirmDelayMs: 0 });
    expect(report).toMatchObject({ shortfall: 1, missing: [{ task_session_id: 's1', tool_call_id: 'after' }] });
  });

  it("R3-2: our frame's last_observed_at is never earlier than observed_at of a host row at …57.3388988", async () => {
    const frame = {
      execution_id: '',
      observed_at: '2026-08-12T13:24:57.3388988Z',
      subagent_task: { model: 'm' },
    };
    await seedSession(t.db);
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, observed_at, updated_at)
       VALUES ('r1', 's1', 't1', 'c1', 'unknown', ${t.db.dialect.timestampParam(1)}, ${t.db.dialect.timestampParam(1)})`,
      [name === 'sqlite' ? '2026-08-12 13:24:57.3388988+00:00' : '2026-08-12 13:24:57.3388988'],
    );
    await writeBatch(t.db, [write(frame)]);
    const [row] = await t.db.query<{ observed_at: string; last_observed_at: string }>(
      `SELECT ${t.db.dialect.exact('observed_at')} AS observed_at, ${t.db.dialect.exact('last_observed_at')} AS last_observed_at FROM ${TABLE}`,
    );
    const nanos = (text: string) => text.replace(/^.*\./, '').padEnd(9, '0');
    // Compared digit for digit: the stored texts, not our reading of them.
    expect(row!.last_observed_at.slice(0, 19)).toBe(row!.observed_at.slice(0, 19));
    expect(nanos(row!.last_observed_at) >= nanos(row!.observed_at)).toBe(true);
  });
});
