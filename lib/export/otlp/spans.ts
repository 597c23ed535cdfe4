import { type Attributes, type HrTime, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { USAGE_COUNT_FIELDS, type UsageCountField } from '../../producer/usage/run-usage.js';
import type { NodeUsage, TreeNode, TurnTree } from '../../report/document.js';
import { latestOf, type Micros, parseRfc3339 } from '../../time.js';
import { normalizeUsage } from '../../usage-write.js';
import { rowSpanIdOf, traceIdOf, turnSpanIdOf } from './ids.js';
import { providerOf } from './provider.js';

/*
 * One turn's fan-out tree → OTLP spans (docs/otlp.md#mapping, R3-10, GenAI semantic conventions):
 * a root span for the turn and one `invoke_agent {subagent_type}` span per row, parented to its
 * parent subagent's span, or to the turn. The spans are built as ReadableSpan values directly (not
 * through a tracer), because their ids and times come from the rows, not from a clock or a random
 * id generator.
 */

/** This project's attribute namespace: identity and metrics that are not GenAI conventions. */
export const NAMESPACE = 'subagent_context';

/**
 * The semantic conventions these spans follow (R4-9, R6-7), on the resource and the scope: 1.41.0
 * is the release that defines every attribute used here in its current form (`gen_ai.provider.name`
 * replaced `gen_ai.system` in 1.37.0; the cache token attributes came in 1.40.0,
 * `gen_ai.usage.reasoning.output_tokens` in 1.41.0). From 1.42.0 the GenAI conventions live in
 * their own repository (open-telemetry/semantic-conventions-genai), under the same names, which
 * has published no release or schema URL yet (docs/otlp.md#run-usage).
 */
export const SCHEMA_URL = 'https://opentelemetry.io/schemas/1.41.0';

/** The sentinel the host's DDL defaults agent_execution_id to: never exported as an id (R3-6). */
const UNKNOWN_EXECUTION = 'unknown';

/** tool_status/agent_status values that make a span's status ERROR (the report's `failed`, R3-5). */
const FAILED = new Set(['error', 'failed', 'cancelled']);

export interface SpanOptions {
  resource: Resource;
  scope: { name: string; version?: string; schemaUrl?: string };
  /** also export rows not settled yet, as zero-length spans marked `subagent_context.settled=false` */
  openSpans: boolean;
  /** counts, by column, the values a span left out because they are not what the column means (R4-3) */
  unreadable?: Map<string, number>;
}

/** The latest instant an OTLP span may carry: int64 nanoseconds since 1970 (2262-04-11). */
const MAX_SPAN_US: Micros = 9_223_372_036_854_775n;

/** A reported count (tokens, tool uses, milliseconds): an integer in range, else not reported (R4-3). */
function count(value: number | null, column: string, options: SpanOptions): number | null {
  if (value === null) return null;
  if (Number.isSafeInteger(value) && value >= 0) return value;
  leftOut(column, options);
  return null;
}

function leftOut(column: string, options: SpanOptions): void {
  options.unreadable?.set(column, (options.unreadable.get(column) ?? 0) + 1);
}

function hrTime(us: Micros): HrTime {
  const seconds = us / 1_000_000n;
  const micros = us % 1_000_000n;
  return micros < 0n
    ? [Number(seconds - 1n), Number(micros + 1_000_000n) * 1000]
    : [Number(seconds), Number(micros) * 1000];
}

function instant(text: string): Micros {
  const us = parseRfc3339(text);
  if (us === undefined) throw new Error(`not an RFC 3339 instant: ${JSON.stringify(text)}`);
  return us;
}

/** Attributes absent when the value is NULL (never 0, never ''): R3-6. */
function set(attributes: Attributes, key: string, value: string | number | boolean | null | undefined): void {
  if (value === null || value === undefined) return;
  attributes[key] = value;
}

function rowAttributes(tree: TurnTree, node: TreeNode, options: SpanOptions): Attributes {
  const a: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
  set(a, 'gen_ai.provider.name', providerOf(node.model));
  set(a, 'gen_ai.agent.name', node.subagent_type);
  set(a, 'gen_ai.agent.id', node.agent_id);
  set(a, 'gen_ai.agent.description', node.description);
  set(a, 'gen_ai.request.model', node.model);
  set(a, 'gen_ai.conversation.id', node.task_session_id);
  set(a, `${NAMESPACE}.task_id`, tree.task_id);
  set(a, `${NAMESPACE}.task_session_id`, node.task_session_id);
  set(a, `${NAMESPACE}.turn_id`, tree.turn_id);
  set(a, `${NAMESPACE}.tool_call_id`, node.tool_call_id);
  if (node.agent_execution_id !== UNKNOWN_EXECUTION) set(a, `${NAMESPACE}.agent_execution_id`, node.agent_execution_id);
  set(a, `${NAMESPACE}.parent_tool_call_id`, node.parent_tool_call_id);
  if (node.orphan) a[`${NAMESPACE}.orphan`] = true;
  set(a, `${NAMESPACE}.child_session_id`, node.child_session_id);
  set(a, `${NAMESPACE}.source`, node.source);
  set(a, `${NAMESPACE}.agent_status`, node.agent_status);
  set(a, `${NAMESPACE}.tool_status`, node.tool_status);
  a[`${NAMESPACE}.is_async`] = node.is_async;
  // The subagent's own report (its final message): never gen_ai.usage.*, never priced (R3-6, R3-10).
  set(a, `${NAMESPACE}.total_tokens`, count(node.total_tokens, 'total_tokens', options));
  set(a, `${NAMESPACE}.tool_use_count`, count(node.tool_use_count, 'tool_use_count', options));
  set(a, `${NAMESPACE}.duration_ms`, count(node.duration_ms, 'duration_ms', options));
  // The stored value the tree reader could not read (it reads as null above): left out, counted.
  for (const column of node.unreadable ?? []) leftOut(column, options);
  if (node.usage) usageAttributes(a, node.usage, options);
  a[`${NAMESPACE}.settled`] = node.settled_at !== null;
  // On an ERROR span only (R4-9): the failing value, a low-cardinality class as error.type asks.
  set(a, 'error.type', failure(node));
  return a;
}

/**
 * `tokens_in` plus the cache parts reported (a part not reported adds nothing: OpenAI reports no
 * cache writes); null when `tokens_in` is not known or a part is held but unreadable (the sum would
 * hide it). Never more than a safe integer.
 */
function inputTotal(input: number | null, parts: readonly (number | null)[], unreadablePart: boolean): number | null {
  if (input === null || unreadablePart) return null;
  const sum = parts.reduce<number>((acc, p) => acc + (p ?? 0), input);
  return Number.isSafeInteger(sum) ? sum : null;
}

/**
 * R6-7 (docs/otlp.md#run-usage): the subagent's whole run, as the GenAI conventions name usage.
 * R6-1's `tokens_in` is input neither read from nor written to a cache, so the conventions'
 * `input_tokens` (cached input included) is a sum; `tokens_out` already includes the reasoning
 * (`tokens_reasoning` is a part of it), as the conventions' `output_tokens` does. Cost, its
 * source, requests and `complete` are ours. Never from `total_tokens` (the final request's context).
 */
function usageAttributes(a: Attributes, usage: NodeUsage, options: SpanOptions): void {
  const unreadable = new Set(usage.unreadable ?? []);
  for (const column of unreadable) leftOut(`usage.${column}`, options);
  const n = (field: UsageCountField | 'cost_subcents') => count(usage[field], `usage.${field}`, options);
  const counts = Object.fromEntries(USAGE_COUNT_FIELDS.map((f) => [f, n(f)])) as Record<UsageCountField, number | null>;
  const cacheUnreadable = unreadable.has('tokens_cached_read') || unreadable.has('tokens_cached_write');
  set(
    a,
    'gen_ai.usage.input_tokens',
    inputTotal(counts.tokens_in, [counts.tokens_cached_read, counts.tokens_cached_write], cacheUnreadable),
  );
  set(a, 'gen_ai.usage.output_tokens', counts.tokens_out);
  set(a, 'gen_ai.usage.cache_read.input_tokens', counts.tokens_cached_read);
  set(a, 'gen_ai.usage.cache_creation.input_tokens', counts.tokens_cached_write);
  set(a, 'gen_ai.usage.reasoning.output_tokens', counts.tokens_reasoning);
  set(a, `${NAMESPACE}.usage.requests`, counts.requests);
  // R6-1's pricing rule, the ingest's (lib/usage-write.ts): a cost only with a source that prices it.
  const priced = normalizeUsage(
    { ...counts, cost_subcents: n('cost_subcents'), cost_source: usage.cost_source },
    0n,
  ).usage;
  set(a, `${NAMESPACE}.usage.cost_subcents`, priced?.cost_subcents);
  set(a, `${NAMESPACE}.usage.cost_source`, priced?.cost_source);
  set(a, `${NAMESPACE}.usage.model`, usage.model);
  set(a, `${NAMESPACE}.usage.complete`, usage.complete);
  set(a, `${NAMESPACE}.usage.observed_at`, usage.observed_at);
}

/** The failing status value (`error`, `failed`, `cancelled`), tool_status first; undefined: not failed. */
function failure(node: TreeNode): string | undefined {
  return [node.tool_status, node.agent_status].find((s): s is string => s !== null && FAILED.has(s));
}

function status(node: TreeNode): ReadableSpan['status'] {
  const failed = failure(node);
  return failed === undefined
    ? { code: SpanStatusCode.UNSET }
    : {
        code: SpanStatusCode.ERROR,
        message: `${node.tool_status === failed ? 'tool_status' : 'agent_status'} ${failed}`,
      };
}

function span(
  fields: { name: string; traceId: string; spanId: string; parentSpanId?: string; start: Micros; end: Micros },
  attributes: Attributes,
  spanStatus: ReadableSpan['status'],
  options: SpanOptions,
): ReadableSpan {
  const end = latestOf(fields.start, fields.end);
  const context = { traceId: fields.traceId, spanId: fields.spanId, traceFlags: 1 };
  return {
    name: fields.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    parentSpanContext:
      fields.parentSpanId === undefined
        ? undefined
        : { traceId: fields.traceId, spanId: fields.parentSpanId, traceFlags: 1, isRemote: false },
    startTime: hrTime(fields.start),
    endTime: hrTime(end),
    duration: hrTime(end - fields.start),
    status: spanStatus,
    attributes,
    links: [],
    events: [],
    ended: true,
    resource: options.resource,
    instrumentationScope: options.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/**
 * Every node of a tree, parents before children (depth first, in the tree's order), with its span
 * id and its parent span's. An explicit stack, not recursion: a parent chain of any depth (R4-4).
 */
function* walk(nodes: readonly TreeNode[], parentSpanId: string): Generator<[TreeNode, string, string]> {
  const stack: [TreeNode, string][] = [];
  for (let i = nodes.length - 1; i >= 0; i--) stack.push([nodes[i]!, parentSpanId]);
  while (stack.length > 0) {
    const [node, parent] = stack.pop()!;
    const spanId = rowSpanIdOf(node.task_session_id, node.agent_execution_id, node.tool_call_id);
    yield [node, spanId, parent];
    for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i]!, spanId]);
  }
}

