import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codexTokensOf, readCodexRollout } from '../../../../lib/producer/usage/codex-rollout.js';
import { fileLines } from '../../../../lib/producer/usage/file-lines.js';
import { count, fixture } from './agent-records.js';

const THREAD = '0199a7c2-5e3f-7d20-b1a4-6c8e9f0a1b2c';

const total = (input: number, cached: number, output: number, reasoning: number) => ({
  input_tokens: input,
  cached_input_tokens: cached,
  output_tokens: output,
  reasoning_output_tokens: reasoning,
  total_tokens: input + output,
});
const tokenCount = (t: unknown) => ({
  timestamp: '2026-11-30T10:00:00.000Z',
  type: 'event_msg',
  payload: { type: 'token_count', info: { total_token_usage: t, last_token_usage: t }, rate_limits: null },
});
const event = (type: string) => ({ timestamp: '2026-11-30T10:00:00.000Z', type: 'event_msg', payload: { type } });

describe('R6-3: readCodexRollout, one Codex thread', () => {
  it('R6-3: the fixture: the last cumulative usage, never summed; cached input out of tokens_in; a repeated count no request', async () => {
    const reading = await readCodexRollout(fileLines(fixture(`rollout-2026-11-30T10-00-00-${THREAD}.jsonl`)));
    expect(reading).toEqual({
      key: THREAD,
      unreadable_lines: 0,
      usage: {
        tokens_in: 1300,
        tokens_cached_read: 1200,
        tokens_out: 500,
        tokens_reasoning: 150,
        requests: 2,
        model: 'gpt-5-codex',
        complete: true,
      },
    });
  });

  it('R6-3: input_tokens include the cached input: tokens_in + tokens_cached_read is input_tokens, never more', async () => {
    const reading = await readCodexRollout([tokenCount(total(1000, 400, 10, 0))]);
    expect(reading.usage).toMatchObject({ tokens_in: 600, tokens_cached_read: 400 });
  });

  it('R6-3: cached input above input is a wrong shape: unreadable, not reported', async () => {
    const reading = await readCodexRollout([tokenCount(total(10, 20, 1, 0))]);
    expect(reading).toEqual({ usage: {}, unreadable_lines: 1, key: null });
  });

  it('R6-3: a turn that has not ended is not complete; a later count after task_complete reopens it', async () => {
    expect((await readCodexRollout([tokenCount(total(1, 0, 1, 0))])).usage.complete).toBe(false);
    const reopened = await readCodexRollout([
      tokenCount(total(1, 0, 1, 0)),
      event('task_complete'),
      tokenCount(total(5, 0, 5, 0)),
    ]);
    expect(reopened.usage.complete).toBe(false);
  });

  it('R6-3: NULL-not-zero: a rollout with no usage (only rate limits) reports nothing', async () => {
    const reading = await readCodexRollout([
      { type: 'session_meta', payload: { id: 't1' } },
      { type: 'event_msg', payload: { type: 'token_count', info: null } },
    ]);
    expect(reading).toEqual({ usage: {}, unreadable_lines: 0, key: 't1' });
  });

  it('R6-3: a line that is not {type, payload} is unreadable', async () => {
    const reading = await readCodexRollout([
      '{"record_type":"state"}',
      '{"type":"event_msg"}',
      tokenCount(total(2, 1, 3, 1)),
    ]);
    expect(reading.unreadable_lines).toBe(2);
    expect(reading.usage).toMatchObject({ tokens_in: 1, tokens_out: 3 });
  });

  it('R6-3: sum invariant: whatever came before, the run is the last count', async () => {
    const usage = fc.tuple(count, count, count, count).map(([i, c, o, r]) => total(i + c, c, o + r, r));
    await fc.assert(
      fc.asyncProperty(fc.array(usage, { minLength: 1, maxLength: 10 }), async (counts) => {
        const last = counts.at(-1)!;
        expect((await readCodexRollout(counts.map(tokenCount))).usage).toMatchObject({
          tokens_in: last.input_tokens - last.cached_input_tokens,
          tokens_cached_read: last.cached_input_tokens,
          tokens_out: last.output_tokens,
          tokens_reasoning: last.reasoning_output_tokens,
        });
      }),
    );
  });
});

