import { describe, expect, it } from 'vitest';
import { parseFrame } from '../../../lib/frame/parse.js';
import { frame } from '../../support/frames.js';

function reasonFor(body: string): string {
  const result = parseFrame(body);
  if (result.ok) throw new Error(`expected an invalid frame, got ${JSON.stringify(result.frame)}`);
  return result.error.reason;
}

const without = (field: string) => {
  const f = frame();
  delete f[field];
  return JSON.stringify(f);
};

describe('parseFrame: invalid frames are rejected with a reason that names the field (docs/frame.md)', () => {
  it.each([
    ['a body that is not JSON', '{"version": 1,', [/not JSON/, /one JSON object per message/]],
    ['an array', JSON.stringify([frame()]), [/an array/, /one JSON object per message/]],
    ['a JSON string', JSON.stringify('hello'), [/a string/, /one JSON object/]],
    ['null', 'null', [/null/, /one JSON object/]],
    ['version 2', JSON.stringify(frame({ version: 2 as never })), [/version must be 1/, /got a number \(2\)/]],
    [
      'version "1" as a string',
      JSON.stringify(frame({ version: '1' as never })),
      [/version must be 1/, /got a string/],
    ],
    ['no version', without('version'), [/version is required/]],
    [
      'an unparsable observed_at',
      JSON.stringify(frame({ observed_at: 'yesterday' })),
      [/observed_at "yesterday"/, /RFC 3339/],
    ],
    [
      'an observed_at without an offset',
      JSON.stringify(frame({ observed_at: '2026-08-12T13:24:58' })),
      [/observed_at/, /offset/],
    ],
    [
      'an observed_at that is a number',
      JSON.stringify(frame({ observed_at: 1754999098 as never })),
      [/observed_at must be/, /got a number/],
    ],
    ['no observed_at', without('observed_at'), [/observed_at is required/]],
    ['no subagent_task', without('subagent_task'), [/subagent_task is required/]],
    [
      'a subagent_task that is a string',
      JSON.stringify({ ...frame(), subagent_task: 'x' }),
      [/subagent_task must be an object/, /got a string/],
    ],
    [
      'a subagent_task that is an array',
      JSON.stringify({ ...frame(), subagent_task: [] }),
      [/subagent_task must be an object/, /got an array/],
    ],
    [
      'a subagent_task that is null',
      JSON.stringify({ ...frame(), subagent_task: null }),
      [/subagent_task must be an object/, /got null/],
    ],
    [
      'a numeric task_session_id',
      JSON.stringify(frame({ task_session_id: 42 as never })),
      [/task_session_id must be a string/, /got a number/],
    ],
    [
      'an object task_id',
      JSON.stringify(frame({ task_id: {} as never })),
      [/task_id must be a string/, /got an object/],
    ],
    ['a numeric turn_id', JSON.stringify(frame({ turn_id: 7 as never })), [/turn_id must be a string/]],
    [
      'a boolean execution_id',
      JSON.stringify(frame({ execution_id: true as never })),
      [/execution_id must be a string/],
    ],
  ] as const)('rejects %s', (_name, body, expected) => {
    const reason = reasonFor(body);
    for (const pattern of expected) expect(reason).toMatch(pattern);
  });

  it('names every offending field when several are wrong', () => {
    const reason = reasonFor(JSON.stringify(frame({ version: 3 as never, task_id: 5 as never, observed_at: 'x' })));
    expect(reason).toMatch(/version/);
    expect(reason).toMatch(/task_id/);
    expect(reason).toMatch(/observed_at/);
  });

  it('cuts a huge offending value short in the reason', () => {
    const reason = reasonFor(JSON.stringify(frame({ observed_at: 'x'.repeat(100_000) })));
    expect(reason.length).toBeLessThan(300);
  });

  it('carries the reason on the error message too', () => {
    const result = parseFrame('[]');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(Error);
      expect(result.error.message).toBe(`invalid frame: ${result.error.reason}`);
    }
  });
});

describe('parseFrame: valid frames', () => {
  it('accepts the minimal frame', () => {
    const body = JSON.stringify({ version: 1, observed_at: '2026-08-12T13:24:58Z', subagent_task: {} });
    expect(parseFrame(body).ok).toBe(true);
  });

  it.each([
    ['absent identity', {}],
    ['empty identity', { task_session_id: '', task_id: '', tool_call_id: '' }],
    ['R2-2: null identity', { task_session_id: null, task_id: null, tool_call_id: null }],
  ])('AC-2: does not reject a frame with %s (it is skipped later, not invalid)', (_name, identity) => {
    const body = JSON.stringify({ version: 1, observed_at: '2026-08-12T13:24:58Z', subagent_task: {}, ...identity });
    expect(parseFrame(body).ok).toBe(true);
  });

  it('ignores unknown fields at the top level and inside subagent_task', () => {
    const result = parseFrame(
      JSON.stringify({ ...frame(), extra: [1], subagent_task: { model: 'm', future_field: { a: 1 } } }),
    );
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.frame).not.toHaveProperty('extra');
      expect(result.frame.subagent_task).not.toHaveProperty('future_field');
      expect(result.frame.subagent_task.model).toBe('m');
    }
  });

  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['a string', '12'],
    ['beyond 2^53-1', 2 ** 53],
    ['an object', { n: 1 }],
    ['a boolean', true],
  ])('AC-9: keeps the frame valid when a metric is %s', (_name, value) => {
    const result = parseFrame(
      JSON.stringify(frame({ subagent_task: { total_tokens: value, duration_ms: value, tool_use_count: value } })),
    );
    expect(result.ok).toBe(true);
  });

  it.each([
    '2026-08-12T13:24:58Z',
    '2026-08-12T13:24:58.1+02:00',
    '2026-08-12t13:24:58.123456789-07:30',
    '2026-08-12 13:24:58.5z',
  ])('accepts observed_at %s', (observedAt) => {
    expect(parseFrame(JSON.stringify(frame({ observed_at: observedAt }))).ok).toBe(true);
  });
});
