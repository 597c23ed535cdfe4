import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readClaudeTranscript } from '../../../../lib/producer/usage/claude-transcript.js';
import { fileLines } from '../../../../lib/producer/usage/file-lines.js';
import { type AnthropicUsage, claudeLine, claudeRequests, fixture } from './agent-records.js';

const usage = (input: number, output: number, write = 0, read = 0): AnthropicUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
});

describe('R6-3: readClaudeTranscript, a Claude Code subagent transcript', () => {
  it('R6-3: the fixture: a message written in three blocks counts once, two models, a truncated last line counted', async () => {
    const reading = await readClaudeTranscript(fileLines(fixture('agent-a1b2c3d4.jsonl')));
    expect(reading).toEqual({
      key: 'a1b2c3d4',
      unreadable_lines: 1,
      usage: {
        tokens_in: 15,
        tokens_out: 250,
        tokens_cached_write: 3100,
        tokens_cached_read: 3000,
        requests: 2,
        model: 'claude-sonnet-4-5,claude-haiku-4-5',
        complete: true,
      },
    });
  });

  it('R6-3: a message written once per content block (same message.id, same usage) is one request, never three', async () => {
    const u = usage(10, 20, 30, 40);
    const reading = await readClaudeTranscript([claudeLine('m1', u), claudeLine('m1', u), claudeLine('m1', u)]);
    expect(reading.usage).toMatchObject({
      tokens_in: 10,
      tokens_out: 20,
      tokens_cached_write: 30,
      tokens_cached_read: 40,
      requests: 1,
    });
  });

  it('R6-3: the lines of one message are merged field by field to their largest value (a block written before the output count was final)', async () => {
    const reading = await readClaudeTranscript([claudeLine('m1', usage(10, 1)), claudeLine('m1', usage(10, 90))]);
    expect(reading.usage).toMatchObject({ tokens_in: 10, tokens_out: 90, requests: 1 });
  });

  it('R6-3: an id seen again after another request is not counted again', async () => {
    const reading = await readClaudeTranscript([
      claudeLine('m1', usage(1, 1)),
      claudeLine('m2', usage(2, 2)),
      claudeLine('m1', usage(1, 1)),
    ]);
    expect(reading.usage).toMatchObject({ tokens_in: 3, tokens_out: 3, requests: 2 });
  });

  it('R6-3: NULL-not-zero: a transcript with no request reports nothing, not 0 tokens or 0 requests', async () => {
    const reading = await readClaudeTranscript([
      JSON.stringify({ type: 'user', agentId: 'a7', message: { role: 'user', content: 'go' } }),
      '',
    ]);
    expect(reading).toEqual({ usage: {}, unreadable_lines: 0, key: 'a7' });
  });

  it('R6-3: NULL-not-zero: a usage kind no request reported is absent, never 0', async () => {
    const line = claudeLine('m1', usage(5, 6));
    const u = line.message.usage as Partial<AnthropicUsage>;
    delete u.cache_creation_input_tokens;
    u.cache_read_input_tokens = null as never;
    const reading = await readClaudeTranscript([line]);
    expect(reading.usage).toEqual({ tokens_in: 5, tokens_out: 6, requests: 1, model: 'claude-sonnet-4-5' });
  });

  it.each<[string, unknown]>([
    ['negative', -1],
    ['fractional', 1.5],
    ['a string', '12'],
    ['an unsafe integer', 2 ** 53],
    ['NaN', Number.NaN],
  ])('R6-3: a usage value that is %s makes its line unreadable; it is not reported', async (_, bad) => {
    const line = claudeLine('m2', usage(1, 1));
    (line.message.usage as unknown as Record<string, unknown>).output_tokens = bad;
    const reading = await readClaudeTranscript([claudeLine('m1', usage(7, 8)), line]);
    expect(reading.unreadable_lines).toBe(1);
    expect(reading.usage).toMatchObject({ tokens_in: 7, tokens_out: 8, requests: 1 });
  });

  it.each<[string | null, boolean | undefined]>([
    ['end_turn', true],
    ['max_tokens', true],
    ['tool_use', false],
    ['pause_turn', false],
    [null, undefined],
  ])('R6-3: complete from the newest request stop reason %s: %s', async (stop, complete) => {
    const reading = await readClaudeTranscript([
      claudeLine('m1', usage(1, 1), { stop: 'tool_use' }),
      claudeLine('m2', usage(1, 1), { stop }),
    ]);
    expect(reading.usage.complete).toBe(complete);
  });

  it("R6-3: Claude Code's <synthetic> messages (no API request) are not requests", async () => {
    const reading = await readClaudeTranscript([
      claudeLine('m1', usage(4, 4)),
      claudeLine('m2', usage(0, 0), { model: '<synthetic>' }),
    ]);
    expect(reading.usage).toMatchObject({ requests: 1, model: 'claude-sonnet-4-5' });
    expect(reading.unreadable_lines).toBe(0);
  });

  it('R6-3: a sum beyond the safe integers is not reported (null), never a wrong number', async () => {
    const big = Number.MAX_SAFE_INTEGER - 1;
    const reading = await readClaudeTranscript([claudeLine('m1', usage(big, 1)), claudeLine('m2', usage(big, 1))]);
    expect(reading.usage).toMatchObject({ tokens_in: null, tokens_out: 2, requests: 2 });
  });

  it('R6-3: takes records as objects or lines, from an Iterable or an AsyncIterable', async () => {
    const records = [claudeLine('m1', usage(1, 2)), claudeLine('m2', usage(3, 4))];
    async function* lines() {
      for (const r of records) yield JSON.stringify(r);
    }
    expect((await readClaudeTranscript(lines())).usage).toEqual((await readClaudeTranscript(records)).usage);
  });

  it('R6-3: sum invariant: the tokens are the sums over distinct requests, however many blocks each was written in', async () => {
    await fc.assert(
      fc.asyncProperty(claudeRequests, async (requests) => {
        const lines = requests.flatMap(([u, blocks], i) =>
          Array.from({ length: blocks }, () => claudeLine(`m${i}`, u)),
        );
        const reading = await readClaudeTranscript(lines);
        const sum = (f: keyof AnthropicUsage) => requests.reduce((s, [u]) => s + u[f], 0);
        if (requests.length === 0) expect(reading.usage).toEqual({});
        else
          expect(reading.usage).toMatchObject({
            tokens_in: sum('input_tokens'),
            tokens_out: sum('output_tokens'),
            tokens_cached_write: sum('cache_creation_input_tokens'),
            tokens_cached_read: sum('cache_read_input_tokens'),
            requests: requests.length,
          });
      }),
    );
  });

  it.each<[string, unknown[], string | null]>([
    [
      'the first agentId named, not a later one',
      [{ type: 'user', agentId: 'a1' }, { type: 'user', agentId: 'a2' }, { type: 'user' }],
      'a1',
    ],
    [
      'an agentId of the wrong type is no key',
      [
        { type: 'user', agentId: 5 },
        { type: 'user', agentId: 'a3' },
      ],
      'a3',
    ],
    ['none named', [{ type: 'user' }], null],
  ])('R6-3: the key: %s', async (_, records, key) => {
    expect((await readClaudeTranscript(records)).key).toBe(key);
  });

  it('R6-3: a line that is not a JSON object (a number, an array, bad JSON) is unreadable', async () => {
    const reading = await readClaudeTranscript(['42', '[]', '{"type":', claudeLine('m1', usage(1, 1))]);
    expect(reading.unreadable_lines).toBe(3);
    expect(reading.usage.requests).toBe(1);
  });
});
