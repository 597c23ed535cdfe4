import type { Queryable, Row } from '../db/database.js';
import { limitConcurrency } from '../db/limit.js';
import { HEALTH_GRACE_SECONDS, PAGE_DEFAULTS } from '../defaults.js';
import { formatRfc3339, type Micros, nowMicros, parseStoredTimestamp } from '../time.js';
import { readStoreCatalog, type StoreCatalog } from './catalog.js';
import { readActivationKeys, readShortfall } from './completeness.js';
import {
  type Completeness,
  type Distributions,
  DURATION_BUCKET_UPPER_MS,
  FAN_OUT_COST_BUCKETS,
  type FanOutCost,
  type Figures,
  type Group,
  type GroupBy,
  type ReportDocument,
  type Series,
  type SortBy,
  seriesGroupOf,
  type TurnTree,
  typeSeriesGroupOf,
} from './document.js';
import { bucketLabel, fanOutCostStatement } from './fan-out-cost-sql.js';
import {
  fanOutOverflowNotes,
  type Overflow,
  overflowOf,
  type ScopeFigures,
  scopeNotes,
  treeTimeNotes,
  valueNotes,
} from './notes.js';
import { sortGroups } from './sort.js';
import { breakdownStatement, figuresStatement, levelsOf, type ReportScope } from './sql.js';
import { readTurnTrees } from './trees.js';

/**
 * `subagent-context report` (docs/report.md, R3-5…R3-8): reads the store, never writes it, and
 * returns the one document every renderer consumes. Every figure comes out of the two statements
 * in sql.ts; here rows are only put into the document's shape.
 */
export interface ReportOptions {
  by?: GroupBy;
  since?: Micros;
  until?: Micros;
  task?: string;
  session?: string;
  sort?: SortBy;
  limit?: number;
  /** messages newer than this are not yet expected to have rows (the shortfall's cutoff); default HEALTH_GRACE_SECONDS */
  graceSeconds?: number;
  /** the report's clock (generated_at, the shortfall's cutoff); default the process clock */
  now?: Micros;
  /**
   * also fill `series` (groups by day, type and task, each in `sort` order, unlimited) and
   * `distributions` (the duration histogram): the page's data (`report --html`, R3-9)
   */
  pageData?: boolean;
  /** also fill `trees` with the most recent N turns' fan-out trees (`--trees N`; lib/report/trees.ts) */
  trees?: number;
  /**
   * with `pageData`: `series.task` holds the first N task groups only (default `limit`, else
   * PAGE_DEFAULTS.tasks: the page's task rows) and `series.task_groups` how many there are (R4-12)
   */
  pageTasks?: number;
}

