import { describe, expect, it } from 'vitest';
import { dollarsOf, openCodeTokensOf, readOpenCodeSession } from '../../../../lib/producer/usage/opencode-session.js';
import { BAD } from '../../../../lib/producer/usage/records.js';

/* R6-3: OpenCode's records field by field: what is read, what is unreadable, what is not reported. */

const tokens = (input: number, output: number, reasoning = 0, read = 0, write = 0) => ({
  input,
  output,
  reasoning,
  cache: { read, write },
});
const assistant = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  sessionID: 'ses_c',
  role: 'assistant',
  time: { created: 1, completed: 2 },
  modelID: 'm-a',
  cost: 0.001,
  tokens: tokens(1, 1),
  finish: 'stop',
  ...extra,
});
const step = (messageID: string, extra: Record<string, unknown> = {}) => ({
  id: `p-${messageID}-${Math.random()}`,
  sessionID: 'ses_c',
  messageID,
  type: 'step-finish',
  cost: 0.0005,
  tokens: tokens(10, 10),
  ...extra,
});

describe('R6-3: openCodeTokensOf and dollarsOf', () => {
  it.each<[string, unknown, unknown]>([
    ['not an object', 7, undefined],
    [
      'every kind',
      tokens(1, 2, 3, 4, 5),
      { tokens_in: 1, tokens_out: 5, tokens_reasoning: 3, tokens_cached_read: 4, tokens_cached_write: 5 },
    ],
    ['no cache', { input: 1, output: 2, reasoning: 0 }, { tokens_in: 1, tokens_out: 2, tokens_reasoning: 0 }],
    ['cache null', { input: 1, output: 2, cache: null }, { tokens_in: 1, tokens_out: 2 }],
    ['cache not an object', { input: 1, output: 2, cache: 7 }, undefined],
    ['nothing reported', {}, {}],
    ['reasoning without output', { reasoning: 4 }, { tokens_out: 4, tokens_reasoning: 4 }],
    ['output without reasoning', { output: 4 }, { tokens_out: 4 }],
    ['only cache read', { cache: { read: 3 } }, { tokens_cached_read: 3 }],
    ['only cache write', { cache: { write: 3 } }, { tokens_cached_write: 3 }],
    ['output + reasoning beyond the safe integers', { output: Number.MAX_SAFE_INTEGER, reasoning: 1 }, undefined],
    ['a bad input', { input: -1 }, undefined],
    ['a bad output', { output: 1.5 }, undefined],
    ['a bad reasoning', { reasoning: '1' }, undefined],
    ['a bad cache read', { cache: { read: -2 } }, undefined],
    ['a bad cache write', { cache: { write: true } }, undefined],
  ])('R6-3: tokens: %s', (_, value, counts) => {
    expect(openCodeTokensOf(value)).toStrictEqual(counts);
  });

  it.each<[unknown, unknown]>([
    [undefined, undefined],
    [null, undefined],
    [0, 0],
    [0.25, 0.25],
    [-1, BAD],
    [Number.NaN, BAD],
    [Number.POSITIVE_INFINITY, BAD],
    ['1', BAD],
  ])('R6-3: dollars %s read as %s', (value, dollars) => {
    expect(dollarsOf(value)).toBe(dollars);
  });
});

