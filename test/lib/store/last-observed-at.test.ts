import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { addLastObservedAt } from '../../../lib/store/last-observed-at.js';
import { readAll, readTimestamp } from '../../../lib/store/read.js';
import { CREATE_TABLE } from '../../../lib/store/schema.js';
import { writeBatch } from '../../../lib/store/write.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/** The table as it was before R2-7 (and as the host creates it): no last_observed_at. */
const WITHOUT_COLUMN = CREATE_TABLE.replace(/,\n\s*last_observed_at TIMESTAMP/, '');

describe.each(TARGETS)('R2-7: migrate adds last_observed_at to an existing table on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  async function oldTableWithRow(): Promise<void> {
    expect(WITHOUT_COLUMN).not.toContain('last_observed_at');
    await t.db.query(WITHOUT_COLUMN);
    await seedSession(t.db);
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, model, observed_at, updated_at)
       VALUES ('r1', 's1', 't1', 'c1', 'e1', 'final', '2026-08-12 13:26:00', '2026-08-12 13:26:01')`,
    );
  }

  it('R2-7, R3-1: adds the column, fills it from observed_at, and then an older frame only fills NULLs', async () => {
    await oldTableWithRow();
    await runMigration(t.db);
    // Read, the row counts as observed at its updated_at, the later instant (R3-1).
    expect(await readAll(t.db)).toMatchObject([
      { id: 'r1', observed_at: '2026-08-12T13:26:00.000000Z', last_observed_at: '2026-08-12T13:26:01.000000Z' },
    ]);
    const [stored] = await t.db.query<{ last_observed_at: unknown; observed_at: unknown }>(
      `SELECT last_observed_at, observed_at FROM ${TABLE}`,
    );
    expect(stored?.last_observed_at).not.toBeNull();
    expect(readTimestamp(stored?.last_observed_at)).toBe(readTimestamp(stored?.observed_at));
    await writeBatch(t.db, [
      write({ observed_at: '2026-08-12T13:25:00Z', subagent_task: { model: 'old', agent_id: 'a1' } }),
    ]);
    expect(await readAll(t.db)).toMatchObject([
      { model: 'final', agent_id: 'a1', last_observed_at: '2026-08-12T13:26:01.000000Z' },
    ]);
  });

  it('R2-7: a second run finds the column and changes nothing', async () => {
    await oldTableWithRow();
    expect(await addLastObservedAt(t.db)).toBe(true);
    expect(await addLastObservedAt(t.db)).toBe(false);
  });

  it('R2-7, R3-1: a row the host writes later (NULL last_observed_at) merges as observed at its write (observed_at = updated_at)', async () => {
    await oldTableWithRow();
    await addLastObservedAt(t.db);
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, model, observed_at, updated_at)
       VALUES ('r2', 's1', 't1', 'c2', 'e1', 'final', '2026-08-12 13:26:00.5+00:00', '2026-08-12 13:26:00.5+00:00')`,
    );
    await writeBatch(t.db, [
      write({
        tool_call_id: 'c2',
        observed_at: '2026-08-12T13:26:00.499999Z',
        subagent_task: { model: 'older', agent_id: 'a1' },
      }),
    ]);
    expect((await readAll(t.db)).find((r) => r.id === 'r2')).toMatchObject({
      model: 'final',
      agent_id: 'a1',
      last_observed_at: '2026-08-12T13:26:00.500000Z',
    });
    await writeBatch(t.db, [
      write({ tool_call_id: 'c2', observed_at: '2026-08-12T13:26:00.5Z', subagent_task: { model: 'same-instant' } }),
    ]);
    expect((await readAll(t.db)).find((r) => r.id === 'r2')).toMatchObject({ model: 'same-instant' });
  });
});

describe.each(TARGETS)("R2-7: on the host's own table (host fixture) on %s", (name) => {
  const t = useTestDatabase(name, { fixture: 'host', subagentTable: false });

  it('R2-7: the schema step adds last_observed_at to the table the host created, then replays are safe', async () => {
    await runMigration(t.db);
    await seedSession(t.db);
    await writeBatch(t.db, [
      write({ observed_at: '2026-08-12T13:26:00Z', subagent_task: { model: 'final', status: 'completed' } }),
    ]);
    await writeBatch(t.db, [
      write({
        observed_at: '2026-08-12T13:25:00Z',
        subagent_task: { model: 'old', status: 'running', agent_id: 'a1' },
      }),
    ]);
    expect(await readAll(t.db)).toMatchObject([
      { model: 'final', agent_status: 'completed', agent_id: 'a1', last_observed_at: '2026-08-12T13:26:00.000000Z' },
    ]);
  });
});
