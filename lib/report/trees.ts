import { isAsyncCondition, TABLE } from '../columns.js';
import type { Queryable, Row } from '../db/database.js';
import { COST_SOURCES, type CostSource, USAGE_COUNT_FIELDS } from '../producer/usage/run-usage.js';
import { readTimestamp } from '../store/read.js';
import { USAGE_KEY, USAGE_TABLE, USAGE_WRITTEN_AT } from '../store/usage-table.js';
import { formatCanonical, formatRfc3339, MIN_INSTANT, type Micros, parseStoredTimestamp } from '../time.js';
import { METRIC_COLUMNS, type NodeUsage, type TreeNode, type TurnTree, type UsageReadColumn } from './document.js';
import { compareCodePoints } from './sort.js';
import { METRIC_RANGE, unreadableFlag } from './sql.js';

/*
 * The fan-out tree reader of the shared query layer (docs/report.md, R3-9, R3-10, docs/otlp.md): one
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
   * `recent` (default): the turns with the most recent activity first, by their rows' latest
   * observed_at (R4-10: today's live rows show first, whenever their turn began). `changed`: the incremental
   * export's order, oldest change first, by (the turn's newest updated_at, session, turn).
   */
  order?: 'recent' | 'changed';
  /** `changed` order: only turns after this position */
  after?: TurnPosition;
  /** `changed` order: only turns whose newest updated_at is after this instant (a lookback start) */
  changedAfter?: Micros;
  /**
   * `changed` order: only turns whose newest updated_at is at or before this instant (a settle
   * lag: a write that commits late cannot land behind a position already stored).
   */
  changedUntil?: Micros;
  /**
   * R6-7: also read each row's run usage (task_session_subagent_usage, one LEFT JOIN on the key)
   * into its node's `usage`. Only for a store that has the table (isUsageTable): the caller checks once.
   */
  withUsage?: boolean;
  /**
   * R6-7, `changed` order with `withUsage`: a usage row's written_at (our writer's clock) is a
   * change of its turn, so usage written after the turn was sent lists it again. Only where the
   * table has the column (USAGE_WRITTEN_AT).
   */
  usageChanges?: boolean;
}

/**
 * A turn in `changed` order, with how many of its rows' times could not be read (R4-3): an
 * unreadable updated_at places the turn by its other times, an unreadable settled_at reads as not
 * settled, a row whose observed_at is unreadable is left out of the turn's tree (it has no place in
 * time), its other rows are not (issue 48).
 */
