import { describe, expect, it } from 'vitest';
import { parseFrame } from '../../lib/frame/parse.js';
import { type Normalized, normalizeFrame, normalizeMetric, textOrNull } from '../../lib/normalize.js';
import { type SubagentWrite, UNKNOWN_EXECUTION } from '../../lib/row.js';
import { TERMINAL_TOOL_STATUSES } from '../../lib/terminal.js';
import { parseRfc3339 } from '../../lib/time.js';
import { type FrameInput, frame } from '../support/frames.js';

function normalize(overrides: FrameInput): Normalized {
  const parsed = parseFrame(JSON.stringify(frame(overrides)));
  if (!parsed.ok) throw parsed.error;
  return normalizeFrame(parsed.frame);
}

function written(overrides: FrameInput): Extract<Normalized, { kind: 'write' }> {
  const result = normalize(overrides);
  if (result.kind !== 'write') throw new Error('frame was skipped');
  return result;
}

const row = (overrides: FrameInput): SubagentWrite => written(overrides).row;
const task = (fields: Record<string, unknown>): FrameInput => ({ subagent_task: fields });

describe('AC-2: identity gate', () => {
  it.each([
    ['task_session_id', ''],
    ['task_id', ''],
    ['tool_call_id', ''],
    ['task_session_id', undefined],
    ['task_id', undefined],
    ['tool_call_id', undefined],
  ])('skips a frame whose %s is %j', (field, value) => {
    expect(normalize({ [field]: value })).toEqual({ kind: 'skip', reason: 'no_identity' });
  });

  it('does not skip on an empty execution id (the gate is exactly three fields)', () => {
    expect(normalize({ execution_id: '' }).kind).toBe('write');
  });

  it('does not skip on an empty turn id', () => {
    expect(normalize({ turn_id: '' }).kind).toBe('write');
  });
});

describe('AC-30, AC-31: execution', () => {
  it('AC-30: keeps the execution id verbatim', () => {
    const result = written({ execution_id: '0b6f6f0e-8a4e-4c2b-9d7e-2f7c1c9a1d55' });
    expect(result.row.agent_execution_id).toBe('0b6f6f0e-8a4e-4c2b-9d7e-2f7c1c9a1d55');
    expect(result.unknownExecution).toBe(false);
  });

  it.each([
    ['empty', ''],
    ['absent', undefined],
  ])('AC-31: an %s execution id is the sentinel and counts unknown_execution', (_name, executionId) => {
    const result = written({ execution_id: executionId });
    expect(result.row.agent_execution_id).toBe(UNKNOWN_EXECUTION);
    expect(UNKNOWN_EXECUTION).toBe('unknown');
    expect(result.unknownExecution).toBe(true);
  });
});

describe('empty text is NULL (docs/merge.md#recording-one-frame)', () => {
  it.each(['turn_id', 'parent_tool_call_id', 'tool_status'] as const)('top-level %s "" → NULL', (field) => {
    expect(row({ [field]: '' })[field]).toBeNull();
  });

  it.each([
    ['subagent_type', 'subagent_type'],
    ['description', 'description'],
    ['agent_id', 'agent_id'],
    ['child_session_id', 'child_session_id'],
    ['model', 'model'],
    ['status', 'agent_status'],
  ] as const)('subagent_task.%s "" → %s NULL', (field, column) => {
    expect(row(task({ [field]: '' }))[column]).toBeNull();
  });

  it.each([5, true, {}, null])('a text field of another JSON type (%j) → NULL', (value) => {
    expect(row(task({ model: value })).model).toBeNull();
  });

  it('textOrNull keeps whitespace-only text as written', () => {
    expect(textOrNull(' ')).toBe(' ');
  });

  it('copies reported text verbatim', () => {
    const r = row({
      turn_id: 'turn-1',
      parent_tool_call_id: 'p1',
      tool_status: 'in_progress',
      subagent_task: {
        subagent_type: 'explore',
        description: 'Review auth',
        agent_id: 'a1',
        child_session_id: 'ch',
        model: 'claude-opus-5[1m]',
        status: 'Running',
      },
    });
    expect(r).toMatchObject({
      turn_id: 'turn-1',
      parent_tool_call_id: 'p1',
      tool_status: 'in_progress',
      subagent_type: 'explore',
      description: 'Review auth',
      agent_id: 'a1',
      child_session_id: 'ch',
      model: 'claude-opus-5[1m]',
      agent_status: 'Running',
    });
  });

  it('never carries prompt, result_text or output_file', () => {
    const r = row(task({ prompt: 'secret prompt', result_text: 'secret result', output_file: '/tmp/out' }));
    expect(Object.values(r)).not.toContain('secret prompt');
    expect(Object.values(r)).not.toContain('secret result');
    expect(Object.values(r)).not.toContain('/tmp/out');
  });
});

