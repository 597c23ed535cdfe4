import { describe, expect, it } from 'vitest';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { readAll } from '../../../lib/store/read.js';
import { TERMINAL_TOOL_STATUSES } from '../../../lib/terminal.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

/** The metric and boolean rules of docs/merge.md#recording-one-frame, applied to one payload field each (AC-7, AC-7a, AC-8, AC-9, AC-23). */
const FIELD_CASES: ReadonlyArray<{ name: string; task: Record<string, unknown>; expected: Record<string, unknown> }> = [
  { name: 'AC-7: total_tokens 0 is not reported → NULL', task: { total_tokens: 0 }, expected: { total_tokens: null } },
  { name: 'AC-7: duration_ms 0 is not reported → NULL', task: { duration_ms: 0 }, expected: { duration_ms: null } },
  { name: 'AC-7a: a reported 0 tool_use_count stays 0', task: { tool_use_count: 0 }, expected: { tool_use_count: 0 } },
  { name: 'AC-7a: an absent tool_use_count is NULL', task: {}, expected: { tool_use_count: null } },
  {
    name: 'AC-23: the largest real total_tokens is kept',
    task: { total_tokens: 275_717 },
    expected: { total_tokens: 275_717 },
  },
  {
    name: "R2-10: 2^31-1, the most the host's 32-bit column holds, is still a metric",
    task: { duration_ms: 2_147_483_647 },
    expected: { duration_ms: 2_147_483_647 },
  },
  {
    name: 'R2-10: a metric above 2^31-1 → NULL, never a failed backfill',
    task: { total_tokens: 3_000_000_000, duration_ms: 2 ** 31 },
    expected: { total_tokens: null, duration_ms: null },
  },
  {
    name: 'R2-10: 2^53-1 → NULL',
    task: { tool_use_count: Number.MAX_SAFE_INTEGER },
    expected: { tool_use_count: null },
  },
  {
    name: 'AC-23: a whole number written as 12.0 is a metric, as in the live path',
    task: { tool_use_count: 12.0 },
    expected: { tool_use_count: 12 },
  },
  { name: 'AC-8: a negative metric → NULL', task: { total_tokens: -5 }, expected: { total_tokens: null } },
  {
    name: 'AC-9: a metric given as a string → NULL',
    task: { total_tokens: '91234' },
    expected: { total_tokens: null },
  },
  { name: 'AC-9: a fractional metric → NULL', task: { duration_ms: 1234.5 }, expected: { duration_ms: null } },
  {
    name: 'AC-9: a metric beyond 2^53-1 → NULL',
    task: { tool_use_count: 9007199254740992 },
    expected: { tool_use_count: null },
  },
  {
    name: 'AC-9: a metric given as an object → NULL',
    task: { total_tokens: { n: 1 } },
    expected: { total_tokens: null },
  },
  { name: 'AC-23: is_async true → 1', task: { is_async: true }, expected: { is_async: 1 } },
  { name: 'AC-23: is_async given as the string "true" → 0', task: { is_async: 'true' }, expected: { is_async: 0 } },
  { name: 'AC-23: is_async given as 1 → 0', task: { is_async: 1 }, expected: { is_async: 0 } },
  {
    name: "AC-23: '' text → NULL",
    task: { model: '', description: '', agent_id: '', subagent_type: '' },
    expected: { model: null, description: null, agent_id: null, subagent_type: null },
  },
  { name: 'AC-23: a text field given as a number → NULL', task: { model: 5 }, expected: { model: null } },
  {
    name: 'AC-23: an absent child status → NULL agent_status',
    task: { status: undefined },
    expected: { agent_status: null },
  },
];