export async function buildReport(source: Queryable, options: ReportOptions = {}): Promise<ReportDocument> {
  // R4-12: the statements below start side by side; no more run at once than the pool has
  // connections, so none waits for one it cannot get (lib/db/limit.ts).
  const db = limitConcurrency(source);
  const now = options.now ?? nowMicros();
  const graceSeconds = options.graceSeconds ?? HEALTH_GRACE_SECONDS;
  const catalog = await readStoreCatalog(db);
  const keys = await readActivationKeys(db);
  const scope: ReportScope = {
    by: options.by ?? null,
    since: options.since,
    until: options.until,
    task: options.task,
    session: options.session,
    captureSince: keys.captureSince,
  };
  const sort = options.sort ?? 'subagents';
  const filter = { since: options.since, until: options.until, task: options.task, session: options.session };
  // Independent statements: on PostgreSQL they run side by side on the pool's connections.
  // R4-12: the page's series are more levels of the same two statements (one pass over the rows).
  const levels = options.pageData ? [...new Set([...levelsOf(scope), ...SERIES])] : levelsOf(scope);
  // the page shows --limit task rows, else PAGE_DEFAULTS.tasks (render/html.ts)
  const pageTasks = options.pageTasks ?? options.limit ?? PAGE_DEFAULTS.tasks;
  // R4-12: a level computes only the groups the document holds: --by's first --limit, the page's
  // first task rows; a level that serves two of them keeps what the larger needs (undefined: all)
  const cuts = levels.map((by) => {
    const needs: (number | undefined)[] = [];
    if (by === scope.by) needs.push(options.limit);
    // only the page's own series need page groups: a --by level that is no series (session, turn,
    // model) is cut at --limit, page or not
    if (options.pageData && (SERIES as readonly GroupBy[]).includes(by))
      needs.push(by === 'task' ? pageTasks : undefined);
    return needs.includes(undefined) ? undefined : Math.max(...(needs as number[]));
  });
  // R4-12: a level that only feeds the page's series computes only what a series group holds;
  // R6-6: but the type level (a few groups) is ranked, for what one subagent of each type spent
  const lean = levels.map((by) => options.pageData === true && by !== scope.by);
  const ranked = levels.map((by, i) => lean[i] === true && by === 'type');
  const hostTimes = { unreadable: 0 };
  const [main, shortfall, trees, fanOutCost] = await Promise.all([
    readFigures(db, { ...scope, levels, cuts, sort, lean, ranked }, catalog, scope.by, options.pageData === true),
    readShortfall(db, keys, now - BigInt(Math.round(graceSeconds * 1_000_000))),
    options.trees === undefined ? [] : readTurnTrees(db, { ...filter, limit: options.trees }, hostTimes),
    readFanOutCost(db, scope, catalog),
  ]);
  const { totals, lowerBoundSessions, unreadable, overflow, distributions } = main;
  const titled = catalog.taskTitle ? await withTaskTitles(db, trees) : trees;
  const groupsOf = (by: GroupBy) => main.levels[levels.indexOf(by)]!;
  const groups = scope.by === null ? [] : groupsOf(scope.by);
  const seriesOf = (by: GroupBy) => sortGroups(groupsOf(by), sort).map(seriesGroupOf);
  const series: Series | undefined = options.pageData
    ? {
        day: seriesOf('day'),
        type: sortGroups(groupsOf('type'), sort).map(typeSeriesGroupOf),
        task: seriesOf('task').slice(0, pageTasks),
        task_groups: main.levelGroups[levels.indexOf('task')]!,
      }
    : undefined;
  const limited = sortGroups(groups, sort).slice(0, options.limit);

  return {
    version: 1,
    generated_at: formatRfc3339(now),
    filters: {
      since: options.since === undefined ? null : formatRfc3339(options.since),
      until: options.until === undefined ? null : formatRfc3339(options.until),
      task: options.task ?? null,
      session: options.session ?? null,
      by: scope.by,
      sort,
      limit: options.limit ?? null,
    },
    completeness: {
      capture_since: keys.captureSince === undefined ? null : formatRfc3339(keys.captureSince),
      backfill_through: keys.backfillThrough === undefined ? null : formatRfc3339(keys.backfillThrough),
      verified_through: keys.verifiedThrough === undefined ? null : formatRfc3339(keys.verifiedThrough),
      shortfall: shortfall.shortfall,
      missing: shortfall.missing,
      unreadable,
      lower_bound_sessions: lowerBoundSessions,
      unpriced_events: totals.unpriced_events,
      notes: [
        ...keys.notes,
        ...shortfall.notes,
        ...scopeNotes(scope, catalog, lowerBoundSessions),
        ...valueNotes(totals, unreadable, overflow),
        ...treeTimeNotes(hostTimes.unreadable),
        ...fanOutOverflowNotes(fanOutCost),
      ],
    },
    totals,
    groups: limited,
    trees: titled,
    ...(series === undefined ? {} : { series }),
    ...(distributions === undefined ? {} : { distributions }),
    fan_out_cost: fanOutCost,
  };
}

/** R5-3: the fan_out_cost section (fan-out-cost-sql.ts), all seven buckets; null where it cannot be given. */
async function readFanOutCost(db: Queryable, scope: ReportScope, catalog: StoreCatalog): Promise<FanOutCost | null> {
  const statement = fanOutCostStatement(db.dialect, scope, catalog);
  if (statement === undefined) return null;
  const rows = await db.query(statement.sql, statement.params);
  const priced = catalog.costEvents?.costSource === true;
  const usage = catalog.usage;
  const byBucket = new Map(rows.filter((r) => r.kind === 'bucket').map((r) => [bucketLabel(int(r.b)), r]));
  const unattributed = rows.find((r) => r.kind === 'unattributed');
  const unreadable = rows.find((r) => r.kind === 'unreadable');
  return {
    buckets: FAN_OUT_COST_BUCKETS.map((label) => {
      const r = byBucket.get(label);
      const costed = r === undefined ? 0 : int(r.costed);
      // over the costed turns only: null when there is none (NULL is never 0)
      const costFigure = (value: unknown) => (costed === 0 ? null : nullableInt(value));
      return {
        fan_out: label,
        turns: r === undefined ? 0 : int(r.turns),
        costed_turns: costed,
        unpriced_turns: priced ? (r === undefined ? 0 : int(r.unpriced)) : null,
        turns_without_cost: r === undefined ? 0 : int(r.none),
        unreadable_cost_turns: r === undefined ? 0 : int(r.unreadable),
        cost_subcents: costFigure(r?.cost),
        mean_subcents: costFigure(r?.mean),
        median_subcents: costFigure(r?.p50),
        p95_subcents: costFigure(r?.p95),
        // R6-5: null without the usage table (the statement's NULL); over the spend-known turns
        spend_known_turns: usage ? (r === undefined ? 0 : int(r.spend_known)) : null,
        subagent_cost_subcents: nullableInt(r?.sub_cost),
        subagent_share: share(r?.share),
        // R6-10: the priced, readable events of the bucket's turns that are not costed
        uncosted_turns_priced_cost_subcents: nullableInt(r?.uncosted_cost),
      };
    }),
    unattributed_events: unattributed === undefined ? 0 : int(unattributed.events),
    unattributed_cost_subcents: nullableInt(unattributed?.ev_cost),
    unattributed_unpriced_events: priced ? (unattributed === undefined ? 0 : int(unattributed.ev_unpriced)) : null,
    unreadable_started_at: nullableInt(unreadable?.turns),
  };
}

