import {
  asObject,
  BAD,
  countOf,
  ModelNames,
  type RecordSource,
  recordsOf,
  type TokenCounts,
  textOf,
  type UsageReading,
} from './records.js';
import { type RunUsage, USAGE_TOKEN_FIELDS } from './run-usage.js';

/*
 * A Codex rollout, `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`: one thread, and a
 * Codex subagent is a thread of its own (docs/spend.md#codex, R6-3). Each line is
 * `{timestamp, type, payload}`; `event_msg` lines whose payload is a `token_count` carry
 * `info.total_token_usage`, the thread's usage so far: cumulative, so the last one is the run's and
 * they are never summed.
 */

/** Codex's end-of-turn events: the thread's turn is over, the usage before it final. */
const TURN_ENDS = new Set(['task_complete', 'turn_aborted']);

/**
 * Codex's `TokenUsage` (codex-rs/protocol) as R6-1's counts. Its `input_tokens` include the cached
 * input (Codex's own `non_cached_input()` subtracts `cached_input_tokens`), so `tokens_in` is the
 * difference and the cached part is `tokens_cached_read`, never counted twice. `output_tokens`
 * include the reasoning (`reasoning_output_tokens`, OpenAI's `output_tokens_details`); OpenAI
 * reports no cache writes. Undefined: a field of the wrong type or range, or cached above input.
 */
export function codexTokensOf(value: unknown): TokenCounts | undefined {
  const usage = asObject(value);
  if (usage === undefined) return undefined;
  const input = countOf(usage.input_tokens);
  const cached = countOf(usage.cached_input_tokens);
  const output = countOf(usage.output_tokens);
  const reasoning = countOf(usage.reasoning_output_tokens);
  if (input === BAD || cached === BAD || output === BAD || reasoning === BAD) return undefined;
  const counts: TokenCounts = {};
  if (input !== undefined) {
    if (cached !== undefined && cached > input) return undefined;
    counts.tokens_in = input - (cached ?? 0);
  }
  if (cached !== undefined) counts.tokens_cached_read = cached;
  if (output !== undefined) counts.tokens_out = output;
  if (reasoning !== undefined) counts.tokens_reasoning = reasoning;
  return counts;
}

const same = (a: TokenCounts, b: TokenCounts) => USAGE_TOKEN_FIELDS.every((field) => a[field] === b[field]);

/**
 * The thread's run from its rollout's lines: the last `total_token_usage`; requests are the times it
 * changed (one `token_count` per model response; Codex repeats the last one when only its rate
 * limits change); the models of its `turn_context` lines; `complete` when a turn's end
 * (`task_complete`, `turn_aborted`) came after the last usage. The key is `session_meta`'s `id`,
 * the thread id. Codex records no cost. Never throws on content.
 */
export async function readCodexRollout(lines: RecordSource): Promise<UsageReading> {
  let unreadable = 0;
  let key: string | null = null;
  let total: TokenCounts | undefined;
  let changes = 0;
  let ended = false;
  const models = new ModelNames();
  for await (const record of recordsOf(lines)) {
    try {
      const payload = asObject(record?.payload);
      if (payload === undefined || typeof record?.type !== 'string') {
        unreadable++;
        continue;
      }
      if (record.type === 'session_meta') {
        const id = textOf(payload.id);
        if (id === BAD) unreadable++;
        else if (key === null && id !== undefined) key = id;
      } else if (record.type === 'turn_context') {
        const model = textOf(payload.model);
        if (model === BAD) unreadable++;
        else models.add(model);
      } else if (record.type === 'event_msg') {
        if (TURN_ENDS.has(payload.type as string)) ended = true;
        if (payload.type !== 'token_count') continue;
        if (payload.info == null) continue; // rate limits only, no usage yet
        const counts = codexTokensOf(asObject(payload.info)?.total_token_usage);
        if (counts === undefined) {
          unreadable++;
          continue;
        }
        if (total === undefined || !same(total, counts)) changes++;
        total = counts;
        ended = false;
      }
    } catch {
      unreadable++; // a record whose reading threw (a hostile object's getter): counted, never thrown
    }
  }
  if (total === undefined) return { usage: {}, unreadable_lines: unreadable, key };
  const usage: RunUsage = { ...total, requests: changes, complete: ended };
  const model = models.joined();
  if (model !== undefined) usage.model = model;
  return { usage, unreadable_lines: unreadable, key };
}
