import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileLines } from '../../../../lib/producer/usage/file-lines.js';
import { readOpenCodeSession } from '../../../../lib/producer/usage/opencode-session.js';
import { count, fixture } from './agent-records.js';

const FIXTURE_USAGE = {
  tokens_in: 160,
  tokens_out: 110,
  tokens_reasoning: 20,
  tokens_cached_read: 2700,
  tokens_cached_write: 200,
  requests: 3,
  cost_subcents: 143,
  cost_source: 'models_dev_list',
  model: 'claude-sonnet-4-5,gpt-5',
  complete: true,
};

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
  modelID: 'gpt-5',
  providerID: 'openai',
  cost: 0.001,
  tokens: tokens(1, 1),
  finish: 'stop',
  ...extra,
});
const step = (id: string, messageID: string, t: ReturnType<typeof tokens>, cost = 0.0005) => ({
  id,
  sessionID: 'ses_c',
  messageID,
  type: 'step-finish',
  reason: 'stop',
  cost,
  tokens: t,
});

describe('R6-3: readOpenCodeSession, an OpenCode child session', () => {
  it("R6-3: the API's shape ({info, parts}): step-finish parts summed, not the message's tokens (a step overwrote them), two models", async () => {
    const api = JSON.parse(readFileSync(fixture('opencode-session.json'), 'utf8')) as unknown[];
    expect(await readOpenCodeSession(api)).toEqual({
      usage: FIXTURE_USAGE,
      unreadable_lines: 0,
      key: 'ses_7f1e2d3c4b5aChildSession',
    });
  });

  it("R6-3: the storage's shape (message and part records, parts before their message) reads the same", async () => {
    const reading = await readOpenCodeSession(fileLines(fixture('opencode-storage.jsonl')));
    expect(reading).toEqual({ usage: FIXTURE_USAGE, unreadable_lines: 0, key: 'ses_7f1e2d3c4b5aChildSession' });
  });

  it('R6-3: an array of messages on one line (an API answer saved as is) is spread', async () => {
    const api = readFileSync(fixture('opencode-session.json'), 'utf8').replace(/\n\s*/g, '');
    expect((await readOpenCodeSession([api])).usage).toEqual(FIXTURE_USAGE);
  });

  it("R6-3: a message's own tokens are its last step's: with its step parts the run counts every step", async () => {
    const reading = await readOpenCodeSession([
      {
        info: assistant('m1', { tokens: tokens(5, 5) }),
        parts: [step('p1', 'm1', tokens(100, 10)), step('p2', 'm1', tokens(5, 5))],
      },
    ]);
    expect(reading.usage).toMatchObject({ tokens_in: 105, tokens_out: 15, requests: 2, complete: true });
  });

  it('R6-3: without its step parts a message counts by its own tokens, a lower bound: the run is not complete', async () => {
    const reading = await readOpenCodeSession([assistant('m1', { tokens: tokens(5, 6, 1, 7, 8) })]);
    expect(reading.usage).toMatchObject({
      tokens_in: 5,
      tokens_out: 7,
      tokens_reasoning: 1,
      requests: 1,
      complete: false,
    });
  });

  it('R6-3: the same part given twice counts once', async () => {
    const p = step('p1', 'm1', tokens(10, 10));
    const reading = await readOpenCodeSession([assistant('m1'), p, p]);
    expect(reading.usage).toMatchObject({ tokens_in: 10, requests: 1 });
  });

  it('R6-3: cost 0 with tokens is unpriced (no price in its catalog), never a measured $0', async () => {
    const reading = await readOpenCodeSession([
      { info: assistant('m1', { cost: 0 }), parts: [step('p1', 'm1', tokens(10, 10), 0)] },
    ]);
    expect(reading.usage.cost_source).toBe('unpriced');
    expect(reading.usage.cost_subcents).toBeUndefined();
  });

  it('R6-3: complete only when the newest message completed and did not stop to call tools', async () => {
    const newestCalls = await readOpenCodeSession([
      { info: assistant('m1'), parts: [step('p1', 'm1', tokens(1, 1))] },
      { info: assistant('m2', { time: { created: 5 }, finish: undefined }), parts: [] },
    ]);
    expect(newestCalls.usage.complete).toBe(false);
    const toolCalls = await readOpenCodeSession([
      { info: assistant('m1', { finish: 'tool-calls' }), parts: [step('p1', 'm1', tokens(1, 1))] },
    ]);
    expect(toolCalls.usage.complete).toBe(false);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a negative cost', { cost: -1 }],
    ['a token count that is a string', { tokens: { ...tokens(1, 1), input: '3' } }],
    ['cache that is not an object', { tokens: { ...tokens(1, 1), cache: 7 } }],
    ['a model that is a number', { modelID: 5 }],
  ])('R6-3: a message with %s is unreadable and not reported', async (_, bad) => {
    const reading = await readOpenCodeSession([assistant('m1', bad), assistant('m2', { tokens: tokens(4, 4) })]);
    expect(reading.unreadable_lines).toBe(1);
    expect(reading.usage).toMatchObject({ tokens_in: 4, requests: 1 });
  });

  it('R6-3: NULL-not-zero: a session with only user messages reports nothing', async () => {
    const reading = await readOpenCodeSession([{ id: 'u1', sessionID: 'ses_c', role: 'user', time: { created: 1 } }]);
    expect(reading).toEqual({ usage: {}, unreadable_lines: 0, key: 'ses_c' });
  });

  it('R6-3: sum invariant: tokens are the sums over every step-finish part; tokens_out holds the reasoning', async () => {
    const stepTokens = fc.record({
      input: count,
      output: count,
      reasoning: count,
      cache: fc.record({ read: count, write: count }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(stepTokens, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        async (messages) => {
          const records = messages.map((steps, i) => ({
            info: assistant(`m${i}`, { tokens: steps.at(-1) }),
            parts: steps.map((t, j) => step(`p${i}-${j}`, `m${i}`, t)),
          }));
          const all = messages.flat();
          const sum = (f: (t: (typeof all)[number]) => number) => all.reduce((s, t) => s + f(t), 0);
          expect((await readOpenCodeSession(records)).usage).toMatchObject({
            tokens_in: sum((t) => t.input),
            tokens_out: sum((t) => t.output + t.reasoning),
            tokens_reasoning: sum((t) => t.reasoning),
            tokens_cached_read: sum((t) => t.cache.read),
            tokens_cached_write: sum((t) => t.cache.write),
            requests: all.length,
          });
        },
      ),
    );
  });
});