/**
 * R6-5: the bucket's median share as the document gives it, a ratio rounded to 4 decimals. The
 * database picks the median (the same double on both dialects, a quotient of two integers); its
 * rounding is here, where no dialect's round-half rule can differ.
 */
function share(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const ratio = Number(value);
  if (!Number.isFinite(ratio) || ratio < 0)
    throw new Error(`the report expected a non-negative ratio from the database, got ${String(value)}`);
  return Math.round(ratio * 10_000) / 10_000;
}

/**
 * Each tree with its task's title (R4-12: the page's task series holds its first rows only, so a
 * tree's task is often not among them), read by id, a few hundred at a time.
 */
async function withTaskTitles(db: Queryable, trees: readonly TurnTree[]): Promise<TurnTree[]> {
  const ids = [...new Set(trees.map((t) => t.task_id))];
  const titles = new Map<string, string | null>();
  for (let i = 0; i < ids.length; i += TITLES_PER_READ) {
    const chunk = ids.slice(i, i + TITLES_PER_READ);
    const rows = await db.query<{ id: unknown; title: unknown }>(
      `SELECT id, title FROM tasks WHERE id IN (${chunk.map((_, j) => `$${j + 1}`).join(', ')})`,
      chunk,
    );
    for (const r of rows) titles.set(String(r.id), r.title === null ? null : String(r.title));
  }
  return trees.map((t) => ({ ...t, task_title: titles.get(t.task_id) ?? null }));
}
const TITLES_PER_READ = 500;

/**
 * The page's groupings (`series`), each in `sort` order: every group, the task series its first
 * rows. R4-12: no model series: the page's by-model chart reads the totals' model counts.
 */
const SERIES = ['day', 'type', 'task'] as const satisfies readonly GroupBy[];

interface FigureResult {
  totals: Figures;
  /** the groups of each level: levels[i] holds level i + 1's (sql.ts levelsOf); a cut level its first N only */
  levels: Group[][];
  /** how many groups each level has in scope, a cut level's included (levelGroups[i]: level i + 1) */
  levelGroups: number[];
  lowerBoundSessions: number;
  unreadable: Completeness['unreadable'];
  /** scopes (totals or groups) whose sum is null because it lies beyond 2^53 − 1, per figure */
  overflow: Overflow;
  /** the duration histogram, when asked for (the page's data) */
  distributions?: Distributions;
}

/**
 * Statements 1 and 2 (sql.ts) for the scope's groupings, put into the document's shape; `overflow`
 * counts the totals and the groups of `main` (the report's own --by); with `histogram`, statement 2
 * also gives the duration histogram.
 */
