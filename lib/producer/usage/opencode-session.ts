import {
  asObject,
  BAD,
  countOf,
  dollarsToSubcents,
  ModelNames,
  type RecordSource,
  recordsOf,
  type TokenCounts,
  TokenSums,
  textOf,
  type UsageReading,
} from './records.js';
import type { RunUsage } from './run-usage.js';

/*
 * An OpenCode session: the child session the `task` tool starts for a subagent
 * (docs/spend.md#opencode, R6-3). Its assistant messages carry `cost` (dollars, summed
 * over the message's steps, priced by OpenCode from its model catalog, models.dev) and `tokens`,
 * which OpenCode overwrites with each step's, so a message's own `tokens` is its last step's
 * alone; every step's counts are in the message's `step-finish` parts.
 */

/** What one assistant message contributes, folded as its records come. */
interface Message {
  /** from the message's own record (undefined until it comes; parts may come first) */
  info?: {
    cost: number | undefined;
    tokens: TokenCounts | undefined;
    model: string | undefined;
    created: number;
    /** the message ended: `time.completed` set and `finish` not `tool-calls` */
    ended: boolean;
  };
  /** its step-finish parts (their tokens go straight into the run's sums) */
  steps: number;
  /** their ids, so a part given twice counts once */
  stepIds: Set<string>;
  stepCost: number;
  stepCostBad: boolean;
}

/**
 * OpenCode's token counts (`{input, output, reasoning, cache: {read, write}}`) as R6-1's. OpenCode
 * records input without the cache and output without the reasoning (its own cost adds reasoning
 * at the output price), so `tokens_out` is output + reasoning: every output token, as every
 * reader reports it, with `tokens_reasoning` the part of it spent reasoning.
 */
export function openCodeTokensOf(value: unknown): TokenCounts | undefined {
  const tokens = asObject(value);
  if (tokens === undefined) return undefined;
  const cache = tokens.cache === undefined || tokens.cache === null ? {} : asObject(tokens.cache);
  if (cache === undefined) return undefined;
  const input = countOf(tokens.input);
  const output = countOf(tokens.output);
  const reasoning = countOf(tokens.reasoning);
  const read = countOf(cache.read);
  const write = countOf(cache.write);
  if ([input, output, reasoning, read, write].includes(BAD)) return undefined;
  const counts: TokenCounts = {};
  if (typeof input === 'number') counts.tokens_in = input;
  if (typeof output === 'number' || typeof reasoning === 'number') {
    const out = ((output as number | undefined) ?? 0) + ((reasoning as number | undefined) ?? 0);
    if (!Number.isSafeInteger(out)) return undefined;
    counts.tokens_out = out;
  }
  if (typeof reasoning === 'number') counts.tokens_reasoning = reasoning;
  if (typeof read === 'number') counts.tokens_cached_read = read;
  if (typeof write === 'number') counts.tokens_cached_write = write;
  return counts;
}

/** A dollar amount: a finite non-negative number, absent/null not reported, anything else bad. */
export function dollarsOf(value: unknown): number | undefined | typeof BAD {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : BAD;
}

/**
 * The child session's whole run from its messages as OpenCode gives them: its API's `{info, parts}`
 * (an array of them is spread), or its storage's records one by one (a message's JSON, a part's
 * JSON, in any order). Tokens are the step-finish parts' sums (a message without any is counted by
 * its own `tokens`, its last step's: a lower bound, and the run is then not `complete`); requests
 * are the steps; the cost is the messages' `cost` (`models_dev_list`). The key is the `sessionID`.
 */
export async function readOpenCodeSession(messages: RecordSource): Promise<UsageReading> {
  const byId = new Map<string, Message>();
  const sums = new TokenSums();
  const message = (id: string) => {
    let found = byId.get(id);
    if (found === undefined) {
      found = { steps: 0, stepIds: new Set(), stepCost: 0, stepCostBad: false };
      byId.set(id, found);
    }
    return found;
  };
  let unreadable = 0;
  let key: string | null = null;
  const keyFrom = (record: Record<string, unknown>) => {
    const session = textOf(record.sessionID);
    if (key === null && typeof session === 'string') key = session;
  };
  for await (const record of recordsOf(messages, { arrays: true })) {
    try {
      if (record === undefined) {
        unreadable++;
        continue;
      }
      if ('info' in record) {
        // the API's shape: the message and its parts together
        const info = asObject(record.info);
        const parts = record.parts ?? [];
        if (info === undefined || !Array.isArray(parts)) {
          unreadable++;
          continue;
        }
        unreadable += messageRecord(info, message, keyFrom);
        for (const part of parts) {
          const p = asObject(part);
          unreadable += p === undefined ? 1 : partRecord(p, message, sums, keyFrom);
        }
      } else if ('role' in record) unreadable += messageRecord(record, message, keyFrom);
      else unreadable += partRecord(record, message, sums, keyFrom); // not a part either: unreadable
    } catch {
      unreadable++; // a record whose reading threw (a hostile object's getter): counted, never thrown
    }
  }
  return { usage: runUsage(byId, sums), unreadable_lines: unreadable, key };
}

