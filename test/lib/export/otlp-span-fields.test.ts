import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { rowSpanIdOf, traceIdOf, turnSpanIdOf } from '../../../lib/export/otlp/ids.js';
import { NAMESPACE, SCHEMA_URL, type SpanOptions, turnSpans } from '../../../lib/export/otlp/spans.js';
import type { TreeNode, TurnTree } from '../../../lib/report/document.js';
import { FIXED_IDS } from '../../support/otlp-ids.js';
import { treeNode } from '../../support/tree-node.js';

/*
 * Each field of each span a turn gives (docs/otlp.md#mapping, R3-6, R3-10, R4-3, R4-9), written
 * out for a tree built here: names, kinds, ids and parents, times to the microsecond, statuses and
 * every attribute, with nothing else. The export runs (otlp-export.test.ts, export-edges.test.ts)
 * prove the same spans reach a receiver; this proves what is in them, without a database.
 */

const resource = resourceFromAttributes({ 'service.name': 'subagent-context' });
const scope = { name: 'subagent-context', version: '1.2.3', schemaUrl: SCHEMA_URL };

function options(change: Partial<SpanOptions> = {}): SpanOptions {
  return { resource, scope, openSpans: false, ...change };
}

function node(id: string, change: Partial<TreeNode> = {}): TreeNode {
  return treeNode({
    tool_call_id: id,
    observed_at: '2026-08-12T13:00:01.000001Z',
    settled_at: '2026-08-12T13:00:09.000009Z',
    ...change,
  });
}

function turn(subagents: TreeNode[], change: Partial<TurnTree> = {}): TurnTree {
  return {
    task_id: 't1',
    task_session_id: 's1',
    turn_id: 'u1',
    started_at: '2026-08-12T13:00:00.500000Z',
    completed_at: '2026-08-12T13:00:30.000000Z',
    subagents,
    ...change,
  };
}

const ns = (key: string) => `${NAMESPACE}.${key}`;
const byCall = (spans: ReturnType<typeof turnSpans>, id: string) =>
  spans.find((s) => s.attributes[ns('tool_call_id')] === id)!;

