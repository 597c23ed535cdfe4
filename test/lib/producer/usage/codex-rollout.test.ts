import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCodexRollout } from '../../../../lib/producer/usage/codex-rollout.js';
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