/**
 * A row span's end (R4-9): its start plus `duration_ms` where that was reported (what the subagent
 * measured), else `settled_at` (the observation that settled it), else its start (an open span).
 */
function endOf(node: TreeNode, start: Micros, options: SpanOptions): Micros {
  const duration = count(node.duration_ms, 'duration_ms', { ...options, unreadable: undefined });
  if (duration !== null) {
    const end = start + BigInt(duration) * 1000n;
    if (end <= MAX_SPAN_US) return end;
  }
  return node.settled_at === null ? start : instant(node.settled_at);
}

/**
 * The turn's spans: its rows' (settled ones only unless `openSpans`) and, when there is any, the
 * turn's root first. A row waiting to settle keeps its place: its children still name its span
 * as their parent, which arrives once it settles.
 */
export function turnSpans(tree: TurnTree, options: SpanOptions): ReadableSpan[] {
  const turnKey = tree.turn_id ?? '';
  const traceId = traceIdOf(tree.task_session_id, turnKey);
  const rootId = turnSpanIdOf(tree.task_session_id, turnKey);
  const rows: ReadableSpan[] = [];
  let latest: Micros | undefined;
  for (const [node, spanId, parentSpanId] of walk(tree.subagents, rootId)) {
    if (node.settled_at === null && !options.openSpans) continue;
    const start = instant(node.observed_at);
    const end = endOf(node, start, options);
    if (latest === undefined || end > latest) latest = end;
    rows.push(
      span(
        {
          name: node.subagent_type === null ? 'invoke_agent' : `invoke_agent ${node.subagent_type}`,
          traceId,
          spanId,
          parentSpanId,
          start,
          end,
        },
        rowAttributes(tree, node, options),
        status(node),
        options,
      ),
    );
  }
  if (rows.length === 0) return [];
  const start = instant(tree.started_at);
  const rootAttributes: Attributes = { 'gen_ai.conversation.id': tree.task_session_id };
  set(rootAttributes, `${NAMESPACE}.task_id`, tree.task_id);
  set(rootAttributes, `${NAMESPACE}.task_session_id`, tree.task_session_id);
  set(rootAttributes, `${NAMESPACE}.turn_id`, tree.turn_id);
  const root = span(
    {
      name: 'turn',
      traceId,
      spanId: rootId,
      start,
      // The host's completed_at (or the rows' last observation), but never before a subagent it
      // holds ends (a duration_ms may reach past both); a turn still running ends at its latest subagent.
      end: tree.completed_at === null ? (latest ?? start) : latestOf(instant(tree.completed_at), latest ?? start),
    },
    rootAttributes,
    { code: SpanStatusCode.UNSET },
    options,
  );
  return [root, ...rows];
}
