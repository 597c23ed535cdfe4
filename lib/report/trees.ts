import { TABLE } from '../columns.js';
import type { Queryable, Row } from '../db/database.js';
import { readTimestamp } from '../store/read.js';
import { formatCanonical, type Micros, parseStoredTimestamp } from '../time.js';
import type { TreeNode, TurnTree } from './document.js';

/*
 * The fan-out tree reader of the shared query layer (docs/report.md, R3-9, R3-10): one
 * catalog read and one statement give every selected turn with its rows; nesting happens here, in
 * memory, over rows already read (never a query per row). The report's `--trees N`, the page and
 * the OTLP export all read trees through this file.
 *
 * A turn is the rows of one (task_session_id, turn_id); rows without a turn form one turn per
 * session (turn_id null). Works on a store the host activated itself (R3-3): it reads only the
 * host's columns of task_session_subagents (never last_observed_at) and needs no object of ours.
 */

/** Where an incremental export stopped: the last turn it delivered, in `changed` order. */
export interface TurnPosition {
  /** the turn's newest updated_at (any writer's clock: ours or the host's) */
  changed: Micros;
  task_session_id: string;
  /** '' for the rows without a turn */
  turn_key: string;
}

export interface TreeFilter {
  /** rows observed at or after this instant */
  since?: Micros;
  /** rows observed before this instant */
  until?: Micros;
  task?: string;
  session?: string;
  /** at most this many turns: the most recent (order `recent`) or the next ones (order `changed`) */
  limit?: number;
  /**
   * `recent` (default): newest turn first, by its first observation. `changed`: the incremental
   * export's order, oldest change first, by (the turn's newest updated_at, session, turn).
   */
  order?: 'recent' | 'changed';
  /** `changed` order: only turns after this position */
  after?: TurnPosition;
  /**
   * `changed` order: only turns whose newest updated_at is at or before this instant (a settle
   * lag: a write that commits late cannot land behind a position already stored).
   */
  changedUntil?: Micros;
}

export interface ChangedTurn {
  tree: TurnTree;
  position: TurnPosition;
}

/** The rows' columns a tree needs, in the host's shape only (R3-3). */
const ROW_COLUMNS = [
  'task_session_id',
  'task_id',
  'turn_id',
  'tool_call_id',
  'agent_execution_id',
  'parent_tool_call_id',
  'subagent_type',
  'description',
  'agent_id',
  'child_session_id',
  'model',
  'agent_status',
  'tool_status',
  'is_async',
  'source',
  'total_tokens',
  'tool_use_count',
  'duration_ms',
  'observed_at',
  'settled_at',
] as const;

/** Which optional host columns task_session_turns has (the minimal fixture has neither). */
async function turnTimeColumns(db: Queryable): Promise<{ started: boolean; completed: boolean }> {
  const columns = await db.query<{ column_name: string }>(db.dialect.columnDefaults, ['task_session_turns']);
  const names = new Set(columns.map((c) => c.column_name));
  return { started: names.has('started_at'), completed: names.has('completed_at') };
}

interface Statement {
  sql: string;
  params: unknown[];
}

