import * as z from 'zod/mini';
import type { CostSource, UsageCountField } from '../producer/usage/run-usage.js';

/*
 * The report document (docs/report.md, R3-5…R3-9), version 1: the one definition of what
 * `subagent-context report --json` prints. The terminal table, the CSV, the HTML page and the OTLP
 * export only consume a value of this shape; none of them computes a figure again. The committed
 * JSON Schema (schema/report.v1.schema.json, `npm run schema`) is generated from this file, as the
 * frame's is from lib/frame/schema.ts.
 *
 * Honesty rules (R3-6): a sum is `null` when `reported` is 0 (NULL is never 0); percentiles are
 * nearest-rank over reported values only; 'unknown' is never an execution; instants are RFC 3339
 * UTC text with microseconds (`2026-08-12T13:24:58.123456Z`).
 */

const count = z.int().check(z.minimum(0));
const instant = z.string().check(z.meta({ format: 'date-time', description: 'RFC 3339 UTC, microseconds' }));
const nullableInstant = z.nullable(instant);

/** A metric column's sum over the rows that reported it (R3-6: null when none did). */
export const metricSum = z.object({
  sum: z.nullable(count),
  reported: count,
});

/**
 * R5-4: total_tokens, what each subagent reported of its context at finish (its final request's
 * input + cache + output for Claude Code, docs/report.md#what-total_tokens-means), never its spend:
 * the sum and, over the reported values, nearest-rank p50 and p95 and the max (null when none).
 */
export const tokenFigures = z.extend(metricSum, {
  p50: z.nullable(count),
  p95: z.nullable(count),
  max: z.nullable(count),
});

/** duration_ms over reported rows: nearest-rank percentiles (rank ⌈p/100 · n⌉), null when n = 0. */
export const durationFigures = z.object({
  reported: count,
  p50: z.nullable(count),
  p95: z.nullable(count),
  max: z.nullable(count),
});

/** Subagents per model, most first then by name; rows without a model are `unreported`. */
export const modelCounts = z.object({
  counts: z.array(z.object({ model: z.string(), subagents: count })),
  unreported: count,
});

/** Fan-out histogram: `turns` turns launched exactly `top_level` top-level subagents (k ≥ 1, ascending). */
export const fanOutBucket = z.object({ top_level: count, turns: count });

/**
 * R6-5 (docs/report.md#what-subagents-spent): what the scope's subagents spent over their whole
 * runs, from our task_session_subagent_usage (R6-2), never from total_tokens. Every figure is null
 * where the store has no usage table (a note says so). The sums are over the rows with usage, each
 * null when none reported it (or when it lies beyond 2^53 − 1, a note then); a run is priced when
 * its cost_source is provider_reported or models_dev_list with a readable cost (a 0 with tokens
 * above 0 is no price, R6-1), else unpriced.
 */
export const spendFigures = z.object({
  /** rows in scope with a usage row */
  subagents_with_usage: z.nullable(count),
  /** of them, those whose usage is final (complete = 1) */
  complete: z.nullable(count),
  tokens_in: z.nullable(count),
  tokens_out: z.nullable(count),
  tokens_cached_read: z.nullable(count),
  tokens_cached_write: z.nullable(count),
  tokens_reasoning: z.nullable(count),
  /** the priced runs' cost (subcents); null when no run in scope is priced */
  cost_subcents: z.nullable(count),
  /** the part the agent reported itself (provider_reported) */
  measured_cost_subcents: z.nullable(count),
  /** the part priced at a list price (models_dev_list) */
  list_priced_cost_subcents: z.nullable(count),
  /** rows with usage and no price (cost_source unpriced, no cost, or an unreadable cost or source) */
  unpriced: z.nullable(count),
  /** a row in scope has usage unpriced or not final: every cost figure is a lower bound */
  cost_lower_bound: z.nullable(z.boolean()),
  /** what one subagent spent: nearest-rank p50 and p95, and the max, over the priced runs (null when none) */
  cost_p50_subcents: z.nullable(count),
  cost_p95_subcents: z.nullable(count),
  cost_max_subcents: z.nullable(count),
});

