import { asObject, BAD, countOf, ModelNames, type TokenCounts, TokenSums, textOf } from './records.js';
import type { RunUsage } from './run-usage.js';

/*
 * Claude Code's records of API requests (docs/spend.md#claude-code): an assistant message carries the
 * Messages API's `message` (`id`, `model`, `stop_reason`, `usage`). Claude Code writes a message once
 * per content block, each line with the same `message.id` and usage, so a request is counted once
 * per id. Shared by the transcript and the stream reader.
 */

/** The Messages API's usage fields, as R6-1's token kinds (all four are disjoint: no double count). */
const USAGE_FIELDS = [
  ['input_tokens', 'tokens_in'],
  ['output_tokens', 'tokens_out'],
  ['cache_read_input_tokens', 'tokens_cached_read'],
  ['cache_creation_input_tokens', 'tokens_cached_write'],
] as const;

/**
 * One request's counts from a Messages API `usage` object: undefined when it is not an object or a
 * field holds a value of the wrong type or range (the record is unreadable). A field absent or null
 * is not reported. Claude reports no reasoning count of its own: thinking is within `output_tokens`.
 */
export function claudeUsageOf(value: unknown): TokenCounts | undefined {
  const usage = asObject(value);
  if (usage === undefined) return undefined;
  const counts: TokenCounts = {};
  for (const [from, to] of USAGE_FIELDS) {
    const n = countOf(usage[from]);
    if (n === BAD) return undefined;
    if (n !== undefined) counts[to] = n;
  }
  return counts;
}

/** The API's stop reasons that end a run: the model answered (not `tool_use`, not `pause_turn`). */
const FINAL_STOP_REASONS = new Set(['end_turn', 'stop_sequence', 'max_tokens', 'refusal']);

/** An assistant message's request as read from one line: undefined when the line is unreadable. */
export interface ClaudeRequest {
  id: string;
  model: string | undefined;
  stopReason: string | undefined;
  counts: TokenCounts;
}

/**
 * The request an assistant record holds: `message.id` (a string), `message.usage`, `message.model`
 * and `message.stop_reason` (strings when present). Undefined: the record is unreadable. Claude
 * Code's `<synthetic>` messages (an error it wrote itself, no API request) are `'synthetic'`.
 */
export function claudeRequestOf(record: Record<string, unknown>): ClaudeRequest | 'synthetic' | undefined {
  const message = asObject(record.message);
  if (message === undefined) return undefined;
  const id = textOf(message.id);
  const model = textOf(message.model);
  const stopReason = textOf(message.stop_reason);
  if (model === '<synthetic>') return 'synthetic';
  if (id === undefined || id === BAD || model === BAD || stopReason === BAD) return undefined;
  const counts = claudeUsageOf(message.usage);
  if (counts === undefined) return undefined;
  return { id, model, stopReason, counts };
}

const INPUT_SIDE = ['tokens_in', 'tokens_cached_read', 'tokens_cached_write'] as const;

/**
 * A run's requests folded as they come. The lines of one message are consecutive: the open request
 * takes each field's largest value over its lines (they are equal when Claude Code wrote the same
 * usage on each), and is added to the sums when another id begins. Ids seen before are counted
 * once; only the ids are kept, so memory grows with the requests, never with the lines.
 */
export class ClaudeRequestFold {
  private readonly sums = new TokenSums();
  private readonly models = new ModelNames();
  private readonly seen = new Set<string>();
  private open: ClaudeRequest | undefined;
  /** the newest request's stop reason (undefined: none of its lines said) */
  private lastStop: string | undefined;
  /** the newest request's counts, kept after it is folded, for `sameAsLast` */
  private last: TokenCounts | undefined;

  add(request: ClaudeRequest): void {
    if (this.open?.id === request.id) {
      for (const [field, value] of Object.entries(request.counts) as [keyof TokenCounts, number][])
        this.open.counts[field] = Math.max(this.open.counts[field] ?? 0, value);
      this.lastStop = request.stopReason ?? this.lastStop;
      this.models.add(request.model);
      return;
    }
    if (this.seen.has(request.id)) return; // a block of a message counted before
    this.close();
    this.seen.add(request.id);
    this.open = { ...request, counts: { ...request.counts } };
    this.last = this.open.counts;
    this.lastStop = request.stopReason;
    this.models.add(request.model);
  }

  /**
   * Whether `counts` are the newest request's: the input side (fresh input, cache read, cache write)
   * is fixed when a request starts and grows with every later one, so equal input sides are the same
   * request. Used for the stream's final request, found only in the tool result when not streamed.
   */
  sameAsLast(counts: TokenCounts): boolean {
    const last = this.last;
    return last !== undefined && INPUT_SIDE.every((field) => last[field] === counts[field]);
  }

  private close(): void {
    if (this.open !== undefined) this.sums.add(this.open.counts);
    this.open = undefined;
  }

  /**
   * The run's usage. `complete`: true when the newest request stopped with a final reason (end_turn,
   * stop_sequence, max_tokens, refusal), false when it stopped to use a tool or paused, not reported
   * when no line of it said (Claude Code may write a block before the stop reason is known).
   */
  usage(): RunUsage {
    this.close();
    const usage: RunUsage = this.sums.usage(); // {} when no request was seen
    const model = this.models.joined();
    if (model !== undefined) usage.model = model;
    if (this.lastStop !== undefined) usage.complete = FINAL_STOP_REASONS.has(this.lastStop);
    return usage;
  }
}