describe('R6-3: readOpenCodeSession record by record', () => {
  it.each<[string, unknown[], number]>([
    ['bad JSON', ['{"info":'], 1],
    ['info that is not an object', [{ info: 5, parts: [] }], 1],
    ['parts that are not a list', [{ info: assistant('m1'), parts: 5 }], 1],
    ['a part that is not an object', [{ info: assistant('m1'), parts: [5] }], 1],
    ['a message without parts (its API record alone)', [{ info: assistant('m1') }], 0],
    ['a message without an id', [{ info: { ...assistant('m1'), id: undefined }, parts: [] }], 1],
    ['a role that is not a string', [{ info: { ...assistant('m1'), role: 5 }, parts: [] }], 1],
    ['a record that is neither a message nor a part', [{ foo: 1 }], 1],
    ['a part whose messageID is not a string', [{ ...step('m1'), messageID: 5 }], 1],
    ['a part without a type', [{ ...step('m1'), type: undefined }], 1],
    ['a part of another type', [{ ...step('m1'), type: 'text', tokens: 'x' }], 0],
    ['a step whose id is a number', [step('m1', { id: 5 })], 1],
    ['a step whose tokens are bad', [step('m1', { tokens: { input: -1 } })], 1],
    ['a step whose cost is bad', [step('m1', { cost: -1 })], 1],
    ['a created time that is bad', [assistant('m1', { time: { created: 'x' } })], 1],
    ['a completed time that is bad', [assistant('m1', { time: { created: 1, completed: -5 } })], 1],
    ['a finish that is not a string', [assistant('m1', { finish: 5 })], 1],
    ['a time that is not an object (no order known)', [assistant('m1', { time: 5 })], 0],
  ])('R6-3: %s: unreadable %s', async (_, records, unreadable) => {
    expect((await readOpenCodeSession(records)).unreadable_lines).toBe(unreadable);
  });

  it('R6-3: the key is the first sessionID named; one of the wrong type is none', async () => {
    const reading = await readOpenCodeSession([
      { id: 'u1', role: 'user', sessionID: 5 },
      { id: 'u2', role: 'user', sessionID: 'ses_a' },
      { id: 'u3', role: 'user', sessionID: 'ses_b' },
    ]);
    expect(reading.key).toBe('ses_a');
    expect((await readOpenCodeSession([{ ...step('m1'), sessionID: 'ses_p' }])).key).toBe('ses_p');
  });

  it('R6-3: messages are ordered by created time, then id: the models in the order used, the newest decides complete', async () => {
    const reading = await readOpenCodeSession([
      assistant('m1', { modelID: 'late', time: { created: 9 }, finish: undefined }),
      assistant('m2', { modelID: 'early', time: { created: 3, completed: 4 } }),
    ]);
    expect(reading.usage).toMatchObject({ model: 'early,late', complete: false });
    const tie = await readOpenCodeSession([
      assistant('m2', { modelID: 'second', time: { created: 5, completed: 6 } }),
      assistant('m1', { modelID: 'first', time: { created: 5 } }),
    ]);
    expect(tie.usage).toMatchObject({ model: 'first,second' });
    expect(tie.usage.complete).toBe(false); // partial: messages without parts
  });

  it('R6-3: the newest message not completed, or completed with no finish but stopping, decides complete', async () => {
    const open = await readOpenCodeSession([
      { info: assistant('m1', { time: { created: 1 }, finish: 'stop' }), parts: [step('m1')] },
    ]);
    expect(open.usage.complete).toBe(false);
    const done = await readOpenCodeSession([{ info: assistant('m1', { finish: undefined }), parts: [step('m1')] }]);
    expect(done.usage.complete).toBe(true);
  });

  it('R6-3: parts whose message never came: counted, their costs summed, no model, complete not reported', async () => {
    const reading = await readOpenCodeSession([step('m1', { cost: 0.0001 }), step('m1', { cost: 0.0002 })]);
    expect(reading.usage).toStrictEqual({
      tokens_in: 20,
      tokens_out: 20,
      tokens_reasoning: 0,
      tokens_cached_read: 0,
      tokens_cached_write: 0,
      requests: 2,
      cost_subcents: 3,
      cost_source: 'models_dev_list',
    });
  });

  it('R6-3: two steps without ids are two steps', async () => {
    const a = step('m1');
    const b = step('m1');
    delete (a as { id?: string }).id;
    delete (b as { id?: string }).id;
    expect((await readOpenCodeSession([a, b])).usage.requests).toBe(2);
  });

  it("R6-3: a message without its own cost takes its steps'; a step without a cost leaves the run's cost unknown", async () => {
    const fromSteps = await readOpenCodeSession([
      {
        info: assistant('m1', { cost: undefined }),
        parts: [step('m1', { cost: 0.0003 }), step('m1', { cost: 0.0004 })],
      },
    ]);
    expect(fromSteps.usage).toMatchObject({ cost_subcents: 7, cost_source: 'models_dev_list' });
    const unknown = await readOpenCodeSession([
      { info: assistant('m1'), parts: [step('m1')] },
      { info: assistant('m2', { cost: undefined }), parts: [step('m2', { cost: undefined })] },
    ]);
    expect(unknown.usage.cost_subcents).toBeUndefined();
    expect(unknown.usage.cost_source).toBeUndefined();
  });

  it('R6-3: an assistant message with no usage yet (just started) is no request and names no model', async () => {
    const reading = await readOpenCodeSession([
      { info: assistant('m1'), parts: [step('m1')] },
      assistant('m2', { tokens: null, modelID: 'other', time: { created: 0 } }),
    ]);
    expect(reading.usage).toMatchObject({ requests: 1, model: 'm-a' });
  });

  it.each<[string, Record<string, number>]>([
    ['input', tokens(5, 0)],
    ['output', tokens(0, 5)],
    ['cache read', tokens(0, 0, 0, 5)],
    ['cache write', tokens(0, 0, 0, 0, 5)],
  ] as never)('R6-3: cost 0 with only %s tokens is unpriced', async (_, t) => {
    const reading = await readOpenCodeSession([
      { info: assistant('m1', { cost: 0 }), parts: [step('m1', { cost: 0, tokens: t })] },
    ]);
    expect(reading.usage.cost_source).toBe('unpriced');
  });

  it('R6-3: cost 0 with no tokens at all is a measured $0', async () => {
    const reading = await readOpenCodeSession([
      { info: assistant('m1', { cost: 0 }), parts: [step('m1', { cost: 0, tokens: tokens(0, 0) })] },
    ]);
    expect(reading.usage).toMatchObject({ cost_subcents: 0, cost_source: 'models_dev_list' });
  });

  it('R6-3: NULL-not-zero: only user messages, or an empty session, report nothing (no $0)', async () => {
    expect((await readOpenCodeSession([{ id: 'u1', role: 'user', sessionID: 's' }])).usage).toStrictEqual({});
    expect((await readOpenCodeSession([])).usage).toStrictEqual({});
  });

  it("R6-3: a part that is no object is counted alone: the message's next parts are still read", async () => {
    const reading = await readOpenCodeSession([
      { info: assistant('m1', { tokens: tokens(1, 1) }), parts: [5, step('m1')] },
    ]);
    expect(reading.unreadable_lines).toBe(1);
    expect(reading.usage).toMatchObject({ tokens_in: 10, requests: 1 });
  });

  it('R6-3: a user message newer than the last assistant message does not decide complete', async () => {
    const reading = await readOpenCodeSession([
      { info: assistant('m1'), parts: [step('m1')] },
      { id: 'u9', sessionID: 'ses_c', role: 'user', time: { created: 99 } },
    ]);
    expect(reading.usage.complete).toBe(true);
  });

  it('R6-3: a message whose tokens are null or absent is readable (no usage yet)', async () => {
    const reading = await readOpenCodeSession([
      assistant('m1', { tokens: null }),
      assistant('m2', { tokens: undefined }),
    ]);
    expect(reading.unreadable_lines).toBe(0);
    expect(reading.usage).toStrictEqual({});
  });

  it('R6-3: a step whose cost is bad is left out whole: its tokens are not counted', async () => {
    const reading = await readOpenCodeSession([step('m1', { cost: -1 })]);
    expect(reading.unreadable_lines).toBe(1);
    expect(reading.usage).toStrictEqual({});
  });
});
