import { describe, expect, it } from 'vitest';
import { readSession } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

const OLD = '11111111-1111-4111-8111-111111111111';
const NEW = '22222222-2222-4222-8222-222222222222';
const clock = (text: string) => parseRfc3339(text)!;

describe.each(TARGETS)('agent executions on %s', (name) => {
  const t = useTestDatabase(name);

  it("AC-30: stores the frame's execution id verbatim", async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ execution_id: OLD })]);
    expect((await readSession(t.db, 's1')).map((r) => r.agent_execution_id)).toEqual([OLD]);
  });

  it('AC-31: frames without an execution id share one row under the unknown sentinel', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ execution_id: undefined, subagent_task: { model: 'm1' } })]);
    await writeBatch(t.db, [write({ execution_id: '', subagent_task: { total_tokens: 5 } })]);
    const rows = await readSession(t.db, 's1');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ agent_execution_id: 'unknown', model: 'm1', total_tokens: 5 });
  });

  it('AC-32: two executions reusing one tool_call_id give two rows', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ execution_id: OLD, observed_at: '2026-08-12T13:00:00Z' })]);
    await writeBatch(t.db, [write({ execution_id: NEW, observed_at: '2026-08-12T14:00:00Z' })]);
    const rows = await readSession(t.db, 's1');
    expect(rows.map((r) => [r.tool_call_id, r.agent_execution_id])).toEqual([
      ['c1', OLD],
      ['c1', NEW],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
  });

  it('AC-32: a late frame of the older execution leaves the newer row unchanged in every column', async () => {
    await seedSession(t.db);
    await writeBatch(
      t.db,
      [
        write({
          execution_id: OLD,
          turn_id: 'u1',
          tool_status: 'in_progress',
          observed_at: '2026-08-12T13:00:00Z',
          subagent_task: { model: 'old', is_async: true },
        }),
      ],
      clock('2026-08-12T13:00:01Z'),
    );
    await writeBatch(
      t.db,
      [
        write({
          execution_id: NEW,
          turn_id: 'u2',
          tool_status: 'in_progress',
          observed_at: '2026-08-12T14:00:00Z',
          subagent_task: { model: 'new', total_tokens: 10 },
        }),
      ],
      clock('2026-08-12T14:00:01Z'),
    );
    const newerBefore = (await readSession(t.db, 's1')).find((r) => r.agent_execution_id === NEW);
    await writeBatch(
      t.db,
      [
        write({
          execution_id: OLD,
          turn_id: 'u2',
          tool_status: 'completed',
          observed_at: '2026-08-12T14:30:00Z',
          subagent_task: {
            model: 'late',
            total_tokens: 999,
            duration_ms: 5,
            tool_use_count: 3,
            is_async: true,
            status: 'completed',
            agent_id: 'x',
          },
        }),
      ],
      clock('2026-08-12T14:30:01Z'),
    );
    const rows = await readSession(t.db, 's1');
    expect(rows.find((r) => r.agent_execution_id === NEW)).toEqual(newerBefore);
    expect(rows.find((r) => r.agent_execution_id === OLD)).toMatchObject({
      model: 'late',
      total_tokens: 999,
      tool_status: 'completed',
      turn_id: 'u1',
    });
  });

  it('AC-15: frames of one batch for different executions never touch each other', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [
      write({ execution_id: OLD, subagent_task: { model: 'a', is_async: true } }),
      write({ execution_id: NEW, subagent_task: { model: 'b' } }),
      write({ execution_id: OLD, tool_status: 'failed' }),
    ]);
    const rows = await readSession(t.db, 's1');
    expect(rows.find((r) => r.agent_execution_id === NEW)).toMatchObject({
      model: 'b',
      is_async: 0,
      tool_status: null,
      settled_at: null,
    });
    expect(rows.find((r) => r.agent_execution_id === OLD)).toMatchObject({
      model: 'a',
      is_async: 1,
      tool_status: 'failed',
    });
  });
});