export interface ListedTurn extends TurnPosition {
  unreadable: { updated_at: number; settled_at: number; observed_at: number };
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

/** Binds parameters in order: `$n` for values, the dialect's cast for instants. */
function binder(db: Queryable) {
  const params: unknown[] = [];
  return {
    params,
    time: (us: Micros) => {
      params.push(formatCanonical(us));
      return db.dialect.timestampParam(params.length);
    },
    value: (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/** R3-5's row filters (observed_at, task, session) as conditions on the table's columns. */
function rowConditions(db: Queryable, filter: TreeFilter, bind: ReturnType<typeof binder>, alias = ''): string[] {
  const d = db.dialect;
  const where: string[] = [];
  const observed = d.comparable(`${alias}observed_at`);
  if (filter.since !== undefined) where.push(`${observed} >= ${bind.time(filter.since)}`);
  if (filter.until !== undefined) where.push(`${observed} < ${bind.time(filter.until)}`);
  if (filter.task !== undefined) where.push(`${alias}task_id = ${bind.value(filter.task)}`);
  if (filter.session !== undefined) where.push(`${alias}task_session_id = ${bind.value(filter.session)}`);
  return where;
}

const whereClause = (conditions: readonly string[]) => (conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '');

/** R6-1: a count or cost is a non-negative safe integer; `complete` 0 or 1. */
const USAGE_RANGE = [0, Number.MAX_SAFE_INTEGER] as const;
const USAGE_INTEGERS = [...USAGE_COUNT_FIELDS, 'cost_subcents'] as const;

/** R6-7: a row's usage row, found by the subagent key (the usage table's primary key). */
const usageJoin = (on: string) =>
  `LEFT JOIN ${USAGE_TABLE} u ON ${USAGE_KEY.map((c) => `u.${c} = ${on}.${c}`).join(' AND ')}`;

/**
 * R6-7: the usage columns (`usage_*`), each readable value or NULL, and a `uu_*` flag for each
 * stored value that is not readable (R4-3, as the metrics' u_* flags); `usage_row`: a row exists.
 */
function usageSelect(db: Queryable): string {
  const d = db.dialect;
  const read: [string, string][] = [
    ...USAGE_INTEGERS.map((c): [string, string] => [c, d.readableInteger(`u.${c}`, ...USAGE_RANGE)]),
    ['complete', d.readableInteger('u.complete', 0, 1)],
    ['observed_at', `CASE WHEN ${d.readableInstant('u.observed_at')} IS NOT NULL THEN u.observed_at END`],
  ];
  return [
    'CASE WHEN u.tool_call_id IS NULL THEN 0 ELSE 1 END AS usage_row',
    ...read.map(([c, expr]) => `${expr} AS usage_${c}, ${unreadableFlag(`u.${c}`, expr)} AS uu_${c}`),
    // text: read as stored; cost_source is checked against R6-1's words when the node is built
    'u.cost_source AS usage_cost_source',
    'u.model AS usage_model',
  ].join(', ');
}

/** The row columns a node needs, `r.`-qualified where the statement joins. */
function rowSelect(db: Queryable, alias: string): string {
  const d = db.dialect;
  const q = (c: string) => `${alias}${c}`;
  const metric = (c: string) => d.readableInteger(q(c), ...METRIC_RANGE);
  // R4-3: only readable values (lib/report/sql.ts METRIC_RANGE): an odd metric is null, an odd settled_at too.
  const readable: Partial<Record<(typeof ROW_COLUMNS)[number], string>> = {
    parent_tool_call_id: `NULLIF(${q('parent_tool_call_id')}, '')`,
    // R4-3: the totals' rule (columns.ts), so a tree's async node is one the totals count
    is_async: `CASE WHEN ${isAsyncCondition(q('is_async'))} THEN 1 ELSE 0 END`,
    total_tokens: metric('total_tokens'),
    tool_use_count: metric('tool_use_count'),
    duration_ms: metric('duration_ms'),
    settled_at: `CASE WHEN ${d.readableInstant(q('settled_at'))} IS NOT NULL THEN ${q('settled_at')} END`,
  };
  return [
    ...ROW_COLUMNS.map((c) => (readable[c] === undefined ? q(c) : `${readable[c]} AS ${c}`)),
    // R4-3: which metrics held a value that is not readable (sql.ts's u_* columns), so the node can name them.
    ...METRIC_COLUMNS.map((c) => `${unreadableFlag(q(c), metric(c))} AS u_${c}`),
    `COALESCE(${q('turn_id')}, '') AS turn_key`,
    `${d.comparable(q('observed_at'))} AS observed_c`,
  ].join(', ');
}

/** Host times are read raw and parsed in JavaScript: the host's SQLite text may carry any offset. */
function hostTimes(host: { started: boolean; completed: boolean }): string {
  return `${host.started ? 'h.started_at' : 'NULL'} AS host_started_at, ${host.completed ? 'h.completed_at' : 'NULL'} AS host_completed_at`;
}

/**
 * `recent` order (the report's `--trees N`): one statement, the turn with the latest activity
 * (its newest observed_at: the host's column, R3-3) first (R4-10). R4-12: the turns are ranked
 * from a narrow grouping (session, turn, newest instant) and only the first N turns' rows are
 * read whole, through the table's task_session_id index: ranking every row (two windows over
 * the whole table's rows, descriptions and all) cost the page a second on SQLite.
 */
function recentStatement(db: Queryable, filter: TreeFilter, host: { started: boolean; completed: boolean }): Statement {
  const d = db.dialect;
  const bind = binder(db);
  // R4-3: a row whose observed_at is not an instant is in no tree (it has no place in time).
  const readable = (alias: string) => `${d.readableInstant(`${alias}observed_at`)} IS NOT NULL`;
  const turnWhere = [...rowConditions(db, filter, bind), readable('')];
  const limit = filter.limit === undefined ? '' : ` WHERE turn_rank <= ${bind.value(filter.limit)}`;
  const rowWhere = [...rowConditions(db, filter, bind, 'r.'), readable('r.')];
  const sql = `WITH turns AS (
  SELECT task_session_id, COALESCE(turn_id, '') AS turn_key, MAX(${d.comparable('observed_at')}) AS turn_last
  FROM ${TABLE}${whereClause(turnWhere)}
  GROUP BY task_session_id, COALESCE(turn_id, '')
), ranked AS (
  SELECT turns.*, ROW_NUMBER() OVER (ORDER BY turn_last DESC, ${d.byteOrder('task_session_id')}, ${d.byteOrder('turn_key')}) AS turn_rank FROM turns
), chosen AS (
  SELECT * FROM ranked${limit}
)
SELECT ${rowSelect(db, 'r.')}, c.turn_last, c.turn_rank, ${hostTimes(host)}${filter.withUsage ? `, ${usageSelect(db)}` : ''}
FROM chosen c JOIN ${TABLE} r ON r.task_session_id = c.task_session_id AND COALESCE(r.turn_id, '') = c.turn_key
LEFT JOIN task_session_turns h ON h.id = r.turn_id AND h.task_session_id = r.task_session_id
${filter.withUsage ? `${usageJoin('r')}\n` : ''}${whereClause(rowWhere).trim()}
ORDER BY c.turn_rank, observed_c, ${d.byteOrder('r.tool_call_id')}, ${d.byteOrder('r.agent_execution_id')}`;
  return { sql, params: bind.params };
}

/**
 * `changed` order, step 1: the next turns' keys and positions (one GROUP BY over the filtered
 * rows, no row bodies), so an export reads each row once however many pages it sends.
 */
function changedListStatement(db: Queryable, filter: TreeFilter): Statement {
  const d = db.dialect;
  const bind = binder(db);
  // R6-7: with usage changes, the rows are joined to their usage rows, so every column is qualified.
  const joined = filter.withUsage === true && filter.usageChanges === true;
  const r = joined ? 'r.' : '';
  const where = rowConditions(db, filter, bind, r);
  const turnWhere: string[] = [];
  if (filter.after) {
    const changed = bind.time(filter.after.changed);
    const session = bind.value(filter.after.task_session_id);
    const turn = bind.value(filter.after.turn_key);
    // The full order key, in byte order as ORDER BY below and comparePositions (export/position.ts) have it.
    const s = d.byteOrder('task_session_id');
    const k = d.byteOrder('turn_key');
    turnWhere.push(
      `(turn_changed > ${changed} OR (turn_changed = ${changed} AND (${s} > ${session} OR (task_session_id = ${session} AND ${k} > ${turn}))))`,
    );
  }
  if (filter.changedAfter !== undefined) turnWhere.push(`turn_changed > ${bind.time(filter.changedAfter)}`);
  if (filter.changedUntil !== undefined) turnWhere.push(`turn_changed <= ${bind.time(filter.changedUntil)}`);
  const limit = filter.limit === undefined ? '' : ` LIMIT ${bind.value(filter.limit)}`;
  // R4-3: a turn is placed by its newest readable updated_at; where none of its rows has one
  // (PostgreSQL infinity, SQLite 'garbage'), by its newest readable observed_at; where neither is
  // readable, at the first instant (0001-01-01), so the export reaches it at once, skips and names
  // it (its rows cannot be read) and moves on. An unreadable updated_at never stops the listing.
  const updated = d.readableInstant(`${r}updated_at`);
  const floor = bind.time(MIN_INSTANT);
  // Counted here, once per turn listed: the tree reader reads an unreadable settled_at as not settled.
  const unreadable = (c: string, readable: string) => `SUM(${unreadableFlag(`${r}${c}`, readable)}) AS unreadable_${c}`;
  const observed = d.readableInstant(`${r}observed_at`);
  const hostChanged = `COALESCE(MAX(${updated}), MAX(${observed}), ${floor})`;
  const counts = `unreadable_updated_at, unreadable_settled_at, unreadable_observed_at`;
  const grouped = `SELECT ${r}task_session_id AS task_session_id, COALESCE(${r}turn_id, '') AS turn_key,
    ${joined ? `${hostChanged} AS host_changed, MAX(${d.readableInstant(`u.${USAGE_WRITTEN_AT}`)}) AS usage_changed` : `${hostChanged} AS turn_changed`},
    ${unreadable('updated_at', updated)}, ${unreadable('settled_at', d.readableInstant(`${r}settled_at`))},
    ${unreadable('observed_at', observed)}
  FROM ${TABLE}${joined ? ` r ${usageJoin('r')}` : ''}${whereClause(where)}
  GROUP BY ${r}task_session_id, COALESCE(${r}turn_id, '')`;
  // R6-7 (docs/otlp.md#run-usage): usage written after the turn was sent moves the turn's
  // `changed` to its write (our writer's clock: `spend` sets observed_at to the row's own newest
  // observation, which does not move), so the turn is listed again and its changed spans sent.
  const turns = joined
    ? `SELECT task_session_id, turn_key, CASE WHEN usage_changed > host_changed THEN usage_changed ELSE host_changed END AS turn_changed, ${counts} FROM (
  ${grouped}
) g`
    : grouped;
  const sql = `SELECT task_session_id, turn_key, turn_changed, ${counts} FROM (
  ${turns}
) turns${whereClause(turnWhere)}
ORDER BY turn_changed, ${d.byteOrder('task_session_id')}, ${d.byteOrder('turn_key')}${limit}`;
  return { sql, params: bind.params };
}

const KEY_COLUMNS = [{ type: 'text' }, { type: 'text' }] as const;

/**
 * `changed` order, step 2: the rows of the given turns, one statement: the keys bound as one row
 * set (no bind-parameter limit), found through the turn and session indexes.
 */
function rowsForKeysStatement(
  db: Queryable,
  keys: readonly TurnPosition[],
  filter: TreeFilter,
  host: { started: boolean; completed: boolean },
): Statement {
  const d = db.dialect;
  const keyParams = d.bindRows(
    KEY_COLUMNS,
    keys.map((k) => [k.task_session_id, k.turn_key]),
  );
  const bind = binder(db);
  bind.params.push(...keyParams);
  // R4-3 (issue 48): a row whose observed_at is not an instant is left out, not its whole turn (as in `recent` order).
  const where = [...rowConditions(db, filter, bind, 'r.'), `${d.readableInstant('r.observed_at')} IS NOT NULL`];
  const usage = filter.withUsage
    ? { select: `, ${usageSelect(db)}`, join: `\n${usageJoin('r')}` }
    : { select: '', join: '' };
  const join = (on: string) => `SELECT ${rowSelect(db, 'r.')}, ${hostTimes(host)}${usage.select}
FROM k JOIN ${TABLE} r ON r.task_session_id = k.s AND ${on}
LEFT JOIN task_session_turns h ON h.id = r.turn_id AND h.task_session_id = r.task_session_id${usage.join}${whereClause(where)}`;
  const sql = `WITH k(s, t) AS (${d.selectRows(KEY_COLUMNS)})
${join('r.turn_id = k.t')}
UNION ALL
${join("r.turn_id IS NULL AND k.t = ''")}`;
  return { sql, params: bind.params };
}

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));
const integer = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

const COST_SOURCE_WORDS = new Set<string>(COST_SOURCES);

/**
 * R6-7: a row's usage as read (usageSelect), undefined without a usage row. A cost_source that is
 * none of R6-1's words is not read (named in `unreadable`), as a count out of range is.
 */
function toUsage(row: Row): NodeUsage | undefined {
  if (Number(row.usage_row) !== 1) return undefined;
  const unreadable: UsageReadColumn[] = [
    ...[...USAGE_INTEGERS, 'complete' as const, 'observed_at' as const].filter((c) => Number(row[`uu_${c}`]) === 1),
  ];
  const source = text(row.usage_cost_source);
  if (source !== null && !COST_SOURCE_WORDS.has(source)) unreadable.push('cost_source');
  const complete = integer(row.usage_complete);
  return {
    ...(Object.fromEntries(USAGE_INTEGERS.map((c) => [c, integer(row[`usage_${c}`])])) as Record<
      (typeof USAGE_INTEGERS)[number],
      number | null
    >),
    cost_source: source !== null && COST_SOURCE_WORDS.has(source) ? (source as CostSource) : null,
    model: text(row.usage_model),
    complete: complete === null ? null : complete === 1,
    observed_at: readTimestamp(row.usage_observed_at),
    ...(unreadable.length > 0 ? { unreadable } : {}),
  };
}

function toNode(row: Row): TreeNode {
  const unreadable = METRIC_COLUMNS.filter((c) => Number(row[`u_${c}`]) === 1);
  const usage = toUsage(row);
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
    ...(unreadable.length > 0 ? { unreadable } : {}),
    observed_at: readTimestamp(row.observed_at)!,
    settled_at: readTimestamp(row.settled_at),
    ...(usage ? { usage } : {}),
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
  // Attach children breadth-first from the top: whatever is never reached sits on a loop. Linear in
  // the rows (R4-4): a turn of 30,000 siblings or a chain 100,000 deep, with no recursion.
  const children = new Map<TreeNode, TreeNode[]>();
  for (const node of nodes) {
    const parent = parentOf(node);
    if (parent === undefined) continue;
    const list = children.get(parent);
    if (list) list.push(node);
    else children.set(parent, [node]);
  }
  const queue = [...top];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
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

/** An instant the statements above selected as readable (a NULL reads as the text "null": no instant). */
const instantOf = (value: unknown): Micros => {
  const us = parseStoredTimestamp(String(value));
  if (us === undefined) throw new Error(`${TABLE}: unreadable timestamp ${JSON.stringify(value)}`);
  return us;
};

/**
 * Observation order within a turn (AC-13): observed_at, tool_call_id, agent_execution_id, the ids
 * in code-point order as the statements' ORDER BY (byte order) and the export's positions have
 * them (R4-12), not in UTF-16 code-unit order. Each row's instant is parsed once (a turn can hold
 * 100,000 rows: R4-4), not once per comparison.
 */
function sortByObservation(rows: Row[]): Row[] {
  const keyed = rows.map((row) => ({
    row,
    at: instantOf(row.observed_at),
    tool: String(row.tool_call_id),
    exec: String(row.agent_execution_id),
  }));
  keyed.sort((a, b) =>
    a.at !== b.at ? (a.at < b.at ? -1 : 1) : compareCodePoints(a.tool, b.tool) || compareCodePoints(a.exec, b.exec),
  );
  return keyed.map((k) => k.row);
}

/** A host turn time (task_session_turns): undefined when it is not an instant; named for its table when strict. */
function hostTime(value: unknown, column: string, lenient: HostTimes | undefined): string | null | undefined {
  if (value === null || value === undefined) return null;
  const us = parseStoredTimestamp(String(value));
  if (us !== undefined) return formatRfc3339(us);
  if (lenient === undefined)
    throw new Error(`task_session_turns.${column}: unreadable timestamp ${JSON.stringify(value)}`);
  return undefined;
}

/**
 * The report's tally of turns whose host times are not instants (R4-3, issue 57 #3): such a turn
 * keeps its tree, dated by its rows (the first observation, the last activity), and is counted.
 */
export interface HostTimes {
  unreadable: number;
}

/**
 * One turn from its rows (any order): times from the host's turn where recorded, else from the rows.
 * `lenient` (the report): a host time that is not an instant costs that one figure, counted there;
 * without it (the export) the turn fails, named for task_session_turns (lib/export/unreadable.ts).
 */
function buildTurn(unsorted: Row[], lenient?: HostTimes): TurnTree {
  const rows = sortByObservation(unsorted);
  const first = rows[0]!;
  const nodes = rows.map(toNode);
  let last: Micros | undefined;
  for (const row of rows) {
    const end = instantOf(row.settled_at ?? row.observed_at);
    if (last === undefined || end > last) last = end;
  }
  let hasHostTimes = first.host_started_at !== null && first.host_started_at !== undefined;
  let started = hasHostTimes ? hostTime(first.host_started_at, 'started_at', lenient) : null;
  let completed = hasHostTimes ? hostTime(first.host_completed_at, 'completed_at', lenient) : null;
  if (started === undefined || completed === undefined) {
    lenient!.unreadable++;
    hasHostTimes = false;
    started = completed = null;
  }
  return {
    task_id: String(first.task_id),
    task_session_id: String(first.task_session_id),
    turn_id: text(first.turn_id),
    started_at: hasHostTimes ? started! : readTimestamp(first.observed_at)!,
    // The host's completed_at where it records its turns (null: still running); else the
    // span of the rows' observations: the latest settled_at or observed_at.
    completed_at: hasHostTimes ? completed : formatRfc3339(last!),
    subagents: nestTurn(nodes),
  };
}

const turnKeyOf = (session: unknown, turnKey: unknown) => `${String(session)}\u0000${String(turnKey)}`;

/**
 * `changed` order: the next turns (after `filter.after`, up to `filter.changedUntil`, at most
 * `filter.limit`) with their positions; one statement for the keys, one for their rows.
 */
export async function listChangedTurns(db: Queryable, filter: TreeFilter): Promise<ListedTurn[]> {
  const list = changedListStatement(db, filter);
  return (await db.query(list.sql, list.params)).map((r) => ({
    changed: instantOf(r.turn_changed),
    task_session_id: String(r.task_session_id),
    turn_key: String(r.turn_key),
    unreadable: {
      updated_at: Number(r.unreadable_updated_at),
      settled_at: Number(r.unreadable_settled_at),
      observed_at: Number(r.unreadable_observed_at),
    },
  }));
}

/** The given turns' trees, in the given order (a turn with no rows left is left out); one statement. */
export async function readTurnsAt(
  db: Queryable,
  keys: readonly TurnPosition[],
  filter: TreeFilter = {},
): Promise<ChangedTurn[]> {
  if (keys.length === 0) return [];
  const statement = rowsForKeysStatement(db, keys, filter, await turnTimeColumns(db));
  const byTurn = new Map<string, Row[]>();
  for (const row of await db.query(statement.sql, statement.params)) {
    const key = turnKeyOf(row.task_session_id, row.turn_key);
    const rows = byTurn.get(key);
    if (rows) rows.push(row);
    else byTurn.set(key, [row]);
  }
  return keys.flatMap((position) => {
    const rows = byTurn.get(turnKeyOf(position.task_session_id, position.turn_key));
    // the position alone (a ListedTurn key also carries its unreadable counts)
    const { changed, task_session_id, turn_key } = position;
    return rows ? [{ tree: buildTurn(rows), position: { changed, task_session_id, turn_key } }] : [];
  });
}

/** `changed` order in one call: listChangedTurns then readTurnsAt. */
export async function readChangedTurns(db: Queryable, filter: TreeFilter): Promise<ChangedTurn[]> {
  return readTurnsAt(db, await listChangedTurns(db, filter), filter);
}

/** The selected turns' fan-out trees (R3-9): newest first (`recent`), or in `changed` order. */
export async function readTurnTrees(
  db: Queryable,
  filter: TreeFilter = {},
  /** the report's tally: host turn times that are not instants cost the tree its host dates, never the report */
  hostTimes?: HostTimes,
): Promise<TurnTree[]> {
  if (filter.order === 'changed') return (await readChangedTurns(db, filter)).map((t) => t.tree);
  const host = await turnTimeColumns(db);
  const statement = recentStatement(db, filter, host);
  const rows = await db.query(statement.sql, statement.params);
  const trees: TurnTree[] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start + 1;
    while (end < rows.length && rows[end]!.turn_rank === rows[start]!.turn_rank) end++;
    trees.push(buildTurn(rows.slice(start, end), hostTimes));
    start = end;
  }
  return trees;
}