function treeStatement(db: Queryable, filter: TreeFilter, host: { started: boolean; completed: boolean }): Statement {
  const d = db.dialect;
  const params: unknown[] = [];
  const bindTime = (us: Micros) => {
    params.push(formatCanonical(us));
    return d.timestampParam(params.length);
  };
  const bind = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  if (filter.since !== undefined) where.push(`${d.comparable('observed_at')} >= ${bindTime(filter.since)}`);
  if (filter.until !== undefined) where.push(`${d.comparable('observed_at')} < ${bindTime(filter.until)}`);
  if (filter.task !== undefined) where.push(`task_id = ${bind(filter.task)}`);
  if (filter.session !== undefined) where.push(`task_session_id = ${bind(filter.session)}`);

  const changedOrder = filter.order === 'changed';
  const turnWhere: string[] = [];
  if (changedOrder && filter.after) {
    const changed = bindTime(filter.after.changed);
    const session = bind(filter.after.task_session_id);
    const turn = bind(filter.after.turn_key);
    turnWhere.push(
      `(turn_changed > ${changed} OR (turn_changed = ${changed} AND (task_session_id > ${session} OR (task_session_id = ${session} AND turn_key > ${turn}))))`,
    );
  }
  if (changedOrder && filter.changedUntil !== undefined)
    turnWhere.push(`turn_changed <= ${bindTime(filter.changedUntil)}`);
  const rank = changedOrder ? 'turn_changed, task_session_id, turn_key' : 'turn_first DESC, task_session_id, turn_key';
  const limit = filter.limit === undefined ? '' : `WHERE turn_rank <= ${bind(filter.limit)}`;

  // Host times are read raw and parsed in JavaScript: the host's SQLite text may carry any offset.
  const hostStarted = host.started ? 'h.started_at' : 'NULL';
  const hostCompleted = host.completed ? 'h.completed_at' : 'NULL';
  const sql = `WITH r AS (
  SELECT ${ROW_COLUMNS.filter((c) => c !== 'parent_tool_call_id').join(', ')},
    NULLIF(parent_tool_call_id, '') AS parent_tool_call_id,
    COALESCE(turn_id, '') AS turn_key,
    ${d.comparable('observed_at')} AS observed_c,
    COALESCE(${d.comparable('settled_at')}, ${d.comparable('observed_at')}) AS end_c,
    ${d.comparable('updated_at')} AS updated_c
  FROM ${TABLE}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
), w AS (
  SELECT r.*,
    MIN(observed_c) OVER turn AS turn_first,
    MAX(end_c) OVER turn AS turn_last,
    MAX(updated_c) OVER turn AS turn_changed
  FROM r WINDOW turn AS (PARTITION BY task_session_id, turn_key)
), ranked AS (
  SELECT w.*, DENSE_RANK() OVER (ORDER BY ${rank}) AS turn_rank
  FROM w${turnWhere.length ? ` WHERE ${turnWhere.join(' AND ')}` : ''}
)
SELECT ranked.*, ${hostStarted} AS host_started_at, ${hostCompleted} AS host_completed_at
FROM ranked LEFT JOIN task_session_turns h ON h.id = ranked.turn_id AND h.task_session_id = ranked.task_session_id
${limit}
ORDER BY turn_rank, observed_c, tool_call_id, agent_execution_id`;
  return { sql, params };
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const integer = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function toNode(row: Row): TreeNode {
  return {
    task_session_id: String(row.task_session_id),
    tool_call_id: String(row.tool_call_id),
    agent_execution_id: String(row.agent_execution_id),
    parent_tool_call_id: text(row.parent_tool_call_id),
    subagent_type: text(row.subagent_type),
    description: text(row.description),
    agent_id: text(row.agent_id),
    child_session_id: text(row.child_session_id),
    model: text(row.model),
    agent_status: text(row.agent_status),
    tool_status: text(row.tool_status),
    is_async: Number(row.is_async) === 1,
    // The host's column has no CHECK; its writer and ours store only these two.
    source: String(row.source) as TreeNode['source'],
    total_tokens: integer(row.total_tokens),
    tool_use_count: integer(row.tool_use_count),
    duration_ms: integer(row.duration_ms),
    observed_at: readTimestamp(row.observed_at)!,
    settled_at: readTimestamp(row.settled_at),
    children: [],
  };
}

const nodeKey = (executionId: string, toolCallId: string) => `${executionId}\u0000${toolCallId}`;

/**
 * Nests one turn's nodes (in observation order) under their parents: the parent is the row with
 * `tool_call_id = parent_tool_call_id` in the same session and execution. A node whose parent is
 * not among the turn's rows, or whose parent chain loops back to it, stays top-level and is marked
 * `orphan` (its parent_tool_call_id kept as stored).
 */
export function nestTurn(nodes: readonly TreeNode[]): TreeNode[] {
  const byKey = new Map(nodes.map((n) => [nodeKey(n.agent_execution_id, n.tool_call_id), n]));
  const parentOf = (n: TreeNode): TreeNode | undefined =>
    n.parent_tool_call_id === null ? undefined : byKey.get(nodeKey(n.agent_execution_id, n.parent_tool_call_id));
  const top: TreeNode[] = [];
  const placed = new Set<TreeNode>();
  for (const node of nodes) {
    const parent = parentOf(node);
    if (parent === undefined) {
      if (node.parent_tool_call_id !== null) node.orphan = true;
      top.push(node);
      placed.add(node);
    }
  }
  // Attach children breadth-first from the top: whatever is never reached sits on a loop.
  const children = new Map<TreeNode, TreeNode[]>();
  for (const node of nodes) {
    const parent = parentOf(node);
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), node]);
  }
  const queue = [...top];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const child of children.get(node) ?? []) {
      node.children.push(child);
      placed.add(child);
      queue.push(child);
    }
  }
  for (const node of nodes) {
    if (placed.has(node)) continue;
    // On a loop: break it here, at the loop's earliest-observed row.
    node.orphan = true;
    top.push(node);
    placed.add(node);
    const stack = [node];
    while (stack.length > 0) {
      const current = stack.pop()!;
      for (const child of children.get(current) ?? []) {
        if (placed.has(child)) continue;
        current.children.push(child);
        placed.add(child);
        stack.push(child);
      }
    }
  }
  return top;
}

function readTurns(rows: readonly Row[]): ChangedTurn[] {
  const turns: ChangedTurn[] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start + 1;
    while (end < rows.length && rows[end]!.turn_rank === rows[start]!.turn_rank) end++;
    const first = rows[start]!;
    const nodes = rows.slice(start, end).map(toNode);
    const hostStarted = readTimestamp(first.host_started_at);
    const hostCompleted = readTimestamp(first.host_completed_at);
    const hasHostTimes = first.host_started_at !== null && first.host_started_at !== undefined;
    turns.push({
      tree: {
        task_id: String(first.task_id),
        task_session_id: String(first.task_session_id),
        turn_id: text(first.turn_id),
        started_at: hostStarted ?? readTimestamp(first.turn_first)!,
        // The host's completed_at where it records its turns (null: still running); else the
        // span of the rows' observations: the latest settled_at or observed_at.
        completed_at: hasHostTimes ? hostCompleted : readTimestamp(first.turn_last),
        subagents: nestTurn(nodes),
      },
      position: {
        changed: parseChanged(first.turn_changed),
        task_session_id: String(first.task_session_id),
        turn_key: String(first.turn_key),
      },
    });
    start = end;
  }
  return turns;
}

function parseChanged(value: unknown): Micros {
  const us = value === null || value === undefined ? undefined : parseStoredTimestamp(String(value));
  if (us === undefined) throw new Error(`${TABLE}: unreadable updated_at ${JSON.stringify(value)}`);
  return us;
}

/** Turns with their rows, one statement (plus one catalog read), on either dialect. */
export async function readChangedTurns(db: Queryable, filter: TreeFilter): Promise<ChangedTurn[]> {
  const host = await turnTimeColumns(db);
  const statement = treeStatement(db, filter, host);
  return readTurns(await db.query(statement.sql, statement.params));
}

/** The selected turns' fan-out trees (R3-9): newest first unless `order` says otherwise. */
export async function readTurnTrees(db: Queryable, filter: TreeFilter = {}): Promise<TurnTree[]> {
  return (await readChangedTurns(db, filter)).map((t) => t.tree);
}