/** A message's own record (user messages hold no usage). Returns the unreadable count. */
function messageRecord(
  record: Record<string, unknown>,
  message: (id: string) => Message,
  keyFrom: (record: Record<string, unknown>) => void,
): number {
  const id = textOf(record.id);
  if (typeof id !== 'string' || typeof record.role !== 'string') return 1;
  keyFrom(record);
  if (record.role !== 'assistant') return 0;
  const cost = dollarsOf(record.cost);
  const tokens = record.tokens === undefined || record.tokens === null ? {} : openCodeTokensOf(record.tokens);
  const model = textOf(record.modelID);
  const time = asObject(record.time);
  const created = countOf(time?.created);
  const completed = countOf(time?.completed);
  const finish = textOf(record.finish);
  if (cost === BAD || tokens === undefined || model === BAD || created === BAD || completed === BAD) return 1;
  if (finish === BAD) return 1;
  message(id).info = {
    cost,
    tokens: Object.keys(tokens).length === 0 ? undefined : tokens,
    model,
    created: created ?? 0,
    ended: completed !== undefined && finish !== 'tool-calls',
  };
  return 0;
}

/** A part: only `step-finish` parts hold usage (one per step, each once by its id). Returns the unreadable count. */
function partRecord(
  record: Record<string, unknown>,
  message: (id: string) => Message,
  sums: TokenSums,
  keyFrom: (record: Record<string, unknown>) => void,
): number {
  const messageId = textOf(record.messageID);
  if (typeof messageId !== 'string' || typeof record.type !== 'string') return 1;
  keyFrom(record);
  if (record.type !== 'step-finish') return 0;
  const id = textOf(record.id);
  const tokens = openCodeTokensOf(record.tokens);
  const cost = dollarsOf(record.cost);
  if (id === BAD || tokens === undefined || cost === BAD) return 1;
  const m = message(messageId);
  if (id !== undefined) {
    if (m.stepIds.has(id)) return 0; // the same part given twice
    m.stepIds.add(id);
  }
  m.steps++;
  sums.add(tokens);
  if (cost === undefined) m.stepCostBad = true;
  else m.stepCost += cost;
  return 0;
}

/** The run's usage over its assistant messages (and step parts whose message never came). */
function runUsage(byId: Map<string, Message>, sums: TokenSums): RunUsage {
  const models = new ModelNames();
  let dollars = 0;
  let costKnown = true;
  let partial = false;
  let newest: Message['info'];
  // in the order OpenCode made them (its ids ascend with time): the models in the order used, and
  // the newest message last (created time first; a message known only by its parts sorts by id)
  const ordered = [...byId].sort(
    ([a, ma], [b, mb]) => (ma.info?.created ?? 0) - (mb.info?.created ?? 0) || (a < b ? -1 : a > b ? 1 : 0),
  );
  for (const [, m] of ordered) {
    const info = m.info;
    if (info !== undefined) newest = info; // a message exists only once its record or a step part came
    if (m.steps === 0 && info?.tokens !== undefined) {
      sums.add(info.tokens); // its last step's only: a lower bound when it took several
      partial = true;
    } else if (m.steps === 0) continue; // an assistant message with no usage yet (just started)
    models.add(info?.model);
    const cost = info?.cost ?? (m.stepCostBad ? undefined : m.stepCost);
    if (cost === undefined) costKnown = false;
    else dollars += cost;
  }
  if (sums.requests === 0) return {};
  const usage = sums.usage();
  const model = models.joined();
  if (model !== undefined) usage.model = model;
  const subcents = costKnown ? dollarsToSubcents(dollars) : undefined;
  const tokens =
    (usage.tokens_in ?? 0) +
    (usage.tokens_out ?? 0) +
    (usage.tokens_cached_read ?? 0) +
    (usage.tokens_cached_write ?? 0);
  if (subcents !== undefined && !(subcents === 0 && tokens > 0)) {
    usage.cost_subcents = subcents;
    usage.cost_source = 'models_dev_list';
  } else if (subcents === 0) usage.cost_source = 'unpriced'; // 0 with tokens: no price in its catalog (R6-1)
  if (newest !== undefined) usage.complete = newest.ended && !partial;
  return usage;
}