describe.each(TARGET_FIXTURES)('backfill derivations on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  const backfillOne = async (
    doc: Record<string, unknown>,
    message: Partial<Parameters<typeof insertHostMessage>[1]> = {},
  ) => {
    await insertHostMessage(t.db, { id: 'm1', metadata: doc, ...message });
    await runMigration(t.db);
    const rows = await readAll(t.db);
    expect(rows).toHaveLength(1);
    return rows[0]!;
  };

  it('AC-23: derives every column from the message columns, the top-level metadata and the payload', async () => {
    const row = await backfillOne(
      subagentDoc({
        // turn_id and task_id inside metadata are not sources: the message's own columns are.
        top: {
          tool_call_id: 'toolu_01',
          parent_tool_call_id: 'toolu_00',
          status: 'in_progress',
          turn_id: 'not-this',
          task_id: 'not-this',
        },
        task: {
          description: 'Review auth',
          subagent_type: 'security-reviewer',
          status: 'completed',
          agent_id: 'a1b2',
          model: 'claude-opus-5[1m]',
          child_session_id: 'ses_9',
          duration_ms: 48211,
          total_tokens: 91234,
          tool_use_count: 0,
          is_async: false,
          prompt: 'never stored',
          result_text: 'never stored',
        },
      }),
      {
        taskId: 'task-from-column',
        turnId: 'u7',
        createdAt: '2026-08-12T13:24:58.123456Z',
        updatedAt: '2026-08-12T13:25:10.5Z',
      },
    );
    expect(row).toMatchObject({
      task_session_id: 's1',
      task_id: 'task-from-column',
      turn_id: 'u7',
      tool_call_id: 'toolu_01',
      agent_execution_id: 'unknown',
      parent_tool_call_id: 'toolu_00',
      subagent_type: 'security-reviewer',
      description: 'Review auth',
      agent_id: 'a1b2',
      child_session_id: 'ses_9',
      model: 'claude-opus-5[1m]',
      // top-level status is the launching call's; the payload's is the child's: never conflated
      tool_status: 'in_progress',
      agent_status: 'completed',
      is_async: 0,
      total_tokens: 91234,
      tool_use_count: 0,
      duration_ms: 48211,
      source: 'backfill',
      observed_at: '2026-08-12T13:24:58.123456Z',
      settled_at: null,
      // The host's own backfill's choices, so both backfills name a row the same way.
      id: 'm1',
      updated_at: '2026-08-12T13:25:10.500000Z',
    });
  });

  it('AC-7, AC-10a: an async_launched message whose call completed stores NULL metrics, is_async 1, settled at updated_at', async () => {
    const row = await backfillOne(
      subagentDoc({ top: { status: 'completed' }, task: { status: 'async_launched', is_async: true } }),
      {
        createdAt: '2026-08-12T13:24:58Z',
        updatedAt: '2026-08-12T13:24:59.000001Z',
      },
    );
    expect(row).toMatchObject({
      tool_status: 'completed',
      agent_status: 'async_launched',
      is_async: 1,
      total_tokens: null,
      tool_use_count: null,
      duration_ms: null,
      observed_at: '2026-08-12T13:24:58.000000Z',
      settled_at: '2026-08-12T13:24:59.000001Z',
    });
  });

  it("AC-23: turn_id comes from the message's turn_id column, '' → NULL", async () => {
    const row = await backfillOne(subagentDoc({ top: { turn_id: 'u-in-metadata' } }), { turnId: '' });
    expect(row.turn_id).toBeNull();
  });

  it("AC-23: parent_tool_call_id '' → NULL", async () => {
    const row = await backfillOne(subagentDoc({ top: { parent_tool_call_id: '' } }));
    expect(row.parent_tool_call_id).toBeNull();
  });

  it.each(FIELD_CASES)('$name', async ({ task, expected }) => {
    const row = await backfillOne(subagentDoc({ task }));
    expect(row).toMatchObject(expected);
  });

  it.each([...TERMINAL_TOOL_STATUSES])(
    'AC-11: top-level status %s settles the row at the message updated_at',
    async (status) => {
      const row = await backfillOne(subagentDoc({ top: { status } }), { updatedAt: '2026-08-12T13:30:00.654321Z' });
      expect(row.settled_at).toBe('2026-08-12T13:30:00.654321Z');
    },
  );

  it.each(['in_progress', 'pending', 'Completed', '', 'async_launched'])(
    'AC-11: top-level status "%s" leaves settled_at NULL',
    async (status) => {
      const row = await backfillOne(subagentDoc({ top: { status }, task: { status: 'completed' } }));
      expect(row.settled_at).toBeNull();
    },
  );
});