/** Every figure of one scope (the whole store, or one group); the names are the JSON contract. */
export const figures = z.object({
  subagents: count,
  top_level: count,
  nested: count,
  async: count,
  live: count,
  backfill: count,
  settled: count,
  /** tool_status error, failed or cancelled */
  failed: count,
  tokens: tokenFigures,
  tool_uses: metricSum,
  duration_ms: durationFigures,
  models: modelCounts,
  fan_out: z.array(fanOutBucket),
  /** distinct agent_execution_id other than 'unknown' */
  executions: count,
  /** rows whose agent_execution_id is 'unknown' */
  unknown_execution: count,
  /** distinct turns that launched at least one subagent */
  turns: count,
  /** the scope's rows in the host's task_sessions (R3-7); null where the scope has no sessions of its own (type, model) */
  sessions: z.nullable(count),
  /**
   * Added in version 1 (additive): rows whose task_session_id is not in task_sessions (a session
   * the host deleted; R4-7). They are subagents like any other row, never a session.
   */
  orphan_rows: count,
  /** sessions + subagents (R3-7); null when sessions is */
  contexts: z.nullable(count),
  /** from the host's office_cost_events (R3-7); null when the store has no such table or the scope has no cost of its own */
  cost_subcents: z.nullable(z.int()),
  estimated_cost_subcents: z.nullable(z.int()),
  /**
   * cost_subcents ÷ contexts, rounded half away from zero to an integer (down where the cost is a
   * lower bound, R6-11); null when either is null or contexts is 0
   */
  cost_per_context_subcents: z.nullable(z.int()),
  /**
   * Added in version 1 (additive), R5-1: the scope's cost events whose cost_source is 'unpriced'
   * (the host found no price and stored 0): they add nothing to any cost figure. null where the
   * ledger has no cost_source column (not known) or the scope has no cost of its own.
   */
  unpriced_events: z.nullable(count),
  /**
   * R5-1: cost_subcents and cost_per_context_subcents leave out unpriced events (unpriced_events >
   * 0): each is a lower bound. false otherwise. (R6-9: estimated_cost_subcents has its own flag.)
   */
  cost_lower_bound: z.boolean(),
  /**
   * Added in version 1 (additive), R6-9: of unpriced_events, those with estimated = 1, the only
   * ones estimated_cost_subcents leaves out; null where unpriced_events is.
   */
  estimated_unpriced_events: z.nullable(count),
  /** R6-9: estimated_unpriced_events > 0: estimated_cost_subcents is a lower bound (by its own count). false otherwise */
  estimated_cost_lower_bound: z.boolean(),
  /** R5-2: the part of cost_subcents the agent reported itself (cost_source 'provider_reported'); null without the column */
  measured_cost_subcents: z.nullable(z.int()),
  /** R5-2: the part the host priced at a list price (cost_source 'models_dev_list'); null without the column */
  list_priced_cost_subcents: z.nullable(z.int()),
  first_observed_at: nullableInstant,
  last_observed_at: nullableInstant,
  /** additive (version 1 still), R6-5: what the scope's subagents spent (spendFigures) */
  spend: spendFigures,
});

