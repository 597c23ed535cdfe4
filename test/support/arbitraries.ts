import fc from 'fast-check';
import { parseFrame } from '../../lib/frame/parse.js';
import { normalizeFrame } from '../../lib/normalize.js';
import { rowKey, type SubagentWrite } from '../../lib/row.js';
import { formatRfc3339, parseRfc3339 } from '../../lib/time.js';

const BASE = parseRfc3339('2026-08-12T13:24:58Z')!;

const maybeText = (...values: string[]) => fc.constantFrom<string | undefined>(undefined, '', ...values);
/** every metric shape a producer may send: absent, null, zero, real, negative, malformed */
const metric = fc.constantFrom<unknown>(
  undefined,
  null,
  0,
  1,
  275_717,
  2_147_483_647,
  3_000_000_000,
  Number.MAX_SAFE_INTEGER,
  -3,
  2.5,
  '7',
);
const toolStatus = fc.constantFrom<string | undefined>(
  undefined,
  '',
  'pending',
  'in_progress',
  'completed',
  'failed',
  'cancelled',
  'success',
);

/** An RFC 3339 instant within a minute of BASE, in UTC or +02:00, with 0-9 fraction digits. */
const observedAt = fc
  .tuple(fc.bigInt({ min: 0n, max: 60_000_000n }), fc.boolean(), fc.integer({ min: 0, max: 9 }))
  .map(([offset, shifted, digits]) => {
    const us = BASE + offset;
    const utc = formatRfc3339(shifted ? us + 2n * 3_600_000_000n : us); // …T13:24:58.123456Z
    const [whole, fraction] = utc.slice(0, -1).split('.') as [string, string];
    const text = digits === 0 ? whole : `${whole}.${fraction.padEnd(9, '0').slice(0, digits)}`;
    return `${text}${shifted ? '+02:00' : 'Z'}`;
  });

/**
 * A raw v1 frame (the JSON object a producer sends) over a few keys: two sessions, three tool
 * calls, two executions and the unknown sentinel, every status kind, NULLs, zeros, negatives.
 */
export const frameObject = (sessions: readonly string[]) =>
  fc.record({
    version: fc.constant(1),
    task_session_id: fc.constantFrom(...sessions),
    task_id: fc.constantFrom('t1', 't2'),
    tool_call_id: fc.constantFrom('c1', 'c2', 'c3'),
    execution_id: maybeText('e1', 'e2'),
    turn_id: maybeText('turn-1', 'turn-2'),
    parent_tool_call_id: maybeText('p1'),
    tool_status: toolStatus,
    observed_at: observedAt,
    subagent_task: fc.record({
      status: maybeText('async_launched', 'started', 'completed'),
      subagent_type: maybeText('explore', 'security-reviewer'),
      description: maybeText('Review auth'),
      agent_id: maybeText('a1', 'a2'),
      child_session_id: maybeText('child-1'),
      model: maybeText('m1', 'm2'),
      total_tokens: metric,
      duration_ms: metric,
      tool_use_count: metric,
      is_async: fc.constantFrom<boolean | undefined>(undefined, true, false),
      prompt: fc.constant('never stored'),
    }),
  });

/** Frame object → the write the pipeline makes (every generated frame has an identity). */
export function toWrite(frameObject: object): SubagentWrite {
  const parsed = parseFrame(JSON.stringify(frameObject));
  if (!parsed.ok) throw parsed.error;
  const normalized = normalizeFrame(parsed.frame);
  if (normalized.kind !== 'write') throw new Error('generated frame was skipped');
  return normalized.row;
}

export const writes = (sessions: readonly string[], maxLength = 12) =>
  fc.array(frameObject(sessions).map(toWrite), { minLength: 1, maxLength });

/**
 * The same writes in observation order with strictly increasing observed_at per conflict key (a
 * tie is bumped 1 µs): the order a producer observed them in. Two different frames of one key with
 * the same observed_at are ordered only by arrival, so a replay of the earlier one of them is not
 * older than the row and applies again (docs/merge.md).
 */
export function inObservationOrder(list: readonly SubagentWrite[]): SubagentWrite[] {
  const last = new Map<string, bigint>();
  return [...list]
    .sort((a, b) => (a.observed_at < b.observed_at ? -1 : a.observed_at > b.observed_at ? 1 : 0))
    .map((w) => {
      const key = rowKey(w);
      const previous = last.get(key);
      const observedAt = previous !== undefined && w.observed_at <= previous ? previous + 1n : w.observed_at;
      last.set(key, observedAt);
      return {
        ...w,
        observed_at: observedAt,
        last_observed_at: observedAt,
        settled_at: w.settled_at === null ? null : observedAt,
      };
    });
}

/** An in-order sequence and re-deliveries of any of its frames (any multiset, any order). */
export const withReplays = (inOrder: SubagentWrite[]) =>
  fc
    .array(fc.nat({ max: inOrder.length - 1 }), { maxLength: inOrder.length * 2 })
    .map((picks) => ({ inOrder, replayed: picks.map((i) => inOrder[i]!) }));
