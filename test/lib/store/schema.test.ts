import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { readAll, readSession } from '../../../lib/store/read.js';
import { CREATE_TABLE, ensureSubagentTable } from '../../../lib/store/schema.js';
import { writeBatch } from '../../../lib/store/write.js';
import { indexNames } from '../../support/catalog.js';
import { seedSession, seedTurn, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/** The bare minimum a row needs: every NOT NULL column without a DEFAULT. */
const MINIMAL_INSERT = `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, observed_at, updated_at)
  VALUES ($1, 's1', 't1', $2, 'unknown', '2026-08-12 13:24:58', '2026-08-12 13:24:58')`;

describe('the table DDL (docs/table.md)', () => {
  it('declares the metrics nullable without a DEFAULT', () => {
    for (const metric of ['total_tokens', 'tool_use_count', 'duration_ms']) {
      expect(CREATE_TABLE).toMatch(new RegExp(`\\n  ${metric} INTEGER,`));
    }
  });

  it("declares the conflict key in the contract's column order (docs/table.md)", () => {
    expect(CREATE_TABLE).toContain('UNIQUE (task_session_id, agent_execution_id, tool_call_id)');
  });
});

describe.each(TARGETS)('the table on %s', (name) => {
  const t = useTestDatabase(name);

  it('AC-7: stores NULL, not 0, in a metric nobody wrote (no DEFAULT)', async () => {
    await seedSession(t.db);
    await t.db.query(MINIMAL_INSERT, ['r1', 'c1']);
    const [row] = await readAll(t.db);
    expect(row).toMatchObject({
      total_tokens: null,
      tool_use_count: null,
      duration_ms: null,
      is_async: 0,
      source: 'live',
      settled_at: null,
      turn_id: null,
    });
  });

  it('rejects a second row with the same session, execution and tool call', async () => {
    await seedSession(t.db);
    await t.db.query(MINIMAL_INSERT, ['r1', 'c1']);
    await expect(t.db.query(MINIMAL_INSERT, ['r2', 'c1'])).rejects.toMatchObject({ sqlstate: '23505' });
  });

  it("R2-10: an insert that omits agent_execution_id, as the host's own tests do, stores 'unknown'", async () => {
    await seedSession(t.db);
    await t.db.query(MINIMAL_INSERT.replace('agent_execution_id, ', '').replace("'unknown', ", ''), ['r1', 'c1']);
    expect((await readAll(t.db))[0]).toMatchObject({ agent_execution_id: 'unknown', source: 'live' });
  });

  it('R2-10: a metric up to 2^31-1 fits the column on every dialect', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [
      write({
        subagent_task: { total_tokens: 2_147_483_647, duration_ms: 2_147_483_647, tool_use_count: 2_147_483_647 },
      }),
    ]);
    expect((await readAll(t.db))[0]).toMatchObject({
      total_tokens: 2_147_483_647,
      duration_ms: 2_147_483_647,
      tool_use_count: 2_147_483_647,
    });
  });

  it('AC-16: deleting a session cascades its rows away and leaves other sessions alone', async () => {
    await seedSession(t.db, 's1');
    await seedSession(t.db, 's2');
    await writeBatch(t.db, [
      write({ task_session_id: 's1', tool_call_id: 'a' }),
      write({ task_session_id: 's1', tool_call_id: 'b', execution_id: 'e2' }),
      write({ task_session_id: 's2', tool_call_id: 'a' }),
    ]);
    await t.db.query('DELETE FROM task_sessions WHERE id = $1', ['s1']);
    expect(await readSession(t.db, 's1')).toEqual([]);
    expect((await readAll(t.db)).map((r) => r.task_session_id)).toEqual(['s2']);
  });

  it('keeps a row whose turn was deleted (turn_id has no foreign key)', async () => {
    await seedSession(t.db);
    await seedTurn(t.db, 'u1', 's1');
    await writeBatch(t.db, [write({ turn_id: 'u1' }), write({ tool_call_id: 'c2', turn_id: 'never-created' })]);
    await t.db.query("DELETE FROM task_session_turns WHERE id = 'u1'");
    expect((await readAll(t.db)).map((r) => r.turn_id).sort()).toEqual(['never-created', 'u1']);
  });

  it("R2-10: indexes task_session_id, task_id and turn_id under the host's names, and observed_at (the health check's row side)", async () => {
    expect(await indexNames(t.db, TABLE)).toEqual([
      'idx_subagents_observed_at',
      'idx_subagents_session_id',
      'idx_subagents_task_id',
      'idx_subagents_turn_id',
    ]);
  });

  it('ensureSubagentTable runs again without touching existing rows', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ subagent_task: { model: 'm1' } })]);
    const before = await readAll(t.db);
    await ensureSubagentTable(t.db);
    expect(await readAll(t.db)).toEqual(before);
  });
});
