import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readClaudeStream } from '../../../../lib/producer/usage/claude-stream.js';
import { fileLines } from '../../../../lib/producer/usage/file-lines.js';
import { type AnthropicUsage, anthropicUsage, claudeLine, fixture } from './agent-records.js';

const usage = (input: number, output: number, write = 0, read = 0): AnthropicUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
});

/** The main agent's message opening Agent calls (and other tools). */
const opens = (...calls: [id: string, name: string][]) => ({
  type: 'assistant',
  parent_tool_use_id: null,
  message: {
    id: `main-${calls.map(([id]) => id).join('-')}`,
    model: 'claude-opus-4-5',
    content: calls.map(([id, name]) => ({ type: 'tool_use', id, name, input: {} })),
    usage: usage(1, 1),
  },
});
/** A subagent's streamed message. */
const child = (parent: string, id: string, u: AnthropicUsage, model?: string) => ({
  ...claudeLine(id, u, { model }),
  parent_tool_use_id: parent,
});
/** The tool result closing a call, with the Agent tool's `tool_use_result`. */
const result = (id: string, detail: unknown) => ({
  type: 'user',
  parent_tool_use_id: null,
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'done' }] },
  tool_use_result: detail,
});

describe('R6-3: readClaudeStream, stream-json lines or Agent SDK messages', () => {
  it('R6-3: the fixture: one usage per Agent call, the final request never streamed added once, the streamed one not twice, a Read result no subagent', async () => {
    const reading = await readClaudeStream(fileLines(fixture('claude-stream.jsonl')));
    expect(reading).toEqual({
      unreadable_lines: 0,
      subagents: [
        {
          key: 'toolu_A',
          unreadable_lines: 0,
          usage: {
            tokens_in: 50,
            tokens_out: 180,
            tokens_cached_write: 510,
            tokens_cached_read: 2500,
            requests: 2,
            model: 'claude-sonnet-4-5',
            complete: true,
          },
        },
        {
          key: 'toolu_B',
          unreadable_lines: 0,
          usage: {
            tokens_in: 7,
            tokens_out: 9,
            tokens_cached_write: 0,
            tokens_cached_read: 2000,
            requests: 1,
            model: 'claude-sonnet-4-5',
            complete: true,
          },
        },
      ],
    });
  });

  it("R6-3: the main agent's own requests are no subagent's", async () => {
    const reading = await readClaudeStream([opens(['toolu_A', 'Agent']), claudeLine('main-2', usage(500, 500))]);
    expect(reading.subagents).toEqual([{ key: 'toolu_A', unreadable_lines: 0, usage: { complete: false } }]);
  });

  it("R6-3: the result's totalTokens and usage are the final request's alone: with nothing streamed the run is that one request", async () => {
    const reading = await readClaudeStream([
      opens(['toolu_T', 'Task']),
      result('toolu_T', { status: 'completed', agentId: 'x', totalTokens: 123_456, usage: usage(3, 4, 5, 6) }),
    ]);
    expect(reading.subagents[0]!.usage).toEqual({
      tokens_in: 3,
      tokens_out: 4,
      tokens_cached_write: 5,
      tokens_cached_read: 6,
      requests: 1,
      complete: true,
    });
  });

  it('R6-3: a result carrying an agentId is a subagent even when its Agent tool_use was not in the stream', async () => {
    const reading = await readClaudeStream([result('toolu_Z', { agentId: 'z1', usage: usage(1, 2) })]);
    expect(reading.subagents.map((s) => s.key)).toEqual(['toolu_Z']);
  });

  it('R6-3: the results of other tools are no subagent, whatever usage they carry', async () => {
    const reading = await readClaudeStream([
      opens(['toolu_R', 'Read'], ['toolu_B', 'Bash']),
      result('toolu_R', { usage: usage(9, 9) }),
      result('toolu_B', { stdout: 'ok' }),
    ]);
    expect(reading.subagents).toEqual([]);
  });

  it('R6-3: a call without its result is not complete, even if its last message ended its turn', async () => {
    const reading = await readClaudeStream([
      opens(['toolu_A', 'Agent']),
      {
        ...child('toolu_A', 'm1', usage(1, 1)),
        message: { ...child('toolu_A', 'm1', usage(1, 1)).message, stop_reason: 'end_turn' },
      },
    ]);
    expect(reading.subagents[0]!.usage.complete).toBe(false);
  });

  it('R6-3: two calls running at once are kept apart, each message to its parent', async () => {
    const reading = await readClaudeStream([
      opens(['toolu_A', 'Agent'], ['toolu_B', 'Agent']),
      child('toolu_A', 'a1', usage(1, 10)),
      child('toolu_B', 'b1', usage(2, 20), 'claude-haiku-4-5'),
      child('toolu_A', 'a1', usage(1, 10)),
      child('toolu_A', 'a2', usage(3, 30)),
    ]);
    expect(reading.subagents.map((s) => [s.key, s.usage.tokens_out, s.usage.requests, s.usage.model])).toEqual([
      ['toolu_A', 40, 2, 'claude-sonnet-4-5'],
      ['toolu_B', 20, 1, 'claude-haiku-4-5'],
    ]);
  });

  it("R6-3: a subagent's unreadable line is counted on it and in the stream's total; a bad line of nobody's only in the total", async () => {
    const bad = child('toolu_A', 'a1', usage(1, 1));
    (bad.message.usage as unknown as Record<string, unknown>).input_tokens = -4;
    const reading = await readClaudeStream([opens(['toolu_A', 'Agent']), bad, '{"type":"assist']);
    expect(reading.unreadable_lines).toBe(2);
    expect(reading.subagents[0]).toMatchObject({ key: 'toolu_A', unreadable_lines: 1, usage: { complete: false } });
  });

  it('R6-3: sum invariant: streamed requests plus a final one never streamed are each counted once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(anthropicUsage, { maxLength: 8 }),
        anthropicUsage,
        fc.boolean(),
        async (streamed, last, lastStreamed) => {
          // the final request grows the input side past every streamed one (a real run's prefix grows)
          const final = { ...last, cache_read_input_tokens: last.cache_read_input_tokens + 2_000_000 };
          const lines = [
            opens(['toolu_A', 'Agent']),
            ...streamed.flatMap((u, i) => [child('toolu_A', `m${i}`, u), child('toolu_A', `m${i}`, u)]),
            ...(lastStreamed ? [child('toolu_A', 'final', final)] : []),
            result('toolu_A', { status: 'completed', agentId: 'a', usage: final }),
          ];
          const reading = await readClaudeStream(lines);
          const all = [...streamed, final];
          expect(reading.subagents[0]!.usage).toMatchObject({
            tokens_in: all.reduce((s, u) => s + u.input_tokens, 0),
            tokens_out: all.reduce((s, u) => s + u.output_tokens, 0),
            requests: all.length,
            complete: true,
          });
        },
      ),
    );
  });

  describe('R6-3: what is no subagent, and what is unreadable', () => {
    it.each<[string, unknown[], string[], number]>([
      [
        'a main message with no message, or content that is no list',
        [
          { type: 'assistant', parent_tool_use_id: null },
          { type: 'assistant', parent_tool_use_id: null, message: { content: {} } },
        ],
        [],
        0,
      ],
      [
        'a null block beside an Agent call',
        [
          {
            type: 'assistant',
            parent_tool_use_id: null,
            message: { content: [null, { type: 'tool_use', id: 'toolu_A', name: 'Agent' }] },
          },
        ],
        ['toolu_A'],
        0,
      ],
      [
        'a block of another type named Agent',
        [
          {
            type: 'assistant',
            parent_tool_use_id: null,
            message: { content: [{ type: 'server_tool_use', id: 'x', name: 'Agent' }] },
          },
        ],
        [],
        0,
      ],
      [
        'an Agent tool_use without an id',
        [{ type: 'assistant', parent_tool_use_id: null, message: { content: [{ type: 'tool_use', name: 'Agent' }] } }],
        [],
        0,
      ],
      [
        'a parent_tool_use_id that is a number',
        [{ ...child('toolu_A', 'm1', usage(1, 1)), parent_tool_use_id: 5 }],
        [],
        1,
      ],
      [
        'a user message with no message, or content that is no list',
        [{ type: 'user' }, { type: 'user', message: { content: 'hi' } }],
        [],
        0,
      ],
      [
        'a tool result of a record that is no user message',
        [opens(['toolu_A', 'Agent']), { ...result('toolu_A', { agentId: 'a', usage: usage(5, 5) }), type: 'result' }],
        ['toolu_A'],
        0,
      ],
    ])('R6-3: %s', async (_, records, keys, unreadable) => {
      const reading = await readClaudeStream(records);
      expect(reading.subagents.map((s) => s.key)).toEqual(keys);
      expect(reading.unreadable_lines).toBe(unreadable);
      for (const s of reading.subagents) expect(s.usage).toStrictEqual({ complete: false });
    });

    it("R6-3: a Task call's result ends it without an agentId", async () => {
      const reading = await readClaudeStream([opens(['toolu_T', 'Task']), result('toolu_T', { status: 'completed' })]);
      expect(reading.subagents).toEqual([{ key: 'toolu_T', unreadable_lines: 0, usage: { complete: true } }]);
    });

    it('R6-3: a <synthetic> message of a subagent is no request and no unreadable line', async () => {
      const reading = await readClaudeStream([
        opens(['toolu_A', 'Agent']),
        child('toolu_A', 'm1', usage(1, 1)),
        child('toolu_A', 'm2', usage(0, 0), '<synthetic>'),
      ]);
      expect(reading.subagents[0]).toMatchObject({ unreadable_lines: 0, usage: { requests: 1 } });
      expect(reading.unreadable_lines).toBe(0);
    });

    it("R6-3: a final request's usage of the wrong shape is unreadable, on its call and in the total", async () => {
      const reading = await readClaudeStream([
        opens(['toolu_A', 'Agent']),
        result('toolu_A', { agentId: 'a', usage: { input_tokens: -1 } }),
      ]);
      expect(reading.unreadable_lines).toBe(1);
      expect(reading.subagents).toEqual([{ key: 'toolu_A', unreadable_lines: 1, usage: { complete: true } }]);
    });

    it('R6-3: a result without usage, or with no tool_use_result, adds no request', async () => {
      const reading = await readClaudeStream([
        opens(['toolu_A', 'Agent'], ['toolu_B', 'Agent']),
        result('toolu_A', { agentId: 'a' }),
        result('toolu_B', undefined),
      ]);
      expect(reading.subagents.map((s) => s.usage)).toEqual([{ complete: true }, { complete: true }]);
      expect(reading.unreadable_lines).toBe(0);
    });

    it('R6-3: blocks that are no tool result (a text block, a null, a result whose id is no string) do not hide the one Agent result', async () => {
      const one = {
        type: 'user',
        message: {
          content: [
            null,
            { type: 'text', tool_use_id: 'toolu_C' },
            { type: 'tool_result', tool_use_id: 5 },
            { type: 'tool_result', tool_use_id: 'toolu_A' },
          ],
        },
        tool_use_result: { agentId: 'a', usage: usage(4, 4) },
      };
      const reading = await readClaudeStream([opens(['toolu_A', 'Agent']), one]);
      expect(reading.unreadable_lines).toBe(0);
      expect(reading.subagents).toEqual([
        {
          key: 'toolu_A',
          unreadable_lines: 0,
          usage: {
            tokens_in: 4,
            tokens_out: 4,
            tokens_cached_read: 0,
            tokens_cached_write: 0,
            requests: 1,
            complete: true,
          },
        },
      ]);
    });

    it("R6-3: a message holding two Agent calls' results cannot say whose usage it carries: both end, no request added", async () => {
      const both = {
        type: 'user',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_A' },
            { type: 'tool_result', tool_use_id: 'toolu_B' },
            { type: 'text', tool_use_id: 'toolu_C' },
          ],
        },
        tool_use_result: { agentId: 'a', usage: usage(1, 1) },
      };
      const reading = await readClaudeStream([opens(['toolu_A', 'Agent'], ['toolu_B', 'Agent']), both]);
      expect(reading.subagents.map((s) => s.usage)).toEqual([{ complete: true }, { complete: true }]);
    });

    it('R6-3: a result with an agentId beside the result of another tool is no subagent (whose would it be)', async () => {
      const two = {
        type: 'user',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_X' },
            { type: 'tool_result', tool_use_id: 'toolu_Y' },
            { type: 'tool_result', tool_use_id: 5 },
          ],
        },
        tool_use_result: { agentId: 'a', usage: usage(1, 1) },
      };
      expect((await readClaudeStream([two])).subagents).toEqual([]);
    });

    it('R6-3: one Agent result beside the result of another tool: the call ends, its usage is not used', async () => {
      const mixed = {
        type: 'user',
        message: {
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_A' },
            { type: 'tool_result', tool_use_id: 'toolu_R' },
          ],
        },
        tool_use_result: { agentId: 'a', usage: usage(1, 1) },
      };
      const reading = await readClaudeStream([opens(['toolu_A', 'Agent']), mixed]);
      expect(reading.subagents).toEqual([{ key: 'toolu_A', unreadable_lines: 0, usage: { complete: true } }]);
    });
  });
});
