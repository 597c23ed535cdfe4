import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { readAll, readSession, readTimestamp, readTurn } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { formatRfc3339, parseRfc3339 } from '../../../lib/time.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

const key = (r: { tool_call_id: string; agent_execution_id: string }) => `${r.tool_call_id}/${r.agent_execution_id}`;

describe.each(TARGETS)('reads on %s', (name) => {
  const t = useTestDatabase(name);

  it('AC-13: orders a session by observed_at, then tool_call_id, then agent_execution_id, never by id', async () => {
    await seedSession(t.db);
    const same = '2026-08-12T13:24:58.5Z';
    // arrival order deliberately unlike the expected order; ids are random UUIDs
    await writeBatch(t.db, [
      write({ tool_call_id: 'c2', execution_id: 'e2', observed_at: same }),
      write({ tool_call_id: 'c0', execution_id: 'e1', observed_at: '2026-08-12T13:24:59Z' }),
      write({ tool_call_id: 'c2', execution_id: 'e1', observed_at: same }),
      write({ tool_call_id: 'c1', execution_id: 'e9', observed_at: same }),
      write({ tool_call_id: 'c9', execution_id: 'e1', observed_at: '2026-08-12T13:24:58.25Z' }),
      write({ tool_call_id: 'c9', execution_id: 'e0', observed_at: '2026-08-12T13:24:58Z' }),
    ]);
    expect((await readSession(t.db, 's1')).map(key)).toEqual(['c9/e0', 'c9/e1', 'c1/e9', 'c2/e1', 'c2/e2', 'c0/e1']);
  });

  it('AC-13: orders by instant across fraction widths 1 µs apart', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [
      write({ tool_call_id: 'a', observed_at: '2026-08-12T13:24:58.000001Z' }),
      write({ tool_call_id: 'b', observed_at: '2026-08-12T13:24:58Z' }),
      write({ tool_call_id: 'c', observed_at: '2026-08-12T13:24:57.999999Z' }),
      write({ tool_call_id: 'd', observed_at: '2026-08-12T13:24:58.1Z' }),
      write({ tool_call_id: 'e', observed_at: '2026-08-12T13:24:58.099999Z' }),
    ]);
    expect((await readSession(t.db, 's1')).map((r) => r.tool_call_id)).toEqual(['c', 'b', 'a', 'e', 'd']);
  });

  it("AC-13: a session read holds only that session's rows", async () => {
    await seedSession(t.db, 's1');
    await seedSession(t.db, 's2');
    await writeBatch(t.db, [
      write({ task_session_id: 's1', tool_call_id: 'a' }),
      write({ task_session_id: 's2', tool_call_id: 'b' }),
    ]);
    expect((await readSession(t.db, 's2')).map((r) => r.tool_call_id)).toEqual(['b']);
  });

  it('AC-13: reads a turn across sessions in the same order', async () => {
    await seedSession(t.db, 's1');
    await seedSession(t.db, 's2');
    await writeBatch(t.db, [
      write({ task_session_id: 's2', turn_id: 'u1', tool_call_id: 'b', observed_at: '2026-08-12T13:24:58Z' }),
      write({ task_session_id: 's1', turn_id: 'u2', tool_call_id: 'x' }),
      write({ task_session_id: 's1', turn_id: 'u1', tool_call_id: 'a', observed_at: '2026-08-12T13:24:58Z' }),
      write({ task_session_id: 's1', turn_id: 'u1', tool_call_id: 'c', observed_at: '2026-08-12T13:24:57Z' }),
    ]);
    expect((await readTurn(t.db, 'u1')).map((r) => r.tool_call_id)).toEqual(['c', 'a', 'b']);
  });

  it('returns every column, timestamps as RFC 3339 UTC to the microsecond and metrics as numbers', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [
      write({
        turn_id: 'u1',
        parent_tool_call_id: 'p1',
        tool_status: 'completed',
        observed_at: '2026-08-12T15:24:58.000001+02:00',
        subagent_task: {
          subagent_type: 'explore',
          description: 'd',
          agent_id: 'a',
          child_session_id: 'ch',
          model: 'm',
          status: 'completed',
          is_async: true,
          total_tokens: 2_147_483_647,
          duration_ms: 48_211,
          tool_use_count: 0,
        },
      }),
    ]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'c1',
      agent_execution_id: 'e1',
      parent_tool_call_id: 'p1',
      subagent_type: 'explore',
      description: 'd',
      agent_id: 'a',
      child_session_id: 'ch',
      model: 'm',
      agent_status: 'completed',
      tool_status: 'completed',
      is_async: 1,
      total_tokens: 2_147_483_647,
      tool_use_count: 0,
      duration_ms: 48_211,
      source: 'live',
      observed_at: '2026-08-12T13:24:58.000001Z',
      settled_at: '2026-08-12T13:24:58.000001Z',
      updated_at: '2026-08-12T13:24:58.000001Z', // the row's newest observation (R3-1)
      last_observed_at: '2026-08-12T13:24:58.000001Z',
    });
  });

  it('reads a row the host stored in its trimmed text form; R2-7: its NULL last_observed_at reads as observed_at', async () => {
    await seedSession(t.db);
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, observed_at, updated_at)
       VALUES ('r1', 's1', 't1', 'c1', 'unknown', '2026-07-30 01:39:37.5+00:00', '2026-07-30 01:39:37+00:00')`,
    );
    const rows = await readAll(t.db);
    expect(rows).toMatchObject([
      {
        observed_at: '2026-07-30T01:39:37.500000Z',
        updated_at: '2026-07-30T01:39:37.000000Z',
        settled_at: null,
        last_observed_at: '2026-07-30T01:39:37.500000Z',
      },
    ]);
  });
});

describe('readTimestamp', () => {
  it.each([
    ['2026-07-30 01:39:37.271235+00:00', '2026-07-30T01:39:37.271235Z'],
    ['2026-07-30 01:39:37+00:00', '2026-07-30T01:39:37.000000Z'],
    ['2026-07-30 01:39:37.5', '2026-07-30T01:39:37.500000Z'],
    ['2026-07-30T01:39:37.500000000Z', '2026-07-30T01:39:37.500000Z'],
  ])('reads %s as %s', (stored, expected) => {
    expect(readTimestamp(stored)).toBe(expected);
    expect(formatRfc3339(parseRfc3339(expected)!)).toBe(expected);
  });

  it.each([null, undefined])('reads %s as NULL', (stored) => {
    expect(readTimestamp(stored)).toBeNull();
  });

  it('names the table when a stored value cannot be read', () => {
    expect(() => readTimestamp('yesterday')).toThrow(/unreadable timestamp "yesterday" in task_session_subagents/);
  });
});