describe('metrics (AC-7, AC-7a, AC-8, AC-9)', () => {
  // [reported value, total_tokens/duration_ms stored, tool_use_count stored, anomalous]
  const METRIC_RULES: [string, unknown, number | null, number | null, boolean][] = [
    ['absent', undefined, null, null, false],
    ['null', null, null, null, false],
    ['0', 0, null, 0, false],
    ['1', 1, 1, 1, false],
    ['275717', 275_717, 275_717, 275_717, false],
    ["2^31-1, the largest the host's 32-bit column holds (R2-10)", 2_147_483_647, 2_147_483_647, 2_147_483_647, false],
    ["R2-10: 2^31, one past the host's column", 2 ** 31, null, null, true],
    ['R2-10: 3,000,000,000', 3_000_000_000, null, null, true],
    ['R2-10: 2^53-1', Number.MAX_SAFE_INTEGER, null, null, true],
    ['negative', -5, null, null, true],
    ['fractional', 2.5, null, null, true],
    ['a numeric string', '12', null, null, true],
    ['beyond 2^53-1', 2 ** 53, null, null, true],
    ['a boolean', true, null, null, true],
    ['an object', { value: 1 }, null, null, true],
  ];

  it.each(METRIC_RULES)(
    '%s: total_tokens/duration_ms → %j, tool_use_count → %j, anomalous %s',
    (_name, value, zeroIsNull, zeroIsZero, anomalous) => {
      expect(normalizeMetric(value, true)).toEqual({ value: zeroIsNull, anomalous });
      expect(normalizeMetric(value, false)).toEqual({ value: zeroIsZero, anomalous });
    },
  );

  it('AC-7: an async_launched frame stores NULL, never 0, in all three metrics', () => {
    const r = row(task({ status: 'async_launched', is_async: true, total_tokens: 0, duration_ms: 0 }));
    expect([r.total_tokens, r.duration_ms, r.tool_use_count]).toEqual([null, null, null]);
  });

  it('AC-7: an async_launched frame that reports no metrics stores NULL in all three', () => {
    const r = row(task({ status: 'async_launched', is_async: true }));
    expect([r.total_tokens, r.duration_ms, r.tool_use_count]).toEqual([null, null, null]);
  });

  it('AC-7a: a reported tool_use_count 0 stays 0', () => {
    expect(row(task({ tool_use_count: 0 })).tool_use_count).toBe(0);
  });

  it('AC-7: total_tokens and duration_ms reported as 0 are NULL', () => {
    const r = row(task({ total_tokens: 0, duration_ms: 0 }));
    expect([r.total_tokens, r.duration_ms]).toEqual([null, null]);
  });

  it('maps each metric to its own column', () => {
    const r = row(task({ total_tokens: 91_234, duration_ms: 48_211, tool_use_count: 7 }));
    expect([r.total_tokens, r.duration_ms, r.tool_use_count]).toEqual([91_234, 48_211, 7]);
  });

  it('AC-8, AC-9: a negative or malformed metric is NULL, flags the frame once, and leaves the other fields alone', () => {
    const result = written(task({ total_tokens: -1, duration_ms: 'soon', tool_use_count: 3, model: 'm' }));
    expect(result.anomalous).toBe(true);
    expect(result.row).toMatchObject({ total_tokens: null, duration_ms: null, tool_use_count: 3, model: 'm' });
  });

  it.each(['total_tokens', 'duration_ms', 'tool_use_count'])(
    'AC-9: %s malformed alone flags the frame (each metric on its own, the others well-formed)',
    (metric) => {
      const metrics = { total_tokens: 1, duration_ms: 1, tool_use_count: 1, [metric]: -1 };
      expect(written(task(metrics)).anomalous).toBe(true);
    },
  );

  it('AC-8, AC-9: a frame with well-formed metrics is not anomalous', () => {
    expect(written(task({ total_tokens: 1, duration_ms: 0, tool_use_count: 0 })).anomalous).toBe(false);
  });
});

describe('terminality (AC-10a, AC-11)', () => {
  const observedAt = '2026-08-12T15:24:58.123456+02:00';

  it.each(TERMINAL_TOOL_STATUSES)('AC-11: tool_status %s settles at observed_at', (status) => {
    const r = row({ tool_status: status, observed_at: observedAt });
    expect(r.settled_at).toBe(parseRfc3339(observedAt));
    expect(r.tool_status).toBe(status);
  });

  it.each(['in_progress', 'pending', '', undefined])('tool_status %j does not settle', (status) => {
    expect(row({ tool_status: status }).settled_at).toBeNull();
  });

  it.each(['completed', 'failed', 'async_launched'])('AC-10a: agent_status %s alone never settles', (status) => {
    expect(row(task({ status })).settled_at).toBeNull();
  });

  it('AC-10a: async_launched with a non-terminal tool status never settles by itself', () => {
    expect(
      row({ tool_status: 'in_progress', subagent_task: { status: 'async_launched', is_async: true } }).settled_at,
    ).toBeNull();
  });
});

describe('the rest of the row (docs/merge.md#recording-one-frame)', () => {
  it('is a live row observed at the frame instant converted to UTC', () => {
    const r = row({ observed_at: '2026-08-12T15:24:58.1234567+02:00' });
    expect(r.source).toBe('live');
    // R3-2: the sub-microsecond digit rounds up, never down
    expect(r.observed_at).toBe(parseRfc3339('2026-08-12T13:24:58.123457Z'));
  });

  it.each([
    [true, 1],
    [false, 0],
    [undefined, 0],
    ['true', 0],
    [1, 0],
  ])('is_async %j → %s', (value, expected) => {
    expect(row(task({ is_async: value })).is_async).toBe(expected);
  });

  it('is pure: the same frame gives the same write', () => {
    expect(row(task({ total_tokens: 5 }))).toEqual(row(task({ total_tokens: 5 })));
  });
});
