import type { TreeNode } from '../../lib/report/document.js';

/** A tree node (a stored row as the tree reader gives it) with every figure unreported; `change` sets the rest. */
export function treeNode(change: Partial<TreeNode> & { tool_call_id: string; observed_at: string }): TreeNode {
  return {
    task_session_id: 's1',
    agent_execution_id: 'e1',
    parent_tool_call_id: null,
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
    settled_at: change.observed_at,
    children: [],
    ...change,
  };
}
