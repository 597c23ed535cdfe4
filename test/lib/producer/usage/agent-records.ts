import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';

/*
 * Records in the agents' own formats (docs/spend.md), made by small factories for the property
 * tests; the hand-written files under test/fixtures/agents/ hold the awkward cases as a person reads them.
 */

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/agents');
export const fixture = (name: string) => join(FIXTURES, name);

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** One assistant line of a Claude Code transcript (one content block of message `id`). */
export function claudeLine(id: string, usage: AnthropicUsage, options: { model?: string; stop?: string | null } = {}) {
  return {
    type: 'assistant',
    isSidechain: true,
    agentId: 'a1',
    sessionId: 's1',
    uuid: `u-${id}-${Math.random()}`,
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: options.model ?? 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'x' }],
      stop_reason: options.stop ?? null,
      usage,
    },
  };
}

export const count = fc.integer({ min: 0, max: 1_000_000 });
export const anthropicUsage: fc.Arbitrary<AnthropicUsage> = fc.record({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
});

/** Requests, each written in 1 to 3 blocks, as Claude Code writes them. */
export const claudeRequests = fc.array(fc.tuple(anthropicUsage, fc.integer({ min: 1, max: 3 })), { maxLength: 20 });

/** Any value a hostile or broken record can hold, at any depth. */
export const anyValue = fc.oneof(
  fc.anything({ maxDepth: 4 }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(Number.NaN, -1, 1.5, 2 ** 53, Number.POSITIVE_INFINITY, '12', null, true, [], {}),
);

/** A record where a usage-bearing field was replaced by anything. */
export const anyLine = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  anyValue,
  fc.record({
    type: fc.constantFrom('assistant', 'user', 'event_msg', 'session_meta'),
    message: anyValue,
    payload: anyValue,
  }),
  fc.record({
    type: fc.constant('assistant'),
    parent_tool_use_id: fc.oneof(fc.constant('toolu_A'), anyValue),
    message: fc.record({
      id: fc.oneof(fc.constant('m1'), anyValue),
      model: anyValue,
      usage: anyValue,
      content: anyValue,
    }),
  }),
  fc.record({
    role: fc.constantFrom('assistant', 'user'),
    id: fc.oneof(fc.constant('msg_1'), anyValue),
    cost: anyValue,
    tokens: anyValue,
    time: anyValue,
  }),
  fc.record({
    type: fc.constant('step-finish'),
    messageID: fc.constant('msg_1'),
    id: anyValue,
    tokens: anyValue,
    cost: anyValue,
  }),
  fc.record({
    type: fc.constant('event_msg'),
    payload: fc.record({ type: fc.constant('token_count'), info: fc.record({ total_token_usage: anyValue }) }),
  }),
);