describe('R6-3: Codex records field by field', () => {
  it.each<[string, unknown, unknown]>([
    ['not an object', 'x', undefined],
    ['every field', total(10, 4, 7, 2), { tokens_in: 6, tokens_cached_read: 4, tokens_out: 7, tokens_reasoning: 2 }],
    ['no cached input: all input is fresh', { input_tokens: 5 }, { tokens_in: 5 }],
    [
      'cached input equal to input',
      { input_tokens: 5, cached_input_tokens: 5 },
      { tokens_in: 0, tokens_cached_read: 5 },
    ],
    ['only the cached input', { cached_input_tokens: 5 }, { tokens_cached_read: 5 }],
    ['only output', { output_tokens: 3 }, { tokens_out: 3 }],
    ['only reasoning', { reasoning_output_tokens: 3 }, { tokens_reasoning: 3 }],
    ['nothing', {}, {}],
    ['a bad input', { input_tokens: -1 }, undefined],
    ['a bad cached input', { input_tokens: 1, cached_input_tokens: 0.5 }, undefined],
    ['a bad output', { output_tokens: '3' }, undefined],
    ['a bad reasoning', { reasoning_output_tokens: -3 }, undefined],
  ])('R6-3: codexTokensOf: %s', (_, value, counts) => {
    expect(codexTokensOf(value)).toStrictEqual(counts);
  });

  const meta = (id: unknown) => ({ type: 'session_meta', payload: { id } });
  const context = (model: unknown) => ({ type: 'turn_context', payload: { model } });
  it.each<[string, unknown[], number]>([
    ['a record whose type is not a string', [{ type: 5, payload: {} }], 1],
    ['a record without a payload', [{ type: 'event_msg' }], 1],
    ['a session id of the wrong type', [meta(5)], 1],
    ['a model of the wrong type', [context(5)], 1],
    ['a token_count whose info holds no usage', [{ type: 'event_msg', payload: { type: 'token_count', info: {} } }], 1],
    ['a record of another type', [{ type: 'response_item', payload: { type: 'message' } }], 0],
    ['an event of another type', [{ type: 'event_msg', payload: { type: 'agent_message', info: 5 } }], 0],
  ])('R6-3: %s: unreadable %s', async (_, records, unreadable) => {
    expect((await readCodexRollout(records)).unreadable_lines).toBe(unreadable);
  });

  it('R6-3: the key is the first session id; the models in the order first used; no model named, no model field', async () => {
    const reading = await readCodexRollout([
      meta(undefined),
      meta('t1'),
      meta('t2'),
      context('gpt-5'),
      context('gpt-5-codex'),
      context('gpt-5'),
      tokenCount(total(1, 0, 1, 0)),
    ]);
    expect(reading).toMatchObject({ key: 't1', usage: { model: 'gpt-5,gpt-5-codex' } });
    expect((await readCodexRollout([tokenCount(total(1, 0, 1, 0))])).usage).toStrictEqual({
      tokens_in: 1,
      tokens_cached_read: 0,
      tokens_out: 1,
      tokens_reasoning: 0,
      requests: 1,
      complete: false,
    });
  });

  it('R6-3: a count that changed in any one field is a request; the same count again is none', async () => {
    const reading = await readCodexRollout([
      tokenCount(total(10, 0, 1, 0)),
      tokenCount(total(10, 0, 1, 0)),
      tokenCount(total(10, 0, 1, 1)),
      tokenCount(total(10, 2, 1, 1)),
    ]);
    expect(reading.usage.requests).toBe(3);
  });

  it.each(['task_complete', 'turn_aborted'])('R6-3: %s after the last count completes the run', async (end) => {
    expect((await readCodexRollout([tokenCount(total(1, 0, 1, 0)), event(end)])).usage.complete).toBe(true);
  });

  it('R6-3: an event that is no turn end leaves the run open', async () => {
    expect((await readCodexRollout([tokenCount(total(1, 0, 1, 0)), event('agent_message')])).usage.complete).toBe(
      false,
    );
  });
});