describe('R3-10, R4-9 the spans of one turn, field by field', () => {
  it('R4-9: a row with every column set: its name, kind, ids, parent, times and every attribute, nothing more', () => {
    const full = node('a', {
      model: 'claude-sonnet-4',
      agent_id: 'agent-7',
      description: 'look into it',
      child_session_id: 'child-1',
      agent_status: 'completed',
      tool_status: 'complete',
      is_async: true,
      source: 'backfill',
      parent_tool_call_id: '',
      total_tokens: 1_234,
      tool_use_count: 0,
      duration_ms: 1_500,
    });
    const spans = turnSpans(turn([full]), options());
    expect(spans).toHaveLength(2);
    const row = spans[1]!;
    expect(row.name).toBe('invoke_agent explore');
    expect(row.kind).toBe(SpanKind.INTERNAL);
    expect(row.spanContext()).toEqual({ traceId: FIXED_IDS.trace_s1_u1, spanId: FIXED_IDS.row_s1_e1_a, traceFlags: 1 });
    expect(row.parentSpanContext).toEqual({
      traceId: FIXED_IDS.trace_s1_u1,
      spanId: FIXED_IDS.turn_s1_u1,
      traceFlags: 1,
      isRemote: false,
    });
    expect(row.startTime).toEqual([1_786_539_601, 1_000]);
    // observed_at + 1,500 ms (the reported duration), not settled_at
    expect(row.endTime).toEqual([1_786_539_602, 500_001_000]);
    expect(row.duration).toEqual([1, 500_000_000]);
    expect(row.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(row.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.agent.name': 'explore',
      'gen_ai.agent.id': 'agent-7',
      'gen_ai.agent.description': 'look into it',
      'gen_ai.request.model': 'claude-sonnet-4',
      'gen_ai.conversation.id': 's1',
      'subagent_context.task_id': 't1',
      'subagent_context.task_session_id': 's1',
      'subagent_context.turn_id': 'u1',
      'subagent_context.tool_call_id': 'a',
      'subagent_context.agent_execution_id': 'e1',
      'subagent_context.parent_tool_call_id': '',
      'subagent_context.child_session_id': 'child-1',
      'subagent_context.source': 'backfill',
      'subagent_context.agent_status': 'completed',
      'subagent_context.tool_status': 'complete',
      'subagent_context.is_async': true,
      'subagent_context.total_tokens': 1_234,
      'subagent_context.tool_use_count': 0,
      'subagent_context.duration_ms': 1_500,
      'subagent_context.settled': true,
    });
    expect(row.links).toEqual([]);
    expect(row.events).toEqual([]);
    expect(row.ended).toBe(true);
    expect(row.resource).toBe(resource);
    expect(row.instrumentationScope).toBe(scope);
    expect([row.droppedAttributesCount, row.droppedEventsCount, row.droppedLinksCount]).toEqual([0, 0, 0]);
  });

  it('R3-6: a row with every nullable column NULL carries none of their attributes (never 0, never ""), an unknown execution none either', () => {
    const bare = node('a', { subagent_type: null, agent_execution_id: 'unknown' });
    const row = turnSpans(turn([bare]), options())[1]!;
    expect(row.name).toBe('invoke_agent');
    expect(row.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 's1',
      'subagent_context.task_id': 't1',
      'subagent_context.task_session_id': 's1',
      'subagent_context.turn_id': 'u1',
      'subagent_context.tool_call_id': 'a',
      'subagent_context.source': 'live',
      'subagent_context.is_async': false,
      'subagent_context.settled': true,
    });
    // no duration: the span ends at settled_at
    expect(row.endTime).toEqual([1_786_539_609, 9_000]);
    expect(row.spanContext().spanId).toBe(rowSpanIdOf('s1', 'unknown', 'a'));
  });

  it('R3-10, R4-9: the turn span: named turn, the identity attributes, from started_at to completed_at, UNSET, no parent', () => {
    const spans = turnSpans(turn([node('a')]), options());
    const root = spans[0]!;
    expect(root.name).toBe('turn');
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(root.spanContext()).toEqual({ traceId: FIXED_IDS.trace_s1_u1, spanId: FIXED_IDS.turn_s1_u1, traceFlags: 1 });
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toEqual({
      'gen_ai.conversation.id': 's1',
      'subagent_context.task_id': 't1',
      'subagent_context.task_session_id': 's1',
      'subagent_context.turn_id': 'u1',
    });
    expect(root.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(root.startTime).toEqual([1_786_539_600, 500_000_000]);
    expect(root.endTime).toEqual([1_786_539_630, 0]);
    expect(root.duration).toEqual([29, 500_000_000]);
    // a turn the host did not record: the trace of the session's rows without a turn, no turn_id
    const none = turnSpans(turn([node('a')], { turn_id: null }), options());
    expect(none[0]!.spanContext().traceId).toBe(FIXED_IDS.trace_s1_none);
    expect(none[0]!.spanContext().spanId).toBe(turnSpanIdOf('s1', ''));
    expect(none[0]!.attributes[ns('turn_id')]).toBeUndefined();
    expect(none[1]!.attributes[ns('turn_id')]).toBeUndefined();
    expect(none[1]!.spanContext().traceId).toBe(traceIdOf('s1', ''));
  });

  it('R4-9: the turn ends at completed_at, or at its latest subagent when that is later or the turn is still running', () => {
    const late = node('a', { duration_ms: 60_000 }); // ends 13:01:01.000001
    const rootEnd = (change: Partial<TurnTree>, rows = [late]) => turnSpans(turn(rows, change), options())[0]!.endTime;
    expect(rootEnd({})).toEqual([1_786_539_661, 1_000]);
    expect(rootEnd({ completed_at: '2026-08-12T13:05:00.000000Z' })).toEqual([1_786_539_900, 0]);
    expect(rootEnd({ completed_at: null })).toEqual([1_786_539_661, 1_000]);
    // the latest of several rows, whatever their order
    const rows = [node('b'), late, node('c', { settled_at: '2026-08-12T13:00:20.000000Z' })];
    expect(rootEnd({ completed_at: null }, rows)).toEqual([1_786_539_661, 1_000]);
    expect(rootEnd({ completed_at: null }, [late, node('b')])).toEqual([1_786_539_661, 1_000]);
    // a span never ends before it starts: settled_at before observed_at gives a zero-length span
    const back = turnSpans(turn([node('a', { settled_at: '2026-08-12T13:00:00.000000Z' })]), options())[1]!;
    expect(back.endTime).toEqual(back.startTime);
    expect(back.duration).toEqual([0, 0]);
  });

  it('R3-5, R4-9: a failed status makes the span ERROR, naming the column and value, with error.type; tool_status first', () => {
    const cases: [Partial<TreeNode>, string | undefined][] = [
      [{ tool_status: 'error' }, 'tool_status error'],
      [{ tool_status: 'failed', agent_status: 'cancelled' }, 'tool_status failed'],
      [{ tool_status: 'complete', agent_status: 'cancelled' }, 'agent_status cancelled'],
      [{ tool_status: null, agent_status: 'failed' }, 'agent_status failed'],
      [{ tool_status: 'complete', agent_status: 'completed' }, undefined],
      [{ tool_status: 'ERROR' }, undefined],
    ];
    for (const [change, message] of cases) {
      const row = turnSpans(turn([node('a', change)]), options())[1]!;
      if (message === undefined) {
        expect(row.status, JSON.stringify(change)).toEqual({ code: SpanStatusCode.UNSET });
        expect(row.attributes['error.type'], JSON.stringify(change)).toBeUndefined();
      } else {
        expect(row.status, JSON.stringify(change)).toEqual({ code: SpanStatusCode.ERROR, message });
        expect(row.attributes['error.type'], JSON.stringify(change)).toBe(message.split(' ')[1]);
      }
    }
  });

  it('R4-3: a metric that is not an integer in range is left out and counted by column; a reported 0 is kept', () => {
    const unreadable = new Map<string, number>();
    const odd = node('a', { total_tokens: 1.5, tool_use_count: -1, duration_ms: 2 ** 53 });
    const odd2 = node('b', { total_tokens: -3, tool_use_count: 0, duration_ms: 0 });
    // a NULL metric is not reported, never unreadable (counted nowhere)
    const spans = turnSpans(turn([odd, odd2, node('c')]), options({ unreadable }));
    const a = byCall(spans, 'a');
    expect(a.attributes[ns('total_tokens')]).toBeUndefined();
    expect(a.attributes[ns('tool_use_count')]).toBeUndefined();
    expect(a.attributes[ns('duration_ms')]).toBeUndefined();
    // an unreadable duration is no length either: the span ends at settled_at
    expect(a.endTime).toEqual([1_786_539_609, 9_000]);
    const b = byCall(spans, 'b');
    expect(b.attributes[ns('tool_use_count')]).toBe(0);
    expect(b.attributes[ns('duration_ms')]).toBe(0);
    expect(b.endTime).toEqual(b.startTime);
    // counted once per value (the end's own reading of duration_ms counts nothing)
    expect(Object.fromEntries(unreadable)).toEqual({ total_tokens: 2, tool_use_count: 1, duration_ms: 1 });
    // without a map, nothing is counted and nothing fails
    expect(turnSpans(turn([odd]), options())).toHaveLength(2);
  });

  it('R4-9: a duration that would end the span past 2262-04-11 (int64 nanoseconds) ends it at settled_at; one ending exactly there is kept', () => {
    const at = (observed: string, duration: number) =>
      turnSpans(
        turn([node('a', { observed_at: observed, settled_at: '2262-04-11T23:47:16.000000Z', duration_ms: duration })], {
          completed_at: null,
        }),
        options(),
      )[1]!.endTime;
    expect(at('2262-04-11T23:47:15.854775Z', 1_000)).toEqual([9_223_372_036, 854_775_000]);
    expect(at('2262-04-11T23:47:15.854776Z', 1_000)).toEqual([9_223_372_036, 0]);
  });

  it('R4-9: an instant before 1970 is whole seconds below it plus a positive fraction', () => {
    const row = turnSpans(
      turn([node('a', { observed_at: '1969-12-31T23:59:58.250000Z', settled_at: '1969-12-31T23:59:59.000000Z' })], {
        started_at: '1969-12-31T23:59:58.000000Z',
        completed_at: null,
      }),
      options(),
    );
    expect(row[1]!.startTime).toEqual([-2, 250_000_000]);
    expect(row[1]!.endTime).toEqual([-1, 0]);
    expect(row[1]!.duration).toEqual([0, 750_000_000]);
    expect(row[0]!.startTime).toEqual([-2, 0]);
  });

  it('R3-10: rows not settled are left out (their children keep their place under them), unless open spans are asked for', () => {
    const child = node('c', { parent_tool_call_id: 'p' });
    const open = node('p', { settled_at: null, children: [child] });
    const spans = turnSpans(turn([open]), options());
    expect(spans.map((s) => s.name)).toEqual(['turn', 'invoke_agent explore']);
    expect(spans[1]!.attributes[ns('tool_call_id')]).toBe('c');
    expect(spans[1]!.parentSpanContext!.spanId).toBe(rowSpanIdOf('s1', 'e1', 'p'));
    const all = turnSpans(turn([open]), options({ openSpans: true }));
    const p = byCall(all, 'p');
    expect(p.attributes[ns('settled')]).toBe(false);
    expect(p.endTime).toEqual(p.startTime);
    expect(all.map((s) => s.attributes[ns('tool_call_id')] ?? 'turn')).toEqual(['turn', 'p', 'c']);
    // nothing settled: no spans at all, not even the turn's
    expect(turnSpans(turn([node('x', { settled_at: null })]), options())).toEqual([]);
  });

  it('R3-10: parents before children, siblings in order, each under its parent; an orphan is marked', () => {
    const tree = turn([
      node('a', { children: [node('a1', { parent_tool_call_id: 'a' }), node('a2', { parent_tool_call_id: 'a' })] }),
      node('b', { orphan: true, parent_tool_call_id: 'gone' }),
      node('c', { orphan: false }),
    ]);
    const spans = turnSpans(tree, options());
    expect(spans.map((s) => s.attributes[ns('tool_call_id')] ?? 'turn')).toEqual(['turn', 'a', 'a1', 'a2', 'b', 'c']);
    expect(byCall(spans, 'a2').parentSpanContext!.spanId).toBe(rowSpanIdOf('s1', 'e1', 'a'));
    expect(byCall(spans, 'b').parentSpanContext!.spanId).toBe(FIXED_IDS.turn_s1_u1);
    expect(byCall(spans, 'b').attributes[ns('orphan')]).toBe(true);
    expect(byCall(spans, 'c').attributes[ns('orphan')]).toBeUndefined();
    expect(byCall(spans, 'a').attributes[ns('orphan')]).toBeUndefined();
  });

  it('R4-3: an observation that is not an RFC 3339 instant fails the turn, naming the value', () => {
    expect(() => turnSpans(turn([node('a', { observed_at: 'garbage' })]), options())).toThrow(
      'not an RFC 3339 instant: "garbage"',
    );
  });
});
