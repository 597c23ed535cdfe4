import { describe, expect, it } from 'vitest';
import { ClaudeRequestFold, claudeRequestOf, claudeUsageOf } from '../../../../lib/producer/usage/claude-requests.js';

const request = (id: string, counts: Record<string, number>, stopReason?: string, model?: string) => ({
  id,
  model,
  stopReason,
  counts,
});

describe("R6-3: Claude's requests, as both Claude readers read them", () => {
  it.each<[string, unknown, unknown]>([
    ['not an object', 'usage', undefined],
    ['null', null, undefined],
    [
      'every field',
      { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 },
      { tokens_in: 1, tokens_out: 2, tokens_cached_read: 3, tokens_cached_write: 4 },
    ],
    ['a field null or absent: not reported', { input_tokens: 1, output_tokens: null }, { tokens_in: 1 }],
    ['a field of the wrong type', { input_tokens: 1, output_tokens: '2' }, undefined],
    ['extra fields ignored', { input_tokens: 0, service_tier: 'standard', server_tool_use: {} }, { tokens_in: 0 }],
  ])('R6-3: claudeUsageOf: %s', (_, usage, counts) => {
    expect(claudeUsageOf(usage)).toStrictEqual(counts);
  });

  const ok = { id: 'm1', model: 'claude-sonnet-4-5', stop_reason: 'end_turn', usage: { input_tokens: 1 } };
  it.each<[string, unknown, unknown]>([
    ['a whole request', ok, { id: 'm1', model: 'claude-sonnet-4-5', stopReason: 'end_turn', counts: { tokens_in: 1 } }],
    [
      'no model or stop reason: not reported',
      { id: 'm1', usage: {} },
      { id: 'm1', model: undefined, stopReason: undefined, counts: {} },
    ],
    ['no message', undefined, undefined],
    ['no id', { ...ok, id: undefined }, undefined],
    ["an id ''", { ...ok, id: '' }, undefined],
    ['an id that is a number', { ...ok, id: 7 }, undefined],
    ['a model that is a number', { ...ok, model: 7 }, undefined],
    ['a stop reason that is a number', { ...ok, stop_reason: 7 }, undefined],
    ['no usage', { ...ok, usage: undefined }, undefined],
    ["Claude Code's own <synthetic> message", { ...ok, model: '<synthetic>' }, 'synthetic'],
  ])('R6-3: claudeRequestOf: %s', (_, message, expected) => {
    expect(claudeRequestOf({ type: 'assistant', message })).toStrictEqual(expected);
  });

  it.each(['end_turn', 'stop_sequence', 'max_tokens', 'refusal'])(
    'R6-3: a run whose newest request stopped with %s is complete',
    (stop) => {
      const fold = new ClaudeRequestFold();
      fold.add(request('m1', { tokens_in: 1 }, 'tool_use'));
      fold.add(request('m2', { tokens_in: 1 }, stop));
      expect(fold.usage().complete).toBe(true);
    },
  );

  it('R6-3: a later line of the same message without a stop reason keeps the one an earlier line said', () => {
    const fold = new ClaudeRequestFold();
    fold.add(request('m1', { tokens_in: 1 }, 'end_turn'));
    fold.add(request('m1', { tokens_in: 1 }));
    expect(fold.usage().complete).toBe(true);
  });

  it('R6-3: a kind only a later line of a message reports is taken from it', () => {
    const fold = new ClaudeRequestFold();
    fold.add(request('m1', { tokens_in: 1 }));
    fold.add(request('m1', { tokens_in: 1, tokens_out: 9 }));
    expect(fold.usage()).toStrictEqual({ tokens_in: 1, tokens_out: 9, requests: 1 });
  });

  it('R6-3: NULL-not-zero: no request, no figure; no model named, no model field', () => {
    expect(new ClaudeRequestFold().usage()).toStrictEqual({});
    const fold = new ClaudeRequestFold();
    fold.add(request('m1', { tokens_in: 2 }));
    expect(fold.usage()).toStrictEqual({ tokens_in: 2, requests: 1 });
  });

  it('R6-3: sameAsLast compares the newest request input side (fresh input, cache read, cache write)', () => {
    const fold = new ClaudeRequestFold();
    expect(fold.sameAsLast({ tokens_in: 1 })).toBe(false);
    fold.add(request('m1', { tokens_in: 1, tokens_cached_read: 2, tokens_cached_write: 3, tokens_out: 4 }));
    expect(fold.sameAsLast({ tokens_in: 1, tokens_cached_read: 2, tokens_cached_write: 3, tokens_out: 99 })).toBe(true);
    for (const other of [
      { tokens_in: 9, tokens_cached_read: 2, tokens_cached_write: 3 },
      { tokens_in: 1, tokens_cached_read: 9, tokens_cached_write: 3 },
      { tokens_in: 1, tokens_cached_read: 2, tokens_cached_write: 9 },
    ])
      expect(fold.sameAsLast(other)).toBe(false);
  });
});
