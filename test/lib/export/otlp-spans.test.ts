import { resourceFromAttributes } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { rowSpanIdOf, turnSpanIdOf } from '../../../lib/export/otlp/ids.js';
import { turnSpans } from '../../../lib/export/otlp/spans.js';
import type { TreeNode, TurnTree } from '../../../lib/report/document.js';

/*
 * R4-4: span building has no depth or width limit (an explicit stack, not recursion), checked on
 * trees of the sizes the rule names, built here directly (the tree reader's own cost and limits
 * are lib/report's, tested there).
 */

const AT = '2026-08-12T13:00:02.000001Z';

function node(i: number, parent: string | null): TreeNode {
  return {
    task_session_id: 's1',
    tool_call_id: `c${i}`,
    agent_execution_id: 'e1',
    parent_tool_call_id: parent,
    subagent_type: 'explore',
    description: null,
    model: null,
    agent_status: null,
    tool_status: null,
    is_async: false,
    source: 'live',
    total_tokens: null,
    tool_use_count: null,
    duration_ms: null,
    observed_at: AT,
    settled_at: AT,
    children: [],
  };
}

function tree(n: number, shape: 'chain' | 'width'): TurnTree {
  const nodes = [node(0, null)];
  for (let i = 1; i < n; i++) {
    const parent = shape === 'chain' ? nodes[i - 1]! : nodes[0]!;
    const child = node(i, parent.tool_call_id);
    parent.children.push(child);
    nodes.push(child);
  }
  return {
    task_id: 't1',
    task_session_id: 's1',
    turn_id: 'u1',
    started_at: AT,
    completed_at: null,
    subagents: [nodes[0]!],
  };
}

const OPTIONS = { resource: resourceFromAttributes({}), scope: { name: 'subagent-context' }, openSpans: false };

describe('R4-4 span building', () => {
  it.each([
    ['chain', 100_000],
    ['width', 30_000],
  ] as const)(
    'R4-4: a %s of %i subagents gives every span, each under its parent',
    (shape, n) => {
      const spans = turnSpans(tree(n, shape), OPTIONS);
      expect(spans).toHaveLength(n + 1);
      expect(spans[0]!.spanContext().spanId).toBe(turnSpanIdOf('s1', 'u1'));
      const id = (i: number) => rowSpanIdOf('s1', 'e1', `c${i}`);
      const parentOf = new Map(spans.map((s) => [s.spanContext().spanId, s.parentSpanContext?.spanId]));
      expect(parentOf.get(id(0))).toBe(turnSpanIdOf('s1', 'u1'));
      for (const i of [1, 2, n >> 1, n - 1]) expect(parentOf.get(id(i))).toBe(id(shape === 'chain' ? i - 1 : 0));
    },
    300_000, // seconds on an idle machine; the shared test machine is often far slower
  );
});
