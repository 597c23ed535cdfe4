import { isAsyncCondition, MAX_METRIC, TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { formatCanonical, type Micros } from '../time.js';
import type { StoreCatalog } from './catalog.js';
import { type GroupBy, METRIC_COLUMNS, type SortBy } from './document.js';
import {
  exactSum,
  partialExactSum,
  SPEND_ROW_FIGURES,
  SPEND_UNREADABLE,
  spendColumns,
  spendRowColumns,
  usageJoin,
} from './spend-sql.js';

/*
 * The report's statements (docs/report.md#the-statements). Every figure is computed here, in the
 * database, from the shared SQL layer; JavaScript only assembles rows into the document. Two
 * statements cover the whole report, totals and groups alike: the store's rows in scope are read
 * once per level (`lvl` 0 the totals, 1 the groups) with a group key that is never NULL
 * (`gnull` 1 marks the NULL key, so keys join with plain `=` on both dialects).
 */

export interface ReportScope {
  by: GroupBy | null;
  /**
   * R4-12: the groupings read in this one statement, level i + 1 being levels[i] (default: `by`
   * alone). The page's series (day, type, task) are one pass over the rows, not three.
   */
  levels?: readonly GroupBy[];
  /** rows observed in [since, until) */
  since?: Micros;
  until?: Micros;
  task?: string;
  session?: string;
  /** capture_since: sessions with activity before it are a lower bound (R3-6, AC-25) */
  captureSince?: Micros;
  /**
   * R4-12: level i + 1 keeps only its first cuts[i] groups in `sort` order (sort.ts), where a number
   * is given: only those are computed and returned, and `level_groups` says how many the level
   * has. Statement 1 only.
   */
  cuts?: readonly (number | undefined)[];
  /** the order the cuts keep (default subagents) */
  sort?: SortBy;
  /**
   * R4-12: level i + 1 is lean where lean[i] is true (the page's series, document.ts seriesGroup):
   * statement 1 gives it no percentiles nor distinct counts (NULL), statement 2 no lists.
   */
  lean?: readonly boolean[];
  /**
   * R6-6: a lean level i + 1 that statement 1 still ranks where ranked[i] is true (its percentiles
   * and distinct counts, not rolled up): the page's type level, for what one subagent of each type
   * spent. Statement 2 still lists nothing for it.
   */
  ranked?: readonly boolean[];
}

/** The groupings of a scope, level i + 1 being the i-th (lvl 0 is always the totals). */
export function levelsOf(scope: ReportScope): readonly GroupBy[] {
  return scope.levels ?? (scope.by === null ? [] : [scope.by]);
}

/** The levels (1-based) whose grouping is one of `kinds`. */
const levelsWhere = (scope: ReportScope, kinds: readonly GroupBy[]) =>
  levelsOf(scope).flatMap((by, i) => (kinds.includes(by) ? [i + 1] : []));

/** Bind parameters in order, as `$n` text. */
export class Params {
  readonly values: unknown[] = [];
  constructor(private readonly dialect: Dialect) {}
  text(value: string): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  instant(value: Micros): string {
    this.values.push(formatCanonical(value));
    return this.dialect.timestampParam(this.values.length);
  }
}

export interface Statement {
  sql: string;
  params: unknown[];
}

/** The group key of each row of `rows_in`, by --by (a day is its UTC day: levelRows). */
const GROUP_KEY: Record<Exclude<GroupBy, 'day'>, string> = {
  task: 'task_id',
  session: 'task_session_id',
  turn: "NULLIF(turn_id, '')",
  type: 'subagent_type',
  model: 'model',
};

/** Groups that are not made of sessions have no sessions (nor contexts, nor cost) of their own (R3-7). */
const SESSION_GROUPS: readonly GroupBy[] = ['task', 'session', 'turn'];

/** Level 0 and the levels whose groups are made of sessions; the others' groups have none. */
const sessionLevels = (scope: ReportScope) => [0, ...levelsWhere(scope, SESSION_GROUPS)];
const otherLevels = (scope: ReportScope) =>
  levelsWhere(
    scope,
    levelsOf(scope).filter((by) => !SESSION_GROUPS.includes(by)),
  );

export const TOP_LEVEL = "COALESCE(parent_tool_call_id, '') = ''";
const FAILED = "tool_status IN ('error', 'failed', 'cancelled')";

/**
 * R4-3 (docs/report.md#unreadable-values): the ranges a value must be in to be read. A metric is
 * the table's declared INTEGER (32-bit on PostgreSQL, the range ingest and the backfill write);
 * a cost, the ledger's INTEGER (a fraction rounded to one first, issue 57 #19). Every value read is then below 2^31, so no SUM over fewer than 2^32
 * rows can overflow a 64-bit integer on either dialect; a sum beyond 2^53 − 1 (what a JSON reader
 * keeps exactly) is NULL (`boundedSum`).
 */
export const METRIC_RANGE = [0, MAX_METRIC] as const;
export const COST_RANGE = [-2_147_483_648, 2_147_483_647] as const;

/** SUM(expr), NULL when it lies beyond ±(2^53 − 1): no JSON reader keeps it exactly. */
export const boundedSum = (expr: string) =>
  `CAST(CASE WHEN SUM(${expr}) BETWEEN -${Number.MAX_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER} THEN SUM(${expr}) END AS BIGINT)`;

/** A 0/1 column: `raw` holds a value and `readable` (its readable form) is NULL. */
export const unreadableFlag = (raw: string, readable: string) =>
  `CASE WHEN ${raw} IS NOT NULL AND ${readable} IS NULL THEN 1 ELSE 0 END`;

/**
 * Rows in scope (the CTEs every statement starts with; levelRows reads them once per level).
 * `rows_in` holds the rows of the --task/--session filter whose observed_at is in the window or
 * unreadable (R4-3: `in_window` 0, counted but in no window); its metrics and `observed` are the
 * readable values only (NULL otherwise), `u_*` flag the unreadable ones, `known` says the row's
 * session is in task_sessions (R4-7); with `lists` (the breakdown) only the keys, model, duration_ms
 * and, where a window or a day level reads it (`lists.observed`), observed.
 *
 * R4-12: `scanned` is the one CTE stored (the breakdown's only where it carries `observed`): each
 * row's readable values are computed once there.
 * `rows_in` is a view over it, read by each consumer: the rows once per level, stored, were
 * hundreds of MB written at 1M messages. The window and the day come from
 * `observed` (not again from observed_at), and the day only in the day level's rows: SQLite
 * repeats an expression wherever a flattened subquery's column is read, and its readable-instant
 * test costs ~10 µs; PostgreSQL's to_char, ~1 µs a row of every level that carried it.
 */
function scopedRows(
  d: Dialect,
  scope: ReportScope,
  p: Params,
  startedBefore?: string,
  lists?: { observed: boolean },
  usage = false,
): string {
  const where: string[] = [];
  if (scope.task !== undefined) where.push(`r.task_id = ${p.text(scope.task)}`);
  if (scope.session !== undefined) where.push(`r.task_session_id = ${p.text(scope.session)}`);
  const window: string[] = [];
  if (scope.since !== undefined) window.push(`observed >= ${p.instant(scope.since)}`);
  if (scope.until !== undefined) window.push(`observed < ${p.instant(scope.until)}`);
  const readable = (c: string) => d.readableInteger(`r.${c}`, ...METRIC_RANGE);
  const observed = d.readableInstant('r.observed_at');
  // R4-3: a settled_at that is not an instant is not a settlement (counted in u_settled_at).
  const settled = d.readableInstant('r.settled_at');
  const filtered = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  // the breakdown's (lists) rows: only the columns its groupings read (R4-12: SQLite computes every
  // column of a stored CTE, read or not, and an instant's readable test is a call per row)
  const listsObserved = lists?.observed === true || window.length > 0;
  const listRows = `SELECT r.task_session_id, r.task_id, r.turn_id, r.parent_tool_call_id, r.subagent_type, r.model,
    ${readable('duration_ms')} AS duration_ms${listsObserved ? `, ${observed} AS observed` : ''}
  FROM ${TABLE} r${filtered}`;
  const rows = lists
    ? listRows
    : `SELECT r.task_session_id, r.task_id, r.turn_id, r.agent_execution_id, r.parent_tool_call_id,
    r.subagent_type, r.model, r.tool_status, r.is_async, r.source, ${settled} AS settled_at,
    CASE WHEN r.settled_at IS NULL THEN 0 ELSE 1 END AS settled_given,
    ${METRIC_COLUMNS.map((c) => `${readable(c)} AS ${c}`).join(', ')},
    ${METRIC_COLUMNS.map((c) => `${unreadableFlag(`r.${c}`, readable(c))} AS u_${c}`).join(', ')},
    CASE WHEN ts.id IS NULL THEN 0 ELSE 1 END AS known, ${startedEarly(d, 'ts.started_at', startedBefore)} AS started_early,
    ${observed} AS observed${
      usage
        ? `,
    ${spendRowColumns(d)}`
        : ''
    }
  FROM ${TABLE} r LEFT JOIN task_sessions ts ON ts.id = r.task_session_id${usage ? ` ${usageJoin('r')}` : ''}${filtered}`;
  // R4-3: a settled_at given but not read; from the stored values (SQLite would run the readable test again)
  const unsettled = 'CASE WHEN settled_given = 1 AND settled_at IS NULL THEN 1 ELSE 0 END AS u_settled_at';
  const flags = lists ? '' : `${unsettled}, `;
  const windowed =
    window.length === 0
      ? `SELECT scanned.*, ${flags}1 AS in_window FROM scanned`
      : `SELECT scanned.*, ${flags}CASE WHEN observed IS NULL THEN 0 ELSE 1 END AS in_window FROM scanned WHERE observed IS NULL OR (${window.join(' AND ')})`;
  // R4-12: the breakdown's rows without `observed` are cheap to read again: each part reads the
  // table (0.18 -> 0.10 s for report --json's breakdown at 1M on PostgreSQL, 1.65 -> 1.40 s at
  // 10M on SQLite) rather than a stored copy of it
  const stored = lists === undefined || listsObserved ? 'MATERIALIZED' : 'NOT MATERIALIZED';
  return `scanned AS ${stored} (
  ${rows}
),
rows_in AS NOT MATERIALIZED (
  ${windowed}
)`;
}

/** The cut levels of a scope (ReportScope.cuts), each as [level, groups it keeps]. */
const cutsOf = (scope: ReportScope): [number, number][] =>
  (scope.cuts ?? []).flatMap((n, i) => (n === undefined ? [] : [[i + 1, n] as [number, number]]));

/**
 * A condition on a row `alias` with lvl, gnull, gkey: its level is not cut (`cutLevels`, not
 * empty), or its group is among `keys` (a SELECT of (lvl, gnull, gkey) rows).
 */
const inKept = (alias: string, cutLevels: readonly number[], keys: string) =>
  `(${alias}.lvl NOT IN (${cutLevels.join(', ')}) OR (${alias}.lvl, ${alias}.gnull, ${alias}.gkey) IN (${keys}))`;

/** Level 0 (the totals) and every grouping's level. */
const allLevels = (scope: ReportScope) => [0, ...levelsOf(scope).map((_, i) => i + 1)];

/** A lean level (ReportScope.lean); level 0 never is. */
const isLean = (scope: ReportScope, lvl: number) => lvl > 0 && scope.lean?.[lvl - 1] === true;
/** A lean level statement 1 computes without its costly figures (rolled up): lean and not ranked (R6-6). */
const isUnranked = (scope: ReportScope, lvl: number) => isLean(scope, lvl) && scope.ranked?.[lvl - 1] !== true;

/**
 * The figures of statement 1 that do not add up: [expression, column] each. R4-12: the distinct
 * executions and turns (NULL ids in neither, as 'unknown' and '') and the percentiles ride each
 * level's grouping: counted apart (groups of groups, a ranked derived table), each was one more
 * pass over every level's rows. A lean level has none of them (NULL): they were most of its
 * grouping's cost (a sort of its rows per figure and group; on PostgreSQL they also kept it from
 * hashing).
 */
const costlyFigures = (d: Dialect, usage: boolean): [expression: string, name: string][] => [
  ...RANKS.map((p): [string, string] => [d.nearestRank('duration_ms', p, RANKS), `p${p}`]),
  // R6-5: what one subagent spent, over the rows with priced usage
  ...(usage ? RANKS.map((p): [string, string] => [d.nearestRank('sp_cost', p, RANKS), `spend_p${p}`]) : []),
  // R5-4: the reported context at finish, ranked like the durations
  ...RANKS.map((p): [string, string] => [d.nearestRank('total_tokens', p, RANKS), `tokens_p${p}`]),
  ["COUNT(DISTINCT CASE WHEN agent_execution_id <> 'unknown' THEN agent_execution_id END)", 'executions'],
  ["COUNT(DISTINCT CASE WHEN turn_id <> '' THEN turn_id END)", 'turns'],
];

/** A level's columns of costlyFigures: NULL each for a lean level. */
const costlyColumns = (d: Dialect, lean: boolean, usage: boolean) =>
  costlyFigures(d, usage)
    .map(([expression, name]) => `${lean ? NONE : expression} AS ${name}`)
    .join(', ');

/**
 * A figure of statement 1 that adds up over a level's rows (the `plain` CTE): `fn(arg)` over a
 * group's rows, or `bounded`, boundedSum(arg). Partial groups (rolledUp) combine: a COUNT or SUM
 * by SUM, a MIN by MIN, a MAX by MAX, a bounded sum by the bounded sum of its partial sums.
 */
interface RowFigure {
  name: string;
  /** `exact`: spend-sql.ts exactSum, a sum of non-negative values up to 2^53 − 1 each, exact or NULL */
  fn: 'COUNT' | 'SUM' | 'MIN' | 'MAX' | 'bounded' | 'exact';
  arg: string;
}

const ROW_FIGURES: readonly RowFigure[] = [
  { name: 'subagents', fn: 'COUNT', arg: '*' },
  { name: 'top_level', fn: 'SUM', arg: `CASE WHEN ${TOP_LEVEL} THEN 1 ELSE 0 END` },
  { name: 'nested', fn: 'SUM', arg: `CASE WHEN ${TOP_LEVEL} THEN 0 ELSE 1 END` },
  { name: 'async', fn: 'SUM', arg: `CASE WHEN ${isAsyncCondition('is_async')} THEN 1 ELSE 0 END` },
  { name: 'live', fn: 'SUM', arg: "CASE WHEN source = 'live' THEN 1 ELSE 0 END" },
  { name: 'backfill', fn: 'SUM', arg: "CASE WHEN source = 'backfill' THEN 1 ELSE 0 END" },
  { name: 'settled', fn: 'SUM', arg: 'CASE WHEN settled_at IS NOT NULL THEN 1 ELSE 0 END' },
  { name: 'failed', fn: 'SUM', arg: `CASE WHEN ${FAILED} THEN 1 ELSE 0 END` },
  { name: 'tokens_sum', fn: 'bounded', arg: 'total_tokens' },
  { name: 'tokens_reported', fn: 'COUNT', arg: 'total_tokens' },
  { name: 'tokens_max', fn: 'MAX', arg: 'total_tokens' },
  { name: 'tool_uses_sum', fn: 'bounded', arg: 'tool_use_count' },
  { name: 'tool_uses_reported', fn: 'COUNT', arg: 'tool_use_count' },
  { name: 'duration_reported', fn: 'COUNT', arg: 'duration_ms' },
  { name: 'duration_max', fn: 'MAX', arg: 'duration_ms' },
  { name: 'unknown_execution', fn: 'SUM', arg: "CASE WHEN agent_execution_id = 'unknown' THEN 1 ELSE 0 END" },
  { name: 'first_observed', fn: 'MIN', arg: 'observed' },
  { name: 'last_observed', fn: 'MAX', arg: 'observed' },
  { name: 'orphan_rows', fn: 'SUM', arg: '1 - known' },
];

/** A figure over a group's rows. */
const whole = (f: RowFigure) =>
  f.fn === 'bounded' ? boundedSum(f.arg) : f.fn === 'exact' ? exactSum(f.arg) : `${f.fn}(${f.arg})`;
/** A figure over a part of a group's rows, to be combined. */
const partial = (f: RowFigure) =>
  f.fn === 'bounded' ? `SUM(${f.arg})` : f.fn === 'exact' ? partialExactSum(f.arg) : `${f.fn}(${f.arg})`;
/** A figure of a group from its parts' `partial` column of the same name (a sum as BIGINT on both dialects). */
const combined = (f: RowFigure) =>
  f.fn === 'bounded'
    ? boundedSum(f.name)
    : f.fn === 'exact'
      ? exactSum(f.name, true)
      : f.fn === 'MIN' || f.fn === 'MAX'
        ? `${f.fn}(${f.name})`
        : `CAST(SUM(${f.name}) AS BIGINT)`;

/**
 * R4-12: the lean levels `lvls` (by day, type or model: none is cut nor made of sessions) from one
 * grouping of the rows in scope by all their keys (`fine`, tens or hundreds of groups), each
 * level a grouping of those: one sort (SQLite) or hash (PostgreSQL) of every row for them all,
 * not one each. A lean level's figures all add up (ROW_FIGURES); `level` gives its rows in the
 * `plain` CTE's columns (the percentiles and distinct counts NULL, as a lean level has none), and
 * undefined for a level not among `lvls`.
 */
function rolledUp(
  d: Dialect,
  scope: ReportScope,
  lvls: readonly number[],
  figures: readonly RowFigure[],
  usage: boolean,
): { fine: string; level: (lvl: number) => string | undefined } | undefined {
  if (lvls.length === 0) return undefined;
  const kinds = levelsOf(scope);
  const isDay = (lvl: number) => kinds[lvl - 1] === 'day';
  // per level its key columns in `fine`: k<lvl> (a day is NULL for a row with no readable
  // observed_at), and n<lvl> (the NULL key) for a type or model
  const keyColumns = (lvl: number) => {
    if (isDay(lvl)) return [`${d.utcDay('observed')} AS k${lvl}`];
    const key = GROUP_KEY[kinds[lvl - 1] as Exclude<GroupBy, 'day'>];
    return [`CASE WHEN ${key} IS NULL THEN 1 ELSE 0 END AS n${lvl}`, `COALESCE(${key}, '') AS k${lvl}`];
  };
  const keysOf = (lvl: number) => (isDay(lvl) ? [`k${lvl}`] : [`n${lvl}`, `k${lvl}`]);
  const fine = `fine AS MATERIALIZED (
  SELECT ${lvls.flatMap(keyColumns).join(', ')},
    ${figures.map((f) => `${partial(f)} AS ${f.name}`).join(', ')}
  FROM rows_in WHERE in_window = 1 GROUP BY ${lvls.flatMap(keysOf).join(', ')}
)`;
  const level = (lvl: number) =>
    !lvls.includes(lvl)
      ? undefined
      : `SELECT ${lvl} AS lvl, ${isDay(lvl) ? '0' : `n${lvl}`} AS gnull, k${lvl} AS gkey, ${figures.map((f) => `${combined(f)} AS ${f.name}`).join(', ')},
    ${costlyColumns(d, true, usage)}
  FROM fine${isDay(lvl) ? ` WHERE k${lvl} IS NOT NULL` : ''} GROUP BY ${keysOf(lvl).join(', ')}`;
  return { fine, level };
}

/**
 * The rows in scope of the given levels (0 the totals), each with its level and group key:
 * `lvl, gnull, gkey, rows_in.*`. Level 0 comes first when it is among them (it names the columns).
 */
function levelRows(d: Dialect, scope: ReportScope, lvls: readonly number[]): string {
  const inScope = scope.since === undefined && scope.until === undefined ? '' : ' WHERE in_window = 1';
  const kinds = levelsOf(scope);
  return lvls
    .map((lvl) => {
      if (lvl === 0) return `SELECT 0 AS lvl, 0 AS gnull, '' AS gkey, rows_in.* FROM rows_in${inScope}`;
      const by = kinds[lvl - 1]!;
      // a readable observed_at is in the window here (rows_in), so the day level needs no in_window test
      if (by === 'day')
        return `SELECT ${lvl} AS lvl, 0 AS gnull, ${d.utcDay('observed')} AS gkey, rows_in.* FROM rows_in WHERE observed IS NOT NULL`;
      const key = GROUP_KEY[by];
      return `SELECT ${lvl} AS lvl, CASE WHEN ${key} IS NULL THEN 1 ELSE 0 END AS gnull, COALESCE(${key}, '') AS gkey, rows_in.* FROM rows_in${inScope}`;
    })
    .join('\n  UNION ALL\n  ');
}

/**
 * 1 where the session's started_at is readable and before `startedBefore` (capture_since's
 * placeholder), else 0: read by the join the rows and the sessions already make, so the lower
 * bound (earlySessions) needs no lookup of task_sessions per session.
 */
const startedEarly = (d: Dialect, column: string, startedBefore: string | undefined) =>
  startedBefore === undefined
    ? '0'
    : // the plain comparison first: a session started after it skips the costly readable test (SQLite)
      `CASE WHEN ${indexedBefore(d, column, startedBefore)} AND ${d.readableInstant(column)} < ${startedBefore} THEN 1 ELSE 0 END`;

/** R4-3: the totals scope's unreadable values per column (docs/report.md#unreadable-values). */
function unreadableRows(usage: boolean): string {
  const columns = [...METRIC_COLUMNS, 'settled_at', ...(usage ? SPEND_UNREADABLE : [])];
  return `unreadable AS (
  SELECT ${columns.map((c) => `COALESCE(SUM(in_window * u_${c}), 0) AS u_${c}`).join(', ')},
    COALESCE(SUM(CASE WHEN observed IS NULL THEN 1 ELSE 0 END), 0) AS u_observed_at
  FROM rows_in
)`;
}

/**
 * The host's sessions in scope (R3-7): those of the --task/--session filter; with --since/--until,
 * those started in the window where task_sessions has started_at, else none beyond the sessions
 * that have a row in the window (`members` adds those). `members` holds the totals' and the
 * session groupings' levels only (R4-12: a type, model or day has no sessions of its own, and its
 * (key, session) pairs were most of the statement's groups: figuresStatement lists those groups from their rows).
 */
function scopedSessions(
  d: Dialect,
  scope: ReportScope,
  catalog: StoreCatalog,
  p: Params,
  startedBefore: string | undefined,
): { sess: string; members: (kept: string) => string } {
  const where: string[] = [];
  if (scope.task !== undefined) where.push(`s.task_id = ${p.text(scope.task)}`);
  if (scope.session !== undefined) where.push(`s.id = ${p.text(scope.session)}`);
  if (scope.since !== undefined || scope.until !== undefined) {
    if (!catalog.sessionStartedAt) where.push('1 = 0');
    else {
      const started = d.readableInstant('s.started_at');
      if (scope.since !== undefined) where.push(`${started} >= ${p.instant(scope.since)}`);
      if (scope.until !== undefined) where.push(`${started} < ${p.instant(scope.until)}`);
    }
  }
  // R4-12: unfiltered, the totals' sessions are task_sessions (a known row's session is one of
  // them, with the same started_at), so level 0 needs no pass over the rows to find them
  const unfiltered = where.length === 0;
  const rowLevels = sessionLevels(scope).filter((lvl) => lvl !== 0 || !unfiltered);
  const sess = `sess AS (
  SELECT s.id AS sid, s.task_id, ${startedEarly(d, 's.started_at', startedBefore)} AS started_early
  FROM task_sessions s${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
)`;
  const members = (kept: string) => `members AS (
  SELECT lvl, gnull, gkey, sid, MAX(started_early) AS started_early FROM (${
    rowLevels.length === 0
      ? ''
      : `
    SELECT lvl, gnull, gkey, ${MEMBER_SID} AS sid, started_early FROM (
      ${levelRows(d, scope, rowLevels)}
    ) lr
    UNION ALL`
  }
    SELECT 0 AS lvl, 0 AS gnull, '' AS gkey, sid, started_early FROM sess${sessionParts(scope, allLevels(scope))
      .map((part) => `\n    UNION ALL ${part('started_early')}`)
      .join('')}
  ) m${kept ? ` WHERE ${kept}` : ''} GROUP BY lvl, gnull, gkey, sid
)`;
  return { sess, members };
}

/** A row's session as a member of its groups: only a session task_sessions knows (R4-7). */
const MEMBER_SID = 'CASE WHEN known = 1 THEN task_session_id END';

/**
 * The host's sessions in scope (`sess`) as members of the task and session levels among `lvls`:
 * `SELECT lvl, gnull, gkey, sid, <extra>` each, so a session with no row still makes its group.
 */
const sessionParts = (scope: ReportScope, lvls: readonly number[]) =>
  levelsOf(scope).flatMap((by, i) => {
    if (!lvls.includes(i + 1)) return [];
    const key = by === 'task' ? 'task_id' : by === 'session' ? 'sid' : undefined;
    return key === undefined ? [] : [(extra: string) => `SELECT ${i + 1}, 0, ${key}, sid, ${extra} FROM sess`];
  });

/**
 * Sessions in scope with activity before capture_since: a message created before it, or (where
 * known) a start before it. Where the host has its (task_session_id, created_at) index (Appendix B)
 * each session in scope is one probe through it (R4-12: the lower bound costs the sessions shown,
 * not the history); without it, one pass over the messages before capture_since (its created_at
 * index), the only way to find them.
 */
function earlySessions(d: Dialect, catalog: StoreCatalog, cs: string | undefined): string | undefined {
  if (cs === undefined) return undefined;
  // R4-3: an unreadable instant is no activity before anything; the raw range lets the index serve it.
  const createdBefore = `${indexedBefore(d, 'msg.created_at', cs)} AND ${d.readableInstant('msg.created_at')} < ${cs}`;
  const startedBefore = (column: string) => `${d.readableInstant(column)} < ${cs}`;
  if (catalog.sessionCreatedIndex) {
    // started_at from the joins members came from (startedEarly), the messages by one probe per
    // session that did not start before (R4-12: no lookup of task_sessions per session either)
    return `early AS MATERIALIZED (
  SELECT ms.sid FROM members ms
  WHERE ms.lvl = 0 AND ms.sid IS NOT NULL AND (ms.started_early = 1 OR EXISTS (SELECT 1 FROM task_session_messages msg
    WHERE msg.task_session_id = ms.sid AND ${createdBefore} ${d.fence}))
)`;
  }
  const started = catalog.sessionStartedAt
    ? `\n  UNION SELECT id FROM task_sessions WHERE ${startedBefore('started_at')}`
    : '';
  return `early AS (
  SELECT DISTINCT task_session_id AS sid FROM task_session_messages msg WHERE ${createdBefore}${started}
)`;
}

/**
 * A condition on a host timestamp column that holds wherever `readableInstant(column) < instant`
 * does and that the column's plain index serves as a range. PostgreSQL: the column itself. SQLite
 * stores text (docs/time.md): a readable instant starts with its `YYYY-MM-DD?HH:MM:SS` (? = ' ' or
 * 'T', ' ' < 'T'), which orders like the instant to the second, and every character after the
 * seconds sorts before '~' (lib/health/queries.ts indexedRange).
 */
function indexedBefore(d: Dialect, column: string, instant: string): string {
  if (d.name === 'postgres') return `${column} < ${instant}`;
  return `${column} < (substr(${instant}, 1, 10) || 'T' || substr(${instant}, 12, 8) || '~')`;
}

/**
 * Cost in scope from the host's office_cost_events (R3-7), per level and key, when the store has
 * the ledger. One attribution rule (docs/report.md#cost-attribution): an event's task is its `task_id`, or,
 * where the host wrote '' (or NULL), its session's task in task_sessions, under every filter and
 * grouping alike. R4-3: a cost_subcents or occurred_at that is not readable is not summed (nor in
 * any window) and is counted at level 0 (`u_cost_subcents`, `u_occurred_at`).
 */
function costs(d: Dialect, scope: ReportScope, catalog: StoreCatalog, p: Params): string | undefined {
  const ledger = catalog.costEvents;
  if (ledger === undefined) return undefined;
  const where: string[] = [];
  if (scope.task !== undefined) where.push(`task_id = ${p.text(scope.task)}`);
  if (scope.session !== undefined) where.push(`session_id = ${p.text(scope.session)}`);
  const window: string[] = [];
  if (scope.since !== undefined) window.push(`occurred >= ${p.instant(scope.since)}`);
  if (scope.until !== undefined) window.push(`occurred < ${p.instant(scope.until)}`);
  if (window.length > 0) where.push(`(occurred IS NULL OR (${window.join(' AND ')}))`);
  const columnOf = (by: GroupBy) =>
    by === 'task'
      ? 'task_id'
      : by === 'session'
        ? 'session_id'
        : by === 'turn' && ledger.turnId
          ? 'turn_id'
          : undefined;
  const inWindow = window.length === 0 ? '1' : 'CASE WHEN occurred IS NULL THEN 0 ELSE 1 END';
  // R5-1, R5-2: where the ledger says where a cost came from (COST_SOURCE_FIGURES)
  const sourced = (weight: string) =>
    ledger.costSource
      ? `,
    SUM(${weight}unpriced) AS unpriced_events,
    SUM(${weight}CASE WHEN estimated = 1 THEN unpriced ELSE 0 END) AS estimated_unpriced_events,
    ${boundedSum(`${weight}CASE WHEN cost_source = 'provider_reported' THEN COALESCE(cost, 0) ELSE 0 END`)} AS measured_cost_subcents,
    ${boundedSum(`${weight}CASE WHEN cost_source = 'models_dev_list' THEN COALESCE(cost, 0) ELSE 0 END`)} AS list_priced_cost_subcents`
      : '';
  // `weight` 0 leaves an event out of the sums (level 0 reads the events outside the window too).
  const sums = (weight: string) =>
    `${boundedSum(`${weight}cost`)} AS cost, ${boundedSum(`${weight}CASE WHEN estimated = 1 THEN cost ELSE 0 END`)} AS estimated_cost,
    SUM(${weight}CASE WHEN cost IS NOT NULL THEN 1 ELSE 0 END) AS cost_events${sourced(weight)}`;
  const grouped = levelsOf(scope)
    .map((by, i) => {
      const column = columnOf(by);
      return column === undefined
        ? ''
        : `
  UNION ALL
  SELECT ${i + 1}, 0, ${column}, ${sums('')}, 0, 0 FROM cost_in WHERE in_window = 1 AND ${column} IS NOT NULL AND ${column} <> '' GROUP BY ${column}`;
    })
    .join('');
  const { cost, unpriced, unreadableCost } = ledgerValues(d, ledger);
  // an event's task is read (and its session joined) only where a task filter or grouping reads it
  const byTask = scope.task !== undefined || levelsOf(scope).includes('task');
  // stored only where more than the totals read it (R4-12: 0.4 s of report --json at 10M on SQLite)
  return `cost_in AS ${grouped === '' ? 'NOT MATERIALIZED' : 'MATERIALIZED'} (
  SELECT attributed.*, ${inWindow} AS in_window FROM (
    SELECT ${byTask ? `${EVENT_TASK} AS task_id, ` : ''}e.session_id${ledger.turnId ? ', e.turn_id' : ''},
      ${cost} AS cost, ${unreadableCost} AS u_cost_subcents, e.estimated,${
        ledger.costSource ? ` e.cost_source, ${unpriced} AS unpriced,` : ''
      }
      ${d.readableInstant('e.occurred_at')} AS occurred
    FROM office_cost_events e${byTask ? ' LEFT JOIN task_sessions s ON s.id = e.session_id' : ''}
  ) attributed${where.length ? ` WHERE ${where.join(' AND ')}` : ''}
),
costs AS (
  SELECT 0 AS lvl, 0 AS gnull, '' AS gkey,
    ${sums(window.length === 0 ? '' : 'in_window * ')},
    COALESCE(SUM(in_window * u_cost_subcents), 0) AS u_cost_subcents,
    COALESCE(SUM(CASE WHEN occurred IS NULL THEN 1 ELSE 0 END), 0) AS u_occurred_at
  FROM cost_in${grouped}
)`;
}

/**
 * One attribution rule (docs/report.md#cost-attribution): an event `e`'s task is its `task_id`,
 * or, where the host wrote '' (or NULL), its session's task (`s`, task_sessions joined on session_id).
 */
export const EVENT_TASK = "CASE WHEN COALESCE(e.task_id, '') = '' THEN s.task_id ELSE e.task_id END";

/**
 * A ledger event `e`'s values as every cost figure reads them: `cost` (NULL when cost_subcents is
 * not readable, R4-3; a fraction rounded to an integer, half away from zero, issue 57 #19: every
 * sum, the totals' and each fan-out turn's, then adds the same integers), `unreadableCost` (1
 * then) and `unpriced` (1 for cost_source 'unpriced').
 * R5-1: an unpriced event's stored 0 is no price: it adds nothing (0) to any sum, and its
 * cost_subcents is not read (so never unreadable). Without cost_source every event is priced.
 */
export function ledgerValues(
  d: Dialect,
  ledger: NonNullable<StoreCatalog['costEvents']>,
): { cost: string; unpriced: string; unreadableCost: string } {
  // issue 57 #19: a fraction is rounded here, once per event, before any sum reads it
  const readable = ledger.fractions
    ? d.readableRounded('e.cost_subcents', ...COST_RANGE)
    : d.readableInteger('e.cost_subcents', ...COST_RANGE);
  const unreadable = unreadableFlag('e.cost_subcents', readable);
  if (!ledger.costSource) return { cost: readable, unpriced: '0', unreadableCost: unreadable };
  const unpriced = "CASE WHEN e.cost_source = 'unpriced' THEN 1 ELSE 0 END";
  return {
    cost: `CASE WHEN ${unpriced} = 1 THEN 0 ELSE ${readable} END`,
    unpriced,
    unreadableCost: `CASE WHEN ${unpriced} = 1 THEN 0 ELSE ${unreadable} END`,
  };
}

/**
 * 1 for a member session with activity before capture_since. `IN` (a hashed subplan on PostgreSQL,
 * an ephemeral index on SQLite) rather than a join: SQLite planned `LEFT JOIN early` as a scan of
 * early per member, quadratic in the sessions.
 */
const EARLY_MEMBER = 'CASE WHEN m.sid IN (SELECT sid FROM early) THEN 1 ELSE 0 END';

const JOIN_KEYS = (alias: string, other: string) =>
  `${alias}.lvl = ${other}.lvl AND ${alias}.gnull = ${other}.gnull AND ${alias}.gkey = ${other}.gkey`;

/**
 * R4-12: the `cut` CTE, the groups a cut level keeps (ReportScope.cuts): its first N in the order
 * sort.ts gives them (a figure descending, a null one last; ties by key in byte order, the NULL
 * key last). It reads only what the ranking needs, straight from the level's rows and sessions
 * (and `costs` for --sort cost): every other figure of a cut level (plain, members, keyed) is then
 * computed for the groups it keeps only. The parts are gathered by one GROUP BY, not joined:
 * PostgreSQL cannot estimate a stored CTE's rows per level and planned such joins as nested
 * loops over 50,000 groups each.
 */
function cutGroups(
  d: Dialect,
  scope: ReportScope,
  cuts: readonly [number, number][],
  order: (figures: SortFigures) => string,
  sort: SortBy,
  hasCosts: boolean,
): string {
  const lvls = cuts.map(([lvl]) => lvl);
  const limit = `CASE lvl ${cuts.map(([lvl, n]) => `WHEN ${lvl} THEN ${n}`).join(' ')} END`;
  const sortBy = order({
    lvl: 'lvl',
    sessions: 'sessions',
    subagents: 'subagents',
    tokens: 'tokens_sum',
    cost: 'cost',
    lastObserved: 'last_observed',
  });
  // the members of a group as keyed counts them (its rows' known sessions and, for a task or a
  // session, the host's sessions of it): counted only when the sort reads them
  const sessions = sort === 'contexts' ? 'COUNT(DISTINCT sid)' : NONE;
  const byCost = sort === 'cost' && hasCosts;
  return `cut AS MATERIALIZED (
  SELECT lvl, gnull, gkey, level_groups FROM (
    SELECT lvl, gnull, gkey,
      ROW_NUMBER() OVER (PARTITION BY lvl ORDER BY ${sortBy}${sortBy ? ', ' : ''}gnull, ${d.byteOrder('gkey')}) AS rn,
      COUNT(*) OVER (PARTITION BY lvl) AS level_groups
    FROM (
      SELECT lvl, gnull, gkey, ${sessions} AS sessions, SUM(is_row) AS subagents, ${boundedSum('total_tokens')} AS tokens_sum,
        MAX(observed) AS last_observed, MAX(cost) AS cost, MAX(listed) AS listed
      FROM (
        SELECT lvl, gnull, gkey, ${MEMBER_SID} AS sid, 1 AS is_row, total_tokens, observed, ${NONE} AS cost, 1 AS listed
        FROM (${levelRows(d, scope, lvls)}) lr${sessionParts(scope, lvls)
          .map((part) => `\n        UNION ALL ${part(`0, NULL, NULL, ${NONE}, 1`)}`)
          .join('')}${
          byCost
            ? `
        UNION ALL
        SELECT lvl, gnull, gkey, NULL, 0, NULL, NULL, cost, 0 FROM costs WHERE lvl IN (${lvls.join(', ')})`
            : ''
        }
      ) parts GROUP BY lvl, gnull, gkey
    ) gathered WHERE listed = 1
  ) ranked WHERE rn <= ${limit}
)`;
}

/** R5-1, R5-2: statement 1's figures from the ledger's cost_source (NULL without the column). */
const COST_SOURCE_FIGURES = [
  'unpriced_events',
  // R6-9: the estimated part's own unpriced events (estimated = 1)
  'estimated_unpriced_events',
  'measured_cost_subcents',
  'list_priced_cost_subcents',
] as const;

/** A typed NULL: PostgreSQL types an untyped one in a UNION as text. */
export const NONE = 'CAST(NULL AS BIGINT)';

/** The duration percentiles every scope reports (docs/report.md#percentiles). */
export const RANKS = [50, 95] as const;

/** The expressions of the figures a sort reads (the statement's own columns, or the cut's). */
interface SortFigures {
  lvl: string;
  sessions: string;
  subagents: string;
  tokens: string;
  cost: string;
  lastObserved: string;
}

/** `a / b` rounded down for b > 0, the same on both dialects (integer division truncates toward zero). */
const floorDiv = (a: string, b: string) =>
  `(CASE WHEN ${a} >= 0 THEN ${a} / ${b} ELSE -((-(${a}) + ${b} - 1) / ${b}) END)`;

/**
 * R6-11 (docs/report.md#money): the report's one rounding rule for a quotient of integers (a mean,
 * a cost per context), `a / n` for n > 0 to the nearest integer, half away from zero, as the
 * dollars are (lib/money.ts); the same on both dialects (integer division truncates toward zero).
 */
export const roundedQuotient = (a: string, n: string) =>
  `(CASE WHEN ${a} >= 0 THEN (2 * ${a} + ${n}) / (2 * ${n}) ELSE 0 - (2 * (0 - ${a}) + ${n}) / (2 * ${n}) END)`;

/**
 * The ORDER BY of a cut (sort.ts): the sort's figure descending, a null one last, each figure the
 * same expression as the statement's column of it (`figureColumns`).
 */
function sortOrder(sort: SortBy, columns: (f: SortFigures) => Record<SortBy, string | undefined>) {
  return (f: SortFigures) => {
    const x = columns(f)[sort];
    return x === undefined ? '' : `CASE WHEN ${x} IS NULL THEN 1 ELSE 0 END, ${x} DESC`;
  };
}

/**
 * Statement 1: one row per level and key with every scalar figure (docs/report.md#figures).
 * The totals row (lvl 0) is always there, even for an empty scope.
 */
export function figuresStatement(d: Dialect, scope: ReportScope, catalog: StoreCatalog): Statement {
  const p = new Params(d);
  const cs = scope.captureSince === undefined ? undefined : p.instant(scope.captureSince);
  // the sessions' started_at is read where they are joined only when the lower bound probes them
  const startedBefore = catalog.sessionStartedAt && catalog.sessionCreatedIndex ? cs : undefined;
  const sessions = scopedSessions(d, scope, catalog, p, startedBefore);
  const costCtes = costs(d, scope, catalog, p);
  const earlyCte = earlySessions(d, catalog, cs);
  const early = earlyCte !== undefined;
  const hasCosts = costCtes !== undefined;
  const costSource = catalog.costEvents?.costSource === true;
  const others = otherLevels(scope);
  // the figures a sort reads, here and in the cut (sortOrder): one expression each
  const sessionsOf = (f: SortFigures) =>
    others.length === 0
      ? f.sessions
      : `CASE WHEN ${f.lvl} IN (${sessionLevels(scope).join(', ')}) THEN ${f.sessions} END`;
  const figureColumns = (f: SortFigures): Record<SortBy, string | undefined> => ({
    subagents: f.subagents,
    contexts: `(${sessionsOf(f)} + ${f.subagents})`,
    tokens: f.tokens,
    cost: hasCosts ? f.cost : 'NULL',
    last_observed_at: f.lastObserved,
    key: undefined,
  });
  const own: SortFigures = {
    lvl: 'k.lvl',
    sessions: 'k.sessions',
    subagents: 'COALESCE(f.subagents, 0)',
    tokens: 'f.tokens_sum',
    cost: 'c.cost',
    lastObserved: 'f.last_observed',
  };
  const sessionsColumn = sessionsOf(own);
  const { contexts, cost } = figureColumns(own) as Record<'contexts' | 'cost', string>;
  const [taskLevel] = levelsWhere(scope, ['task']);
  const [sessionLevel] = levelsWhere(scope, ['session']);
  const title =
    taskLevel !== undefined && catalog.taskTitle
      ? `(SELECT t.title FROM tasks t WHERE k.lvl = ${taskLevel} AND k.gnull = 0 AND t.id = k.gkey)`
      : 'NULL';
  const startedOf = [
    ...(sessionLevel === undefined
      ? []
      : [
          `WHEN k.lvl = ${sessionLevel} THEN (SELECT ${d.readableInstant('s.started_at')} FROM task_sessions s WHERE s.id = k.gkey)`,
        ]),
    ...(taskLevel === undefined
      ? []
      : [
          `WHEN k.lvl = ${taskLevel} THEN (SELECT MIN(${d.readableInstant('s.started_at')}) FROM task_sessions s WHERE s.task_id = k.gkey)`,
        ]),
  ];
  const started = !catalog.sessionStartedAt || startedOf.length === 0 ? 'NULL' : `(CASE ${startedOf.join(' ')} END)`;
  const sort = scope.sort ?? 'subagents';
  const cuts = cutsOf(scope);
  // R4-12: a cut level's figures are computed for the groups it keeps only (cutGroups)
  const kept = (alias: string) =>
    cuts.length === 0
      ? ''
      : inKept(
          alias,
          cuts.map(([lvl]) => lvl),
          'SELECT lvl, gnull, gkey FROM cut',
        );
  const keptRows = (rows: string) => (cuts.length === 0 ? rows : `(SELECT * FROM ${rows} WHERE ${kept('lr')}) kept`);
  // plain also lists the groups of the levels not made of sessions for keyed, with their lower
  // bound (a row of a session with activity before capture_since): their own pass cost one more
  // grouping of every such level's rows (R4-12)
  const plainStore = others.length === 0 ? '' : ' MATERIALIZED';
  const earlyRows: RowFigure | undefined =
    early && others.length > 0
      ? {
          name: 'early_rows',
          fn: 'MAX',
          arg: 'CASE WHEN known = 1 AND task_session_id IN (SELECT sid FROM early) THEN 1 ELSE 0 END',
        }
      : undefined;
  // R6-5: the spend figures where the store has our usage table
  const usage = catalog.usage;
  const figures = [
    ...ROW_FIGURES,
    ...(usage ? SPEND_ROW_FIGURES : []),
    ...(earlyRows === undefined ? [] : [earlyRows]),
  ];
  // keyed reads early_rows of the other levels only: the rest skip its probe of `early` per row
  const wholeColumn = (f: RowFigure, lvl: number) =>
    f === earlyRows && !others.includes(lvl) ? `0 AS ${f.name}` : `${whole(f)} AS ${f.name}`;
  // R4-12: the page's lean day, type and model levels are rolled up from one grouping of the rows
  // by all their keys at once (rolledUp): their figures all add up, and each level sorted every row
  const rolled = levelsOf(scope).flatMap((by, i) =>
    isUnranked(scope, i + 1) && !SESSION_GROUPS.includes(by) ? [i + 1] : [],
  );
  const rollup = rolledUp(d, scope, rolled, figures, usage);
  // in order: a CTE reads only the ones before it (the cut before the members and figures it limits)
  const withs = [
    scopedRows(d, scope, p, startedBefore, undefined, usage),
    unreadableRows(usage),
    sessions.sess,
    ...(costCtes === undefined ? [] : [costCtes]),
    ...(cuts.length === 0 ? [] : [cutGroups(d, scope, cuts, sortOrder(sort, figureColumns), sort, hasCosts)]),
    sessions.members(kept('m')),
    ...(earlyCte === undefined ? [] : [earlyCte]),
    ...(rollup === undefined ? [] : [rollup.fine]),
    `plain AS${plainStore} (
  ${allLevels(scope)
    .map(
      (lvl) =>
        rollup?.level(lvl) ??
        `SELECT lvl, gnull, gkey, ${figures.map((f) => wholeColumn(f, lvl)).join(', ')},
    ${costlyColumns(d, isUnranked(scope, lvl), usage)}
  FROM ${keptRows(`(${levelRows(d, scope, [lvl])}) lr`)} GROUP BY lvl, gnull, gkey`,
    )
    .join('\n  UNION ALL\n  ')}
)`,
    `keyed AS (
  SELECT m.lvl, m.gnull, m.gkey, COUNT(m.sid) AS sessions,
    ${early ? `MAX(${EARLY_MEMBER})` : '0'} AS lower_bound,
    ${early ? `SUM(${EARLY_MEMBER})` : '0'} AS lower_bound_sessions
  FROM (SELECT 0 AS lvl, 0 AS gnull, '' AS gkey, NULL AS sid UNION ALL SELECT lvl, gnull, gkey, sid FROM members) m
  GROUP BY m.lvl, m.gnull, m.gkey${
    others.length === 0
      ? ''
      : `
  UNION ALL
  SELECT lvl, gnull, gkey, 0, ${early ? 'early_rows' : '0'}, 0 FROM plain WHERE lvl IN (${others.join(', ')})`
  }
)`,
  ];
  // issue 58: a part of an unknown cost is unknown too (R3-6, R4-3): the estimated, measured and
  // list-priced parts are null where cost_subcents is (no event of the scope could be read)
  const partOf = (part: string) => `CASE WHEN ${cost} IS NULL THEN NULL ELSE ${part} END`;
  // the unpriced counts are counts: 0 in a scope with a cost of its own and no event ("none in
  // scope"), null only where the scope has no cost of its own (a type, model or day, or a turn
  // without the ledger's turn_id)
  const costLevels = [
    0,
    ...levelsOf(scope).flatMap((by, i) =>
      by === 'task' || by === 'session' || (by === 'turn' && catalog.costEvents?.turnId === true) ? [i + 1] : [],
    ),
  ];
  const sourceFigure = (name: (typeof COST_SOURCE_FIGURES)[number]) =>
    name.endsWith('_events')
      ? `CASE WHEN k.lvl IN (${costLevels.join(', ')}) THEN COALESCE(c.${name}, 0) END`
      : partOf(`c.${name}`);
  const sql = `WITH ${withs.join(',\n')}
SELECT k.lvl, k.gnull, k.gkey,
  COALESCE(f.subagents, 0) AS subagents, COALESCE(f.top_level, 0) AS top_level, COALESCE(f.nested, 0) AS nested,
  COALESCE(f.async, 0) AS async, COALESCE(f.live, 0) AS live, COALESCE(f.backfill, 0) AS backfill,
  COALESCE(f.settled, 0) AS settled, COALESCE(f.failed, 0) AS failed,
  f.tokens_sum, COALESCE(f.tokens_reported, 0) AS tokens_reported, f.tokens_p50, f.tokens_p95, f.tokens_max,
  f.tool_uses_sum, COALESCE(f.tool_uses_reported, 0) AS tool_uses_reported,
  COALESCE(f.duration_reported, 0) AS duration_reported, f.p50 AS duration_p50, f.p95 AS duration_p95, f.duration_max,
  COALESCE(f.executions, 0) AS executions, COALESCE(f.unknown_execution, 0) AS unknown_execution,
  COALESCE(f.turns, 0) AS turns,
  ${sessionsColumn} AS sessions, ${contexts} AS contexts,
  ${cost} AS cost_subcents, ${hasCosts ? partOf('c.estimated_cost') : 'NULL'} AS estimated_cost_subcents,
  ${COST_SOURCE_FIGURES.map((name) => `${costSource ? sourceFigure(name) : 'NULL'} AS ${name}`).join(', ')},
  CASE WHEN ${cost} IS NULL OR ${contexts} IS NULL OR ${contexts} = 0 THEN NULL${
    // R6-11: a lower bound (cost_lower_bound) is rounded down, never up
    costSource ? `\n    WHEN c.unpriced_events > 0 THEN ${floorDiv(cost, contexts)}` : ''
  }
    ELSE ${roundedQuotient(cost, contexts)} END AS cost_per_context_subcents,
  f.first_observed, f.last_observed,
  ${title} AS title, ${started} AS started,
  k.lower_bound, k.lower_bound_sessions, COALESCE(f.orphan_rows, 0) AS orphan_rows,
  ${METRIC_COLUMNS.map((c) => `u.u_${c}`).join(', ')}, u.u_observed_at, u.u_settled_at,
  ${SPEND_UNREADABLE.map((c) => (usage ? `u.u_${c}` : `0 AS u_${c}`)).join(', ')},
  ${spendColumns(usage)},
  ${hasCosts ? 'c.u_cost_subcents, c.u_occurred_at, c.cost_events' : '0 AS u_cost_subcents, 0 AS u_occurred_at, 0 AS cost_events'},
  ${cuts.length === 0 ? 'NULL' : 'cut.level_groups'} AS level_groups
FROM keyed k
LEFT JOIN plain f ON ${JOIN_KEYS('f', 'k')}
LEFT JOIN unreadable u ON k.lvl = 0${hasCosts ? `\nLEFT JOIN costs c ON ${JOIN_KEYS('c', 'k')}` : ''}${
    cuts.length === 0 ? '' : `\nLEFT JOIN cut ON ${JOIN_KEYS('cut', 'k')}`
  }`;
  return { sql, params: p.values };
}

/** A group of a level (lvl 1… the groupings), as statement 1 gives it. */
export interface LevelKey {
  lvl: number;
  gnull: number;
  gkey: string;
}

const LEVEL_KEY_COLUMNS = [{ type: 'integer' }, { type: 'integer' }, { type: 'text' }] as const;

/**
 * Statement 2: the figures that are lists, per level and key: subagents per model (`kind` model,
 * `label` the model or NULL) and the fan-out histogram (`kind` fan_out: `turns` turns launched
 * exactly `k` top-level subagents). With `durationUpper` (the page's data), also the reported
 * duration_ms per histogram bucket over the totals' scope (`kind` duration, level 0: bucket `k`
 * is [upper[k-1], upper[k]), the last one unbounded; document.ts DURATION_BUCKET_UPPER_MS), in
 * the same pass over the rows (R4-12: a statement of its own read every row again).
 *
 * With `kept` (statement 1's groups of the cut levels, where it ran first), a cut level lists its
 * kept groups only: R4-12, the page's task level listed models and fan-out for all 50,000 task
 * groups at a million messages to show 200 (0.65 s of SQLite's 2.4 s statement). A lean level
 * (the page's series) lists nothing: its groups hold no lists.
 */
export function breakdownStatement(
  d: Dialect,
  scope: ReportScope,
  durationUpper?: readonly number[],
  kept?: readonly LevelKey[],
): Statement {
  const p = new Params(d);
  // a lean level lists nothing (ReportScope.lean), cut or not
  const listed = allLevels(scope).filter((lvl) => !isLean(scope, lvl));
  const cutLevels = cutsOf(scope).flatMap(([lvl]) => (listed.includes(lvl) ? [lvl] : []));
  const keep = kept !== undefined && cutLevels.length > 0;
  // the kept keys are read from $1 on (Dialect.selectRows), before the scope's own parameters
  if (keep)
    p.values.push(
      ...d.bindRows(
        LEVEL_KEY_COLUMNS,
        kept.flatMap((k) => (cutLevels.includes(k.lvl) ? [[k.lvl, k.gnull, k.gkey]] : [])),
      ),
    );
  const bucket =
    durationUpper === undefined
      ? undefined
      : `CASE ${durationUpper.map((u, i) => `WHEN duration_ms < ${u} THEN ${i}`).join(' ')} ELSE ${durationUpper.length} END`;
  const levels = levelRows(d, scope, listed);
  const leveled = keep
    ? `SELECT * FROM (
    ${levels}
  ) lr WHERE ${inKept('lr', cutLevels, d.selectRows(LEVEL_KEY_COLUMNS))}`
    : levels;
  // one grouping over every level's rows (PostgreSQL hashes it; per level it misestimated each
  // level's rows and sorted them, docs/report.md#the-statements)
  // observed only where a listed level is by day (a window is scopedRows' own to see)
  const observed = listed.some((lvl) => lvl > 0 && levelsOf(scope)[lvl - 1] === 'day');
  const sql = `WITH ${scopedRows(d, scope, p, undefined, { observed })},
leveled AS NOT MATERIALIZED (
  ${leveled}
)
SELECT 'model' AS kind, lvl, gnull, gkey, model AS label, NULL AS k, COUNT(*) AS n
FROM leveled GROUP BY lvl, gnull, gkey, model
UNION ALL
SELECT 'fan_out', lvl, gnull, gkey, NULL, k, COUNT(*)
FROM (
  SELECT lvl, gnull, gkey, turn_id, COUNT(*) AS k FROM leveled
  WHERE COALESCE(turn_id, '') <> '' AND ${TOP_LEVEL}
  GROUP BY lvl, gnull, gkey, turn_id
) per_turn
GROUP BY lvl, gnull, gkey, k${
    bucket === undefined
      ? ''
      : `
UNION ALL
SELECT 'duration', 0, 0, '', NULL, ${bucket}, COUNT(*)
FROM rows_in WHERE in_window = 1 AND duration_ms IS NOT NULL GROUP BY ${bucket}`
  }`;
  return { sql, params: p.values };
}