async function readFigures(
  db: Queryable,
  scope: ReportScope,
  catalog: StoreCatalog,
  main: GroupBy | null,
  histogram: boolean,
): Promise<FigureResult> {
  const kinds = levelsOf(scope);
  const figures = figuresStatement(db.dialect, scope, catalog);
  const upper = histogram ? DURATION_BUCKET_UPPER_MS : undefined;
  let figureRows: Row[];
  let breakdownRows: Row[];
  if ((db.connections ?? 1) > 1) {
    // side by side on the pool's connections; the breakdown lists every group of a cut level
    const breakdown = breakdownStatement(db.dialect, scope, upper);
    [figureRows, breakdownRows] = await Promise.all([
      db.query(figures.sql, figures.params),
      db.query(breakdown.sql, breakdown.params),
    ]);
  } else {
    // R4-12: on one connection they run one after the other anyway, so the breakdown lists only
    // the groups statement 1 kept
    figureRows = await db.query(figures.sql, figures.params);
    const kept = figureRows.flatMap((row) =>
      row.level_groups === null || row.level_groups === undefined
        ? []
        : [{ lvl: int(row.lvl), gnull: int(row.gnull), gkey: String(row.gkey) }],
    );
    const breakdown = breakdownStatement(db.dialect, scope, upper, kept);
    breakdownRows = await db.query(breakdown.sql, breakdown.params);
  }

  const lists = new Map<string, { models: Figures['models']; fan_out: Figures['fan_out'] }>();
  const durations = new Map<number, number>();
  for (const row of breakdownRows) {
    if (row.kind === 'duration') {
      durations.set(int(row.k), int(row.n));
      continue;
    }
    const key = groupKey(row);
    let entry = lists.get(key);
    if (!entry) {
      entry = { models: { counts: [], unreported: 0 }, fan_out: [] };
      lists.set(key, entry);
    }
    if (row.kind === 'model') {
      if (row.label === null) entry.models.unreported = int(row.n);
      else entry.models.counts.push({ model: String(row.label), subagents: int(row.n) });
    } else entry.fan_out.push({ top_level: int(row.k), turns: int(row.n) });
  }
  for (const entry of lists.values()) {
    // Code-unit order, so both dialects (whatever their collation) give the same document.
    entry.models.counts.sort((a, b) => b.subagents - a.subagents || compareText(a.model, b.model));
    entry.fan_out.sort((a, b) => a.top_level - b.top_level);
  }

  let totals: Figures | undefined;
  let lowerBoundSessions = 0;
  let unreadable: Completeness['unreadable'] | undefined;
  const scopes: ScopeFigures[] = [];
  const levels: Group[][] = kinds.map(() => []);
  const cutGroups: (number | undefined)[] = kinds.map(() => undefined);
  for (const row of figureRows) {
    const f = toFigures(row, lists.get(groupKey(row)));
    const lvl = int(row.lvl);
    const by = lvl === 0 ? null : kinds[lvl - 1]!;
    scopes.push({
      by,
      figures: f,
      costEvents: int(row.cost_events),
      spendOverflow: nullableInt(row.spend_overflow) ?? 0,
    });
    if (by === null) {
      totals = f;
      lowerBoundSessions = int(row.lower_bound_sessions);
      unreadable = {
        total_tokens: int(row.u_total_tokens),
        tool_use_count: int(row.u_tool_use_count),
        duration_ms: int(row.u_duration_ms),
        observed_at: int(row.u_observed_at),
        settled_at: int(row.u_settled_at),
        cost_subcents: int(row.u_cost_subcents),
        occurred_at: int(row.u_occurred_at),
        usage_tokens: int(row.u_usage_tokens),
        usage_cost_subcents: int(row.u_usage_cost_subcents),
        usage_cost_source: int(row.u_usage_cost_source),
        usage_complete: int(row.u_usage_complete),
      };
      continue;
    }
    if (row.level_groups !== null && row.level_groups !== undefined) cutGroups[lvl - 1] = int(row.level_groups);
    // the group is its figures with its keys after them (the document's member order), added in
    // place: a copy of each group's figures was a tenth of --by task's JavaScript at 50,000 groups
    levels[lvl - 1]!.push(
      Object.assign(f, {
        by: by,
        key: int(row.gnull) === 1 ? null : String(row.gkey),
        title: row.title === null || row.title === undefined ? null : String(row.title),
        lower_bound: int(row.lower_bound) === 1,
        started_at: instant(row.started),
      }),
    );
  }
  const levelGroups = levels.map((groups, i) => cutGroups[i] ?? groups.length);
  return {
    totals: totals!,
    levels,
    levelGroups,
    lowerBoundSessions,
    unreadable: unreadable!,
    overflow: overflowOf(scopes, main),
    ...(histogram ? { distributions: toDistributions(durations) } : {}),
  };
}

/** Reported durations per bucket (bucket i of DURATION_BUCKET_UPPER_MS, the last one unbounded). */
function toDistributions(counts: ReadonlyMap<number, number>): Distributions {
  const buckets = [...DURATION_BUCKET_UPPER_MS, null].map((to, i) => ({
    from_ms: i === 0 ? 0 : DURATION_BUCKET_UPPER_MS[i - 1]!,
    to_ms: to,
    subagents: counts.get(i) ?? 0,
  }));
  return { duration_ms: { reported: buckets.reduce((sum, b) => sum + b.subagents, 0), buckets } };
}