export const GROUP_BY = ['task', 'session', 'turn', 'type', 'model', 'day'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const SORT_BY = ['subagents', 'contexts', 'tokens', 'cost', 'key', 'last_observed_at'] as const;
export type SortBy = (typeof SORT_BY)[number];

export const group = z.extend(figures, {
  by: z.enum(GROUP_BY),
  /** the task, session or turn id; the subagent_type or model (null when not reported); the UTC day YYYY-MM-DD */
  key: z.nullable(z.string()),
  /** tasks.title where the host has one (task groups only), else null */
  title: z.nullable(z.string()),
  /** the group holds a session with activity before capture_since: its fan-out is a lower bound (R3-6, AC-25) */
  lower_bound: z.boolean(),
  /**
   * Added in version 1 (additive): task_sessions.started_at where the host has it: the session's
   * start (session groups), its task's first session's start (task groups); else null.
   */
  started_at: nullableInstant,
});

/** R3-8: how complete the figures are, computed read-only. */
export const completeness = z.object({
  /** kandev_meta subagent_context_capture_since; null: never activated */
  capture_since: nullableInstant,
  /** kandev_meta subagent_context_backfill_through; null: no backfill ran or it covered nothing */
  backfill_through: nullableInstant,
  /** the scheduled health check's checkpoint; null: the check has not run */
  verified_through: nullableInstant,
  /**
   * an open shortfall: qualifying messages created from verified_through (else capture_since) to
   * now − grace with no row, read-only. `checked` (added in version 1, additive): false when it
   * could not be computed (not activated, or a store our migrate has not run on; see notes), so
   * `count` 0 then says nothing.
   */
  shortfall: z.object({ open: z.boolean(), count: count, checked: z.boolean() }),
  /** up to 20 of the missing keys */
  missing: z.array(z.object({ task_session_id: z.string(), tool_call_id: z.string() })),
  /**
   * Added in version 1 (additive), R4-3: values in the totals' scope the report could not read,
   * per column, every column present (0: none). Each such value is not reported for its figure;
   * every other figure is exact (docs/report.md#unreadable-values).
   */
  unreadable: z.object({
    /** metrics that are not an integer in 0 … 2^31 − 1 (text, a fraction, a negative or larger value) */
    total_tokens: count,
    tool_use_count: count,
    duration_ms: count,
    /**
     * rows whose observed_at is not an instant (0001 … 9999): counted in the scope's row figures
     * without a time filter, in no window with one, never in a day, first/last_observed_at or tree
     */
    observed_at: count,
    /** rows whose settled_at is not an instant: not counted as settled (R4-3), not settled in a tree */
    settled_at: count,
    /** cost events (office_cost_events) whose cost_subcents is not a number that rounds to an integer in −2^31 … 2^31 − 1 */
    cost_subcents: count,
    /** cost events whose occurred_at is not an instant: summed without a time filter, in no window with one */
    occurred_at: count,
    /**
     * additive (version 1 still), R6-5: values of task_session_subagent_usage (the rows in scope's
     * usage) not read: token counts that are not an integer in 0 … 2^53 − 1 (each one counted; its
     * sum leaves it out), a cost under a priced source that is not (the run is unpriced), a
     * cost_source none of provider_reported, models_dev_list, unpriced (unpriced), a complete
     * neither 0 nor 1 (not final). 0 each where the store has no usage table.
     */
    usage_tokens: count,
    usage_cost_subcents: count,
    usage_cost_source: count,
    usage_complete: count,
  }),
  /** sessions in scope with activity before capture_since: their fan-out is a lower bound */
  lower_bound_sessions: count,
  /**
   * Added in version 1 (additive), R5-1: the totals' cost events whose cost_source is 'unpriced'
   * (every cost figure that omits one is a lower bound); null where the ledger has no cost_source
   * column, or the store no ledger.
   */
  unpriced_events: z.nullable(count),
  /** why a figure is null or partial, one sentence each (no cost table, not activated, …) */
  notes: z.array(z.string()),
});

/** A row's metric columns: the figures sum them (sql.ts), a tree node's `unreadable` names them. */
export const METRIC_COLUMNS = ['total_tokens', 'tool_use_count', 'duration_ms'] as const;
export type MetricColumn = (typeof METRIC_COLUMNS)[number];

/** The usage columns a node's `usage.unreadable` can name (R4-3): those with a type or range to hold. */
export type UsageReadColumn = UsageCountField | 'cost_subcents' | 'cost_source' | 'complete' | 'observed_at';

/**
 * R6-7: a node's run usage, its row of task_session_subagent_usage (docs/spend.md), as the tree
 * reader gives it to the OTLP export (read only when asked: never in report documents). Each
 * value is null when not reported or not readable; `unreadable` names the columns whose stored
 * value could not be read (a negative count, text, a cost_source that is none of R6-1's words).
 */
export type NodeUsage = Record<UsageCountField | 'cost_subcents', number | null> & {
  cost_source: CostSource | null;
  model: string | null;
  complete: boolean | null;
  /** the observation the usage is as of */
  observed_at: string | null;
  unreadable?: UsageReadColumn[];
};

/** One subagent in a fan-out tree (the row's own values; metrics null when not reported). */
export interface TreeNode {
  task_session_id: string;
  tool_call_id: string;
  agent_execution_id: string;
  parent_tool_call_id: string | null;
  subagent_type: string | null;
  description: string | null;
  /** the subagent's own id and, for OpenCode, its child session (optional: additive) */
  agent_id?: string | null;
  child_session_id?: string | null;
  model: string | null;
  agent_status: string | null;
  tool_status: string | null;
  is_async: boolean;
  source: 'live' | 'backfill';
  total_tokens: number | null;
  tool_use_count: number | null;
  duration_ms: number | null;
  /**
   * R4-3: the metrics this row holds a value for that is not a count in range (e.g. -1, or text
   * on SQLite): each is null above. Absent when there is none (additive, optional), so a reader
   * (the export's `summary.unreadable`) can tell such a value from one never reported.
   */
  unreadable?: MetricColumn[];
  observed_at: string;
  settled_at: string | null;
  /**
   * true: parent_tool_call_id names no row of this turn (same session and execution), or its
   * parent chain loops; the node is placed at the top level. Absent otherwise (additive, optional).
   */
  orphan?: boolean;
  /** R6-7: the run usage stored for this row, when the reader was asked for it (the export); absent: none */
  usage?: NodeUsage;
  children: TreeNode[];
}

export const treeNode: z.ZodMiniType<TreeNode> = z.object({
  task_session_id: z.string(),
  tool_call_id: z.string(),
  agent_execution_id: z.string(),
  parent_tool_call_id: z.nullable(z.string()),
  subagent_type: z.nullable(z.string()),
  description: z.nullable(z.string()),
  agent_id: z.optional(z.nullable(z.string())),
  child_session_id: z.optional(z.nullable(z.string())),
  model: z.nullable(z.string()),
  agent_status: z.nullable(z.string()),
  tool_status: z.nullable(z.string()),
  is_async: z.boolean(),
  source: z.enum(['live', 'backfill']),
  total_tokens: z.nullable(count),
  tool_use_count: z.nullable(count),
  duration_ms: z.nullable(count),
  unreadable: z.optional(z.array(z.enum(METRIC_COLUMNS))),
  observed_at: instant,
  settled_at: nullableInstant,
  orphan: z.optional(z.boolean()),
  get children() {
    return z.array(treeNode);
  },
});

/** One turn's fan-out: its top-level subagents, each with the subagents nested under it. */
export const turnTree = z.object({
  task_id: z.string(),
  /**
   * additive (version 1 still): tasks.title of the tree's task where the host has one (null: the
   * task has none), in `report` documents; absent where the store has no task titles, and in the export
   */
  task_title: z.optional(z.nullable(z.string())),
  task_session_id: z.string(),
  /** null: rows whose turn the host did not record */
  turn_id: z.nullable(z.string()),
  /** task_session_turns.started_at where the host has it, else the first observation */
  started_at: instant,
  completed_at: nullableInstant,
  subagents: z.array(treeNode),
});

/**
 * Upper bounds (exclusive, ms) of the duration histogram's buckets; the last bucket has no upper
 * bound. Roughly logarithmic, so a few long subagents and many short ones both show.
 */
export const DURATION_BUCKET_UPPER_MS = [
  1_000, 5_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000,
] as const;

/** One histogram bucket: `subagents` reported rows with from_ms ≤ duration_ms < to_ms (to_ms null: no upper bound). */
export const durationBucket = z.object({ from_ms: count, to_ms: z.nullable(count), subagents: count });

/** The page's distributions (R3-9), over the same scope as `totals`: reported rows only, with n. */
export const distributions = z.object({
  duration_ms: z.object({
    /** rows with a duration_ms (the histogram's n; equals totals.duration_ms.reported) */
    reported: count,
    /** every bucket of DURATION_BUCKET_UPPER_MS, ascending, empty ones included */
    buckets: z.array(durationBucket),
  }),
});

/**
 * R4-12: the figures a series group leaves out. The page draws no group's durations, executions,
 * turns, models or fan-out (its charts of those read `totals`), and these are the figures that cost
 * a sort of every row per group (percentiles, distinct counts) or a pass of their own (the lists):
 * a series level does not compute them, so its group does not hold them (NULL is never 0).
 */
/** R6-5: the spend figures a series group leaves out (the per-subagent percentiles). */
const SERIES_SPEND_LEAVES_OUT = { cost_p50_subcents: true, cost_p95_subcents: true } as const;

const SERIES_LEAVES_OUT = {
  duration_ms: true,
  executions: true,
  unknown_execution: true,
  turns: true,
  models: true,
  fan_out: true,
} as const;

/**
 * A group of the page's series: a `group` without the figures in SERIES_LEAVES_OUT, its tokens
 * the sum and count only (R5-4's percentiles are a sort per group, like the durations').
 */
export const seriesGroup = z.extend(z.omit(group, SERIES_LEAVES_OUT), {
  tokens: metricSum,
  /** R6-5: the spend figures but the percentiles (a sort per group, as R5-4's) */
  spend: z.omit(spendFigures, SERIES_SPEND_LEAVES_OUT),
});

/**
 * R6-6: a group of the page's type series: a series group whose spend keeps the per-subagent
 * percentiles (the page's chart of what one subagent of each type spent). The type level is few
 * groups, computed with its percentiles (build.ts); additive in version 1.
 */
export const typeSeriesGroup = z.extend(seriesGroup, { spend: spendFigures });

/**
 * The page's breakdowns (R3-9), over the same scope as `totals` and whatever `--by` asked for:
 * one group per UTC day, subagent type and task, each in `sort` order, with the figures the page
 * draws (seriesGroup). Present when the caller asked for the page's data (`report --html`);
 * `groups` stays the `--by` answer, with every figure.
 */
export const series = z.object({
  day: z.optional(z.array(seriesGroup)),
  /** R6-6: with the spend percentiles (typeSeriesGroup) */
  type: z.optional(z.array(typeSeriesGroup)),
  /** not filled since R4-12: the page's by-model chart reads `totals.models` (kept: older documents have it) */
  model: z.optional(z.array(seriesGroup)),
  /** R4-12: the first `task_groups` of them at most: the page's task rows (report --html: PAGE_DEFAULTS.tasks) */
  task: z.optional(z.array(seriesGroup)),
  /** additive (version 1 still): how many task groups the scope has (`task` holds the first of them) */
  task_groups: z.optional(count),
});

/** R5-3: the fan-out buckets, in this order: a turn's top-level subagents (0, 1, 2, 3, 4–5, 6–8, 9 or more). */
export const FAN_OUT_COST_BUCKETS = ['0', '1', '2', '3', '4-5', '6-8', '9+'] as const;

/**
 * R5-3: what a turn costs, by how many subagents it fanned out to. A turn's cost is the sum of its
 * ledger events (turn_id), at any occurred_at; the cost figures are over the costed turns only.
 */
export const fanOutCostBucket = z.object({
  /** the bucket's label (FAN_OUT_COST_BUCKETS) */
  fan_out: z.enum(FAN_OUT_COST_BUCKETS),
  /** turns in scope whose top-level subagents (rows with the turn's id, observed whenever) fall in the bucket */
  turns: count,
  /** turns with at least one ledger event, none unpriced and every cost readable */
  costed_turns: count,
  /** turns with at least one unpriced event: their cost is not known (null without cost_source) */
  unpriced_turns: z.nullable(count),
  /** turns with no ledger event */
  turns_without_cost: count,
  /** turns with an event whose cost_subcents is not readable and none unpriced (R4-3: counted, not costed) */
  unreadable_cost_turns: count,
  /** the costed turns' costs: their sum, mean (rounded half away from zero), nearest-rank median and p95; null when costed_turns is 0 */
  cost_subcents: z.nullable(z.int()),
  mean_subcents: z.nullable(z.int()),
  median_subcents: z.nullable(z.int()),
  p95_subcents: z.nullable(z.int()),
  /**
   * additive (version 1 still), R6-5: the bucket's turns whose every top-level subagent has priced,
   * final usage (a turn of bucket 0 has none to miss); null where the store has no usage table
   */
  spend_known_turns: z.nullable(count),
  /** over those turns, their top-level subagents' cost (subcents); null when there is none */
  subagent_cost_subcents: z.nullable(count),
  /**
   * over those turns whose own cost is known and above 0 (costed), the median (nearest rank) of the
   * subagents' cost ÷ the turn's cost, a ratio rounded to 4 decimals (0.25: a quarter; above 1 where
   * the subagents spent more than the ledger holds for the turn); null when there is no such turn
   */
  subagent_share: z.nullable(z.number().check(z.minimum(0))),
  /**
   * Added in version 1 (additive), R6-10: the cost of the priced, readable events of the bucket's
   * turns that are not costed (a turn with an unpriced or unreadable event among them); null when
   * no such turn has a priced, readable event (never $0 for nothing priced). Without
   * filters, the buckets' cost_subcents, these and unattributed_cost_subcents add up to the totals'
   * cost_subcents (each event once).
   */
  uncosted_turns_priced_cost_subcents: z.nullable(z.int()),
});

export const fanOutCost = z.object({
  /** all seven buckets, in FAN_OUT_COST_BUCKETS order, empty ones included */
  buckets: z.array(fanOutCostBucket),
  /** events in scope (their session in the filter, occurred_at in the window) whose turn_id is NULL, '' or no turn of task_session_turns */
  unattributed_events: count,
  /** their cost (unpriced ones add nothing); null when there is none */
  unattributed_cost_subcents: z.nullable(z.int()),
  /** of them, those unpriced; null without cost_source */
  unattributed_unpriced_events: z.nullable(count),
  /**
   * with --since/--until: turns of the filter whose started_at is not an instant, so in no window
   * (R4-3); null without a window, where the starts are not read (every turn is in scope)
   */
  unreadable_started_at: z.nullable(count),
});

export const reportDocument = z.object({
  version: z.literal(1),
  generated_at: instant,
  filters: z.object({
    since: nullableInstant,
    until: nullableInstant,
    task: z.nullable(z.string()),
    session: z.nullable(z.string()),
    by: z.nullable(z.enum(GROUP_BY)),
    sort: z.enum(SORT_BY),
    limit: z.nullable(count),
  }),
  completeness,
  totals: figures,
  groups: z.array(group),
  /** the most recent turns' fan-out trees (`--trees N`), newest first; [] unless asked for */
  trees: z.array(turnTree),
  /** additive (version 1 still): the page's per-day, type and task groups; absent unless asked for */
  series: z.optional(series),
  /** additive (version 1 still): the page's duration histogram; absent unless asked for */
  distributions: z.optional(distributions),
  /**
   * additive (version 1 still), R5-3: what a turn costs by its fan-out, over the totals' scope;
   * null where the ledger has no turn_id, or a window is asked of turns without started_at
   * (completeness.notes says why)
   */
  fan_out_cost: z.nullable(fanOutCost),
});

export type Figures = z.infer<typeof figures>;
export type Group = z.infer<typeof group>;
export type Completeness = z.infer<typeof completeness>;

/** R4-3: every value read (each column of `completeness.unreadable` at 0). */
export const NOTHING_UNREADABLE: Readonly<Completeness['unreadable']> = Object.freeze({
  total_tokens: 0,
  tool_use_count: 0,
  duration_ms: 0,
  observed_at: 0,
  settled_at: 0,
  cost_subcents: 0,
  occurred_at: 0,
  usage_tokens: 0,
  usage_cost_subcents: 0,
  usage_cost_source: 0,
  usage_complete: 0,
});
/** R6-5: the spend of any scope of a store without the usage table: every figure null, never 0. */
export const SPEND_NOT_COLLECTED: Readonly<Spend> = Object.freeze({
  subagents_with_usage: null,
  complete: null,
  tokens_in: null,
  tokens_out: null,
  tokens_cached_read: null,
  tokens_cached_write: null,
  tokens_reasoning: null,
  cost_subcents: null,
  measured_cost_subcents: null,
  list_priced_cost_subcents: null,
  unpriced: null,
  cost_lower_bound: null,
  cost_p50_subcents: null,
  cost_p95_subcents: null,
  cost_max_subcents: null,
});
export type Spend = z.infer<typeof spendFigures>;
export type TurnTree = z.infer<typeof turnTree>;
export type ReportDocument = z.infer<typeof reportDocument>;
export type Series = z.infer<typeof series>;
export type SeriesGroup = z.infer<typeof seriesGroup>;
export type TypeSeriesGroup = z.infer<typeof typeSeriesGroup>;
export type Distributions = z.infer<typeof distributions>;
export type FanOutCost = z.infer<typeof fanOutCost>;
export type FanOutCostBucket = z.infer<typeof fanOutCostBucket>;

/** A group as a series holds it: without the figures a series level does not compute (SERIES_LEAVES_OUT). */
export function seriesGroupOf(g: Group): SeriesGroup {
  const kept = Object.fromEntries(Object.entries(g).filter(([name]) => !(name in SERIES_LEAVES_OUT)));
  const { cost_p50_subcents: _p50, cost_p95_subcents: _p95, ...spend } = g.spend;
  return { ...kept, tokens: { sum: g.tokens.sum, reported: g.tokens.reported }, spend } as SeriesGroup;
}

/** R6-6: a group as the type series holds it: a series group with its spend whole. */
export function typeSeriesGroupOf(g: Group): TypeSeriesGroup {
  return { ...seriesGroupOf(g), spend: g.spend };
}
