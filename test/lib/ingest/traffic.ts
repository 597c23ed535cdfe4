import type { Queryable } from '../../../lib/db/database.js';
import { parseFrame } from '../../../lib/frame/parse.js';
import { normalizeFrame } from '../../../lib/normalize.js';
import type { SubagentRow } from '../../../lib/row.js';
import { readAll } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { frame } from '../../support/frames.js';

/**
 * A session's frames whose result depends on their order (docs/merge.md#merging-onto-an-existing-row): turn_id is filled once, the
 * creating frame's observed_at stays, tool_status freezes at settlement, the last model wins.
 */
export function sessionFrames(session: string): Record<string, unknown>[] {
  const at = (i: number) => `2026-08-12T13:24:${String(10 + i).padStart(2, '0')}.000001+02:00`;
  const f = (i: number, overrides: Parameters<typeof frame>[0]) =>
    frame({ task_session_id: session, task_id: `task-${session}`, observed_at: at(i), ...overrides });
  return [
    f(0, { tool_call_id: 'c1', tool_status: 'in_progress', subagent_task: { status: 'running', prompt: 'do it' } }),
    f(1, {
      tool_call_id: 'c2',
      turn_id: 'u1',
      tool_status: 'in_progress',
      subagent_task: { status: 'async_launched', is_async: true },
    }),
    f(2, { tool_call_id: 'c1', turn_id: 'u1', subagent_task: { model: 'm1' } }),
    f(3, {
      tool_call_id: 'c1',
      turn_id: 'u2',
      tool_status: 'completed',
      subagent_task: { status: 'completed', total_tokens: 100, tool_use_count: 0, result_text: 'done' },
    }),
    f(4, { tool_call_id: 'c1', tool_status: 'in_progress', subagent_task: { model: 'm2' } }),
    f(5, { tool_call_id: 'c3', execution_id: '', subagent_task: { duration_ms: 5 } }),
    f(6, { tool_call_id: 'c2', tool_status: 'completed', subagent_task: { duration_ms: 10 } }),
  ];
}

/** The fault-free reference: every valid frame upserted on its own, in order. */
export async function applyOneAtATime(db: Queryable, frames: readonly unknown[]): Promise<void> {
  for (const body of frames) {
    const parsed = parseFrame(typeof body === 'string' ? body : JSON.stringify(body));
    if (!parsed.ok) continue;
    const normalized = normalizeFrame(parsed.frame);
    if (normalized.kind === 'write') await writeBatch(db, [normalized.row]);
  }
}

/** The table without what legitimately differs between runs (generated ids, the writer's clock). */
export async function tableContent(db: Queryable): Promise<Omit<SubagentRow, 'id' | 'updated_at'>[]> {
  return (await readAll(db)).map(({ id: _id, updated_at: _updated, ...rest }) => rest);
}

/** What a fault-free run of `frames` leaves, computed on the same database (the table is emptied first). */
export async function faultFreeTable(
  db: Queryable,
  frames: readonly unknown[],
): Promise<Omit<SubagentRow, 'id' | 'updated_at'>[]> {
  await db.query('DELETE FROM task_session_subagents');
  await applyOneAtATime(db, frames);
  return tableContent(db);
}
