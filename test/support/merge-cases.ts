import type { SubagentRow, SubagentWrite } from '../../lib/row.js';
import { formatRfc3339, parseRfc3339 } from '../../lib/time.js';
import { write } from './frames.js';

/**
 * docs/merge.md#merging-onto-an-existing-row as a table: writes of one key in arrival order, and what the row must hold afterwards.
 * test/lib/merge.test.ts proves it in memory, test/lib/store/upsert.test.ts on every database.
 */
export interface MergeCase {
  name: string;
  writes: SubagentWrite[];
  expected: Partial<SubagentRow>;
}

const T1 = '2026-08-12T13:24:58.000001Z';
const T2 = '2026-08-12T13:25:30.5Z';
const T3 = '2026-08-12T13:26:00Z';
const T0 = '2026-08-12T13:24:58Z'; // 1 µs before T1
const at = (text: string) => formatRfc3339(parseRfc3339(text)!);
const task = (fields: Record<string, unknown>, observed_at = T2) => write({ observed_at, subagent_task: fields });
const backfilled = (overrides: Partial<SubagentWrite> = {}): SubagentWrite => ({
  ...write({
    observed_at: T1,
    turn_id: 'turn-1',
    tool_status: 'completed',
    subagent_task: { model: 'm1', total_tokens: 100 },
  }),
  agent_execution_id: 'e1',
  source: 'backfill',
  ...overrides,
});