function toFigures(row: Row, lists: { models: Figures['models']; fan_out: Figures['fan_out'] } | undefined): Figures {
  return {
    subagents: int(row.subagents),
    top_level: int(row.top_level),
    nested: int(row.nested),
    async: int(row.async),
    live: int(row.live),
    backfill: int(row.backfill),
    settled: int(row.settled),
    failed: int(row.failed),
    tokens: {
      sum: nullableInt(row.tokens_sum),
      reported: int(row.tokens_reported),
      p50: nullableInt(row.tokens_p50),
      p95: nullableInt(row.tokens_p95),
      max: nullableInt(row.tokens_max),
    },
    tool_uses: { sum: nullableInt(row.tool_uses_sum), reported: int(row.tool_uses_reported) },
    duration_ms: {
      reported: int(row.duration_reported),
      p50: nullableInt(row.duration_p50),
      p95: nullableInt(row.duration_p95),
      max: nullableInt(row.duration_max),
    },
    models: lists?.models ?? { counts: [], unreported: 0 },
    fan_out: lists?.fan_out ?? [],
    executions: int(row.executions),
    unknown_execution: int(row.unknown_execution),
    turns: int(row.turns),
    sessions: nullableInt(row.sessions),
    orphan_rows: int(row.orphan_rows),
    contexts: nullableInt(row.contexts),
    cost_subcents: nullableInt(row.cost_subcents),
    estimated_cost_subcents: nullableInt(row.estimated_cost_subcents),
    cost_per_context_subcents: nullableInt(row.cost_per_context_subcents),
    unpriced_events: nullableInt(row.unpriced_events),
    // R5-1: a cost figure that leaves out an unpriced event is a lower bound
    cost_lower_bound: nullableInt(row.unpriced_events) !== null && int(row.unpriced_events) > 0,
    // R6-9: the estimated part counts its own unpriced events, and is a lower bound only by them
    estimated_unpriced_events: nullableInt(row.estimated_unpriced_events),
    estimated_cost_lower_bound: (nullableInt(row.estimated_unpriced_events) ?? 0) > 0,
    measured_cost_subcents: nullableInt(row.measured_cost_subcents),
    list_priced_cost_subcents: nullableInt(row.list_priced_cost_subcents),
    first_observed_at: instant(row.first_observed),
    last_observed_at: instant(row.last_observed),
    spend: toSpend(row),
  };
}

/** R6-5: statement 1's spend columns (sql.ts spendColumns), every one null without the usage table. */
function toSpend(row: Row): Figures['spend'] {
  return {
    subagents_with_usage: nullableInt(row.spend_with),
    complete: nullableInt(row.spend_complete),
    tokens_in: nullableInt(row.spend_tokens_in),
    tokens_out: nullableInt(row.spend_tokens_out),
    tokens_cached_read: nullableInt(row.spend_tokens_cached_read),
    tokens_cached_write: nullableInt(row.spend_tokens_cached_write),
    tokens_reasoning: nullableInt(row.spend_tokens_reasoning),
    cost_subcents: nullableInt(row.spend_cost),
    measured_cost_subcents: nullableInt(row.spend_measured),
    list_priced_cost_subcents: nullableInt(row.spend_listed),
    unpriced: nullableInt(row.spend_unpriced),
    cost_lower_bound: row.spend_lower_bound === null ? null : int(row.spend_lower_bound) === 1,
    cost_p50_subcents: nullableInt(row.spend_p50),
    cost_p95_subcents: nullableInt(row.spend_p95),
    cost_max_subcents: nullableInt(row.spend_max),
  };
}

const groupKey = (row: Row) => `${int(row.lvl)}\u0000${int(row.gnull)}\u0000${String(row.gkey)}`;

/** Drivers return COUNT and SUM as numbers or (PostgreSQL bigint) decimal text. */
function nullableInt(value: unknown): number | null {
  return value === null || value === undefined ? null : int(value);
}

function int(value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n))
    throw new Error(`the report expected an integer from the database, got ${String(value)}`);
  return n;
}

function instant(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const us = parseStoredTimestamp(String(value));
  if (us === undefined) throw new Error(`the report expected a timestamp from the database, got ${String(value)}`);
  return formatRfc3339(us);
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
