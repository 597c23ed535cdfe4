import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../../../lib/report/document.js';
import { readTurnTrees } from '../../../lib/report/trees.js';
import { insertGeneratedTurn } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R4-4: the tree reader at any depth and width. Apart from trees.test.ts so that `npm run mutate
 * lib/report/trees.ts` can leave these out (8.5 s on SQLite alone, for every mutant they cover);
 * the nesting they walk is proved row by row there (nestTurn's property test).
 */

/** A tree's depth and node count, without recursion. */
function measure(top: readonly TreeNode[]): { depth: number; nodes: number } {
  let depth = 0;
  let nodes = 0;
  const stack = top.map((node) => ({ node, level: 1 }));
  while (stack.length > 0) {
    const { node, level } = stack.pop()!;
    nodes++;
    depth = Math.max(depth, level);
    for (const child of node.children) stack.push({ node: child, level: level + 1 });
  }
  return { depth, nodes };
}

describe.each(TARGETS)('fan-out trees of any depth and width on %s (R4-4)', (target) => {
  const t = useTestDatabase(target);

  it('R4-4: a parent chain 100,000 deep reads as one tree 100,000 deep, in order, with no recursion', async () => {
    await insertGeneratedTurn(t.db, 100_000, 'deep');
    const [tree, ...rest] = await readTurnTrees(t.db, { limit: 1 });
    expect(rest).toEqual([]);
    expect(tree!.subagents.map((n) => n.tool_call_id)).toEqual(['c0']);
    expect(measure(tree!.subagents)).toEqual({ depth: 100_000, nodes: 100_000 });
    let at = tree!.subagents[0]!;
    for (let i = 0; i < 5; i++) at = at.children[0]!;
    expect([at.tool_call_id, at.parent_tool_call_id, at.total_tokens]).toEqual(['c5', 'c4', 1005]);
  }, 600_000);

  it('R4-4: a turn of 30,000 subagents reads as 30,000 top-level nodes in observation order', async () => {
    await insertGeneratedTurn(t.db, 30_000, 'wide');
    const [tree] = await readTurnTrees(t.db);
    expect(measure(tree!.subagents)).toEqual({ depth: 1, nodes: 30_000 });
    expect(tree!.subagents.slice(0, 3).map((n) => n.tool_call_id)).toEqual(['c0', 'c1', 'c2']);
    expect(tree!.subagents.at(-1)!.tool_call_id).toBe('c29999');
  }, 600_000);
});