export const MERGE_CASES: MergeCase[] = [
  {
    name: 'AC-3: a duplicated frame leaves the row as one write did',
    writes: [task({ model: 'm1', total_tokens: 5 }), task({ model: 'm1', total_tokens: 5 })],
    expected: { model: 'm1', total_tokens: 5, observed_at: at(T2) },
  },
  {
    name: 'AC-4: a new non-NULL text replaces',
    writes: [task({ model: 'm1' }), task({ model: 'm2' })],
    expected: { model: 'm2' },
  },
  {
    name: 'AC-5: an absent text never blanks',
    writes: [task({ model: 'm1', agent_id: 'a1' }), task({})],
    expected: { model: 'm1', agent_id: 'a1' },
  },
  {
    name: 'AC-5: an empty text never blanks',
    writes: [task({ model: 'm1', description: 'd' }), task({ model: '', description: '' })],
    expected: { model: 'm1', description: 'd' },
  },
  {
    name: 'AC-5: metrics fill forward',
    writes: [task({ total_tokens: 100, duration_ms: 20, tool_use_count: 3 }), task({})],
    expected: { total_tokens: 100, duration_ms: 20, tool_use_count: 3 },
  },
  {
    name: 'AC-4: a new metric replaces',
    writes: [task({ total_tokens: 100 }), task({ total_tokens: 200 })],
    expected: { total_tokens: 200 },
  },
  {
    name: 'AC-5, AC-7: a later 0 never blanks a learned total_tokens/duration_ms',
    writes: [task({ total_tokens: 100, duration_ms: 20 }), task({ total_tokens: 0, duration_ms: 0 })],
    expected: { total_tokens: 100, duration_ms: 20 },
  },
  {
    name: 'AC-5, AC-8: a later negative never blanks a learned value',
    writes: [
      task({ total_tokens: 100, duration_ms: 20, tool_use_count: 3 }),
      task({ total_tokens: -1, duration_ms: -1, tool_use_count: -1 }),
    ],
    expected: { total_tokens: 100, duration_ms: 20, tool_use_count: 3 },
  },
  {
    name: 'AC-7a: a later reported tool_use_count 0 replaces (a real zero)',
    writes: [task({ tool_use_count: 3 }), task({ tool_use_count: 0 })],
    expected: { tool_use_count: 0 },
  },
  {
    name: 'AC-7a: a tool_use_count 0 survives a later frame without it',
    writes: [task({ tool_use_count: 0 }), task({})],
    expected: { tool_use_count: 0 },
  },
  {
    name: 'AC-7: async_launched then completed learns the metrics',
    writes: [
      task({ status: 'async_launched', is_async: true }),
      task({ status: 'completed', total_tokens: 91_234, duration_ms: 48_211, tool_use_count: 0 }),
    ],
    expected: { agent_status: 'completed', total_tokens: 91_234, duration_ms: 48_211, tool_use_count: 0, is_async: 1 },
  },
  {
    name: 'agent_status is replaced and never blanked',
    writes: [task({ status: 'async_launched' }), task({ status: 'completed' }), task({})],
    expected: { agent_status: 'completed' },
  },
  {
    name: 'AC-2a: turn_id keeps the stored turn against a later turn',
    writes: [write({ turn_id: 'turn-1' }), write({ turn_id: 'turn-2' })],
    expected: { turn_id: 'turn-1' },
  },
  {
    name: 'AC-2a: a stored NULL turn_id is filled by a later turn',
    writes: [write({}), write({ turn_id: '' }), write({ turn_id: 'turn-2' }), write({ turn_id: 'turn-3' })],
    expected: { turn_id: 'turn-2' },
  },
  {
    name: 'is_async is sticky: 1 then 0 stays 1',
    writes: [task({ is_async: true }), task({ is_async: false })],
    expected: { is_async: 1 },
  },
  {
    name: 'is_async: 0 then 1 becomes 1',
    writes: [task({ is_async: false }), task({ is_async: true })],
    expected: { is_async: 1 },
  },
  {
    name: 'is_async stays 0 when never reported',
    writes: [task({}), task({ is_async: false })],
    expected: { is_async: 0 },
  },
  {
    name: 'tool_status is replaced before settlement',
    writes: [write({ tool_status: 'pending' }), write({ tool_status: 'in_progress' }), write({})],
    expected: { tool_status: 'in_progress', settled_at: null },
  },
  {
    name: 'AC-11: the first terminal frame settles the row',
    writes: [
      write({ tool_status: 'in_progress', observed_at: T1 }),
      write({ tool_status: 'completed', observed_at: T2 }),
    ],
    expected: { tool_status: 'completed', settled_at: at(T2) },
  },
  {
    name: 'AC-11: settled_at is write-once',
    writes: [
      write({ tool_status: 'completed', observed_at: T2 }),
      write({ tool_status: 'failed', observed_at: T3 }),
      write({ tool_status: 'error', observed_at: T1 }),
    ],
    expected: { settled_at: at(T2) },
  },
  {
    name: 'AC-12: tool_status is frozen after settlement',
    writes: [
      write({ tool_status: 'completed' }),
      write({ tool_status: 'in_progress' }),
      write({ tool_status: 'failed' }),
    ],
    expected: { tool_status: 'completed' },
  },
  {
    name: 'AC-12: after settlement a late model and metrics still replace',
    writes: [
      write({ tool_status: 'completed', subagent_task: { model: 'm1', total_tokens: 10 } }),
      write({ tool_status: 'in_progress', subagent_task: { model: 'm2', total_tokens: 20 } }),
    ],
    expected: { tool_status: 'completed', model: 'm2', total_tokens: 20 },
  },
  {
    name: 'AC-10a: async_launched never settles, a later terminal tool status does',
    writes: [
      write({
        tool_status: 'in_progress',
        observed_at: T1,
        subagent_task: { status: 'async_launched', is_async: true },
      }),
      write({ observed_at: T2, subagent_task: { status: 'completed' } }),
      write({ tool_status: 'success', observed_at: T3 }),
    ],
    expected: { settled_at: at(T3), tool_status: 'success', agent_status: 'completed' },
  },
  {
    name: "AC-1: observed_at is the creating frame's, even when a later frame is older",
    writes: [write({ observed_at: T2 }), write({ observed_at: T1 }), write({ observed_at: T3 })],
    expected: { observed_at: at(T2) },
  },
  {
    name: 'AC-1: task_id and source never change',
    writes: [write({ task_id: 't1' }), write({ task_id: 't2' })],
    expected: { task_id: 't1', source: 'live' },
  },
  {
    name: 'AC-1a: a live frame on a backfilled row keeps source and observed_at',
    writes: [backfilled(), write({ observed_at: T3, subagent_task: { model: 'm2' } })],
    expected: { source: 'backfill', observed_at: at(T1), model: 'm2', total_tokens: 100, turn_id: 'turn-1' },
  },
  {
    name: 'AC-1a, AC-12: a backfilled settled row keeps its settlement and tool status',
    writes: [backfilled({ settled_at: parseRfc3339(T2)! }), write({ tool_status: 'in_progress', observed_at: T3 })],
    expected: { source: 'backfill', tool_status: 'completed', settled_at: at(T2) },
  },
  // R2-7 (docs/merge.md): a frame older than the row's newest applied observation only fills NULLs.
  {
    name: 'R2-7: a redriven older frame never turns completed back to running, nor the final model and tokens back',
    writes: [
      write({
        tool_status: 'in_progress',
        observed_at: T1,
        subagent_task: { status: 'running', model: 'old', total_tokens: 100 },
      }),
      write({
        tool_status: 'completed',
        observed_at: T3,
        subagent_task: { status: 'completed', model: 'final', total_tokens: 91_234 },
      }),
      write({
        tool_status: 'in_progress',
        observed_at: T1,
        subagent_task: { status: 'running', model: 'old', total_tokens: 100 },
      }),
    ],
    expected: {
      agent_status: 'completed',
      model: 'final',
      total_tokens: 91_234,
      tool_status: 'completed',
      settled_at: at(T3),
      observed_at: at(T1),
      last_observed_at: at(T3),
    },
  },
  {
    name: 'R2-7: a reordered older frame only fills NULLs',
    writes: [
      task({ model: 'm2', status: 'completed' }, T3),
      task({ model: 'm1', status: 'running', agent_id: 'a1', total_tokens: 5, tool_use_count: 0 }, T1),
    ],
    expected: {
      model: 'm2',
      agent_status: 'completed',
      agent_id: 'a1',
      total_tokens: 5,
      tool_use_count: 0,
      observed_at: at(T3),
      last_observed_at: at(T3),
    },
  },
  {
    name: 'R2-7: an older frame 1 µs before the newest observation only fills',
    writes: [task({ model: 'm2' }, T1), task({ model: 'm1', subagent_type: 'explore' }, T0)],
    expected: { model: 'm2', subagent_type: 'security-reviewer', last_observed_at: at(T1) },
  },
  {
    name: 'R2-7: a frame with the same observed_at as the newest observation is in order (replaces)',
    writes: [task({ model: 'm1' }, T2), task({ model: 'm2' }, T3), task({ model: 'm3' }, T3)],
    expected: { model: 'm3', last_observed_at: at(T3) },
  },
  {
    name: 'R2-7: an older frame fills a NULL turn_id and parent_tool_call_id',
    writes: [write({ observed_at: T3 }), write({ observed_at: T1, turn_id: 'turn-1', parent_tool_call_id: 'p1' })],
    expected: { turn_id: 'turn-1', parent_tool_call_id: 'p1', last_observed_at: at(T3) },
  },
  {
    name: 'R2-7: an older frame never unsettles nor replaces a settled tool status',
    writes: [
      write({ tool_status: 'completed', observed_at: T3 }),
      write({ tool_status: 'in_progress', observed_at: T1 }),
      write({ tool_status: 'failed', observed_at: T2 }),
    ],
    expected: { tool_status: 'completed', settled_at: at(T3), last_observed_at: at(T3) },
  },
  {
    name: 'R2-7: an older non-terminal tool status only fills',
    writes: [
      write({ tool_status: 'in_progress', observed_at: T3 }),
      write({ tool_status: 'pending', observed_at: T1 }),
    ],
    expected: { tool_status: 'in_progress', settled_at: null },
  },
  {
    name: 'R2-7: an older terminal frame settles an unsettled row and brings its status (a settled row holds the status that settled it)',
    writes: [
      write({ tool_status: 'in_progress', observed_at: T3 }),
      write({ tool_status: 'completed', observed_at: T1 }),
    ],
    expected: { tool_status: 'completed', settled_at: at(T1), last_observed_at: at(T3) },
  },
  {
    name: 'R2-7: is_async from an older frame still sticks (0 is "not reported")',
    writes: [task({ is_async: false }, T3), task({ is_async: true }, T1)],
    expected: { is_async: 1 },
  },
  {
    name: 'R2-7: last_observed_at is the newest applied observation, never moved back',
    writes: [write({ observed_at: T2 }), write({ observed_at: T3 }), write({ observed_at: T1 })],
    expected: { observed_at: at(T2), last_observed_at: at(T3) },
  },
  {
    name: 'R2-7: a live frame older than a backfilled row only fills it',
    writes: [
      backfilled({ turn_id: null }),
      write({ observed_at: T0, turn_id: 'turn-0', subagent_task: { model: 'm0', total_tokens: 7, agent_id: 'a0' } }),
    ],
    expected: {
      source: 'backfill',
      model: 'm1',
      total_tokens: 100,
      agent_id: 'a0',
      turn_id: 'turn-0',
      last_observed_at: at(T1),
    },
  },
  {
    name: 'parent_tool_call_id is learned and never blanked',
    writes: [write({ parent_tool_call_id: 'p1' }), write({ parent_tool_call_id: '' })],
    expected: { parent_tool_call_id: 'p1' },
  },
];
