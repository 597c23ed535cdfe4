import { type Attributes, type HrTime, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { TreeNode, TurnTree } from '../../report/document.js';
import { latestOf, type Micros, parseRfc3339 } from '../../time.js';
import { rowSpanIdOf, traceIdOf, turnSpanIdOf } from './ids.js';

/*
 * One turn's fan-out tree → OTLP spans (docs/otlp.md#mapping, R3-10, GenAI semantic conventions):
 * a root span for the turn and one `invoke_agent {subagent_type}` span per row, parented to its
 * parent subagent's span, or to the turn. The spans are built as ReadableSpan values directly (not
 * through a tracer), because their ids and times come from the rows, not from a clock or a random
 * id generator.
 */

/** This project's attribute namespace: identity and metrics that are not GenAI conventions. */
export const NAMESPACE = 'subagent_context';

/** The sentinel the host's DDL defaults agent_execution_id to: never exported as an id (R3-6). */
const UNKNOWN_EXECUTION = 'unknown';

/** tool_status/agent_status values that make a span's status ERROR (the report's `failed`, R3-5). */
const FAILED = new Set(['error', 'failed', 'cancelled']);

export interface SpanOptions {
  resource: Resource;
  scope: { name: string; version?: string };
  /** also export rows not settled yet, as zero-length spans marked `subagent_context.settled=false` */
  openSpans: boolean;
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

function rowAttributes(tree: TurnTree, node: TreeNode): Attributes {
  const a: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
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
  set(a, `${NAMESPACE}.total_tokens`, node.total_tokens);
  set(a, `${NAMESPACE}.tool_use_count`, node.tool_use_count);
  set(a, `${NAMESPACE}.duration_ms`, node.duration_ms);
  a[`${NAMESPACE}.settled`] = node.settled_at !== null;
  return a;
}

function status(node: TreeNode): ReadableSpan['status'] {
  const failed = [node.tool_status, node.agent_status].find((s) => s !== null && FAILED.has(s));
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

/** Every node of a tree, parents before children, with its span id and its parent span's. */
function* walk(nodes: readonly TreeNode[], parentSpanId: string): Generator<[TreeNode, string, string]> {
  for (const node of nodes) {
    const spanId = rowSpanIdOf(node.task_session_id, node.agent_execution_id, node.tool_call_id);
    yield [node, spanId, parentSpanId];
    yield* walk(node.children, spanId);
  }
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
    const end = node.settled_at === null ? start : instant(node.settled_at);
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
        rowAttributes(tree, node),
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
      // The host's completed_at; a turn still running ends at its latest exported subagent.
      end: tree.completed_at === null ? (latest ?? start) : instant(tree.completed_at),
    },
    rootAttributes,
    { code: SpanStatusCode.UNSET },
    options,
  );
  return [root, ...rows];
}
