import type { Dialect } from '../db/dialect/dialect.js';
import { USAGE_TOKEN_FIELDS } from '../producer/usage/run-usage.js';
import { USAGE_KEY, USAGE_TABLE } from '../store/usage-table.js';

/*
 * R6-5 (docs/report.md#what-subagents-spent): how the report reads a subagent's run usage from our
 * task_session_subagent_usage, one home for both statements that read it (statement 1's spend, the
 * fan-out cost's subagent share). A usage row is joined to its subagent row on the table's primary
 * key (one LEFT JOIN, no pass of its own). The store is hostile (no CHECKs; any value in any column on
 * SQLite): a value is read only when it is what the column means, and each one that is not costs
 * its own figure (counted in completeness.unreadable), never the report.
 */

/** The largest count or cost read: what a JSON reader keeps exactly (2^53 − 1). */
export const USAGE_MAX = Number.MAX_SAFE_INTEGER;

/** The cost_source words that price a run (R6-1, the host ledger's words); 'unpriced' and anything else do not. */
const PRICED_SOURCES = ['provider_reported', 'models_dev_list'] as const;
/** Every word the column may hold (R6-1): any other value is unreadable. */
const SOURCE_WORDS = [...PRICED_SOURCES, 'unpriced'] as const;

const quoted = (words: readonly string[]) => words.map((w) => `'${w}'`).join(', ');

/** `LEFT JOIN` of the usage row (alias `us`) of the subagent row `r`, on the usage table's primary key. */
export const usageJoin = (r: string) =>
  `LEFT JOIN ${USAGE_TABLE} us ON ${USAGE_KEY.map((c) => `us.${c} = ${r}.${c}`).join(' AND ')}`;

/**
 * A joined usage row's values as every spend figure reads them (alias `us`, usageJoin):
 * - `complete`: NULL where the subagent has no usage row, else 1 where its `complete` is 1 (final)
 *   and 0 otherwise (NULL, 0 or any other value is not final): one column says both (statement 1
 *   sorts its rows once per level, so each column it carries costs every level);
 * - `tokens`: each token count when it is an integer in 0 … 2^53 − 1, else NULL;
 * - `cost`: the priced cost: `cost_subcents` an integer in 0 … 2^53 − 1 under a priced source
 *   (provider_reported, models_dev_list), and not 0 where a token count is above 0 (R6-1: that 0 is
 *   no price). NULL otherwise: the run is unpriced (cost_source 'unpriced', no cost, an unreadable
 *   cost or source);
 * - `listed`: 1 where the source is models_dev_list (the cost is list-priced), 0 where it is measured;
 * - the unreadable flags (R4-3): `uTokens` (how many of the five token counts hold a value not read),
 *   `uCost` (a cost under a priced source not read), `uSource` (a cost_source that is none of the
 *   three words), `uComplete` (a complete that is neither 0 nor 1).
 */
export function usageValues(d: Dialect): {
  complete: string;
  tokens: Record<(typeof USAGE_TOKEN_FIELDS)[number], string>;
  cost: string;
  listed: string;
  uTokens: string;
  uCost: string;
  uSource: string;
  uComplete: string;
} {
  const readable = (c: string) => d.readableInteger(`us.${c}`, 0, USAGE_MAX);
  const tokens = Object.fromEntries(USAGE_TOKEN_FIELDS.map((c) => [c, readable(c)])) as Record<
    (typeof USAGE_TOKEN_FIELDS)[number],
    string
  >;
  const cost = readable('cost_subcents');
  const priced = `us.cost_source IN (${quoted(PRICED_SOURCES)})`;
  const anyTokens = USAGE_TOKEN_FIELDS.map((c) => `COALESCE(${tokens[c]}, 0) > 0`).join(' OR ');
  const completeValue = d.readableInteger('us.complete', 0, 1);
  const flag = (raw: string, value: string) => `CASE WHEN ${raw} IS NOT NULL AND ${value} IS NULL THEN 1 ELSE 0 END`;
  return {
    complete: `CASE WHEN us.${USAGE_KEY[0]} IS NULL THEN NULL WHEN ${completeValue} = 1 THEN 1 ELSE 0 END`,
    tokens,
    cost: `CASE WHEN ${priced} AND NOT (${cost} = 0 AND (${anyTokens})) THEN ${cost} END`,
    listed: "CASE WHEN us.cost_source = 'models_dev_list' THEN 1 ELSE 0 END",
    uTokens: USAGE_TOKEN_FIELDS.map((c) => flag(`us.${c}`, tokens[c])).join(' + '),
    uCost: `CASE WHEN ${priced} AND us.cost_subcents IS NOT NULL AND ${cost} IS NULL THEN 1 ELSE 0 END`,
    uSource: `CASE WHEN us.cost_source IS NOT NULL AND us.cost_source NOT IN (${quoted(SOURCE_WORDS)}) THEN 1 ELSE 0 END`,
    uComplete: flag('us.complete', completeValue),
  };
}

/**
 * The sum of a non-negative integer column over a group, NULL when it lies beyond 2^53 − 1 (what a
 * JSON reader keeps exactly) or no row has a value. Summed as doubles: every value is an integer
 * in 0 … 2^53 − 1 (usageValues), so while the sum stays within 2^53 − 1 every partial sum is an
 * exact double, and once it passes it the sum never comes back below 2^53 (non-negative values, a
 * monotone rounding). An integer SUM could pass 2^63 over a thousand such rows: SQLite then fails
 * the statement ("integer overflow"), where this costs one figure. `combine`: the sum of partial
 * sums of the same kind (the partial `SUM(CAST(… AS DOUBLE PRECISION))`).
 */
export const exactSum = (expr: string, combine = false) => {
  const sum = combine ? `SUM(${expr})` : `SUM(CAST(${expr} AS DOUBLE PRECISION))`;
  return `CAST(CASE WHEN ${sum} <= ${USAGE_MAX} THEN ${sum} END AS BIGINT)`;
};

/** The partial sum exactSum(…, true) combines. */
export const partialExactSum = (expr: string) => `SUM(CAST(${expr} AS DOUBLE PRECISION))`;

/** completeness.unreadable's spend columns (R4-3): each a `u_<name>` flag of statement 1's rows. */
export const SPEND_UNREADABLE = ['usage_tokens', 'usage_cost_subcents', 'usage_cost_source', 'usage_complete'] as const;

/**
 * Statement 1's per-row spend columns (`sp_*` and the SPEND_UNREADABLE flags) of a row joined by
 * usageJoin: `sp_complete` (NULL: no usage), the token counts, `sp_cost` (the priced cost) and
 * `sp_listed`.
 */
export function spendRowColumns(d: Dialect): string {
  const u = usageValues(d);
  return [
    `${u.complete} AS sp_complete`,
    ...USAGE_TOKEN_FIELDS.map((c) => `${u.tokens[c]} AS sp_${c}`),
    `${u.cost} AS sp_cost`,
    `${u.listed} AS sp_listed`,
    `${u.uTokens} AS u_usage_tokens`,
    `${u.uCost} AS u_usage_cost_subcents`,
    `${u.uSource} AS u_usage_cost_source`,
    `${u.uComplete} AS u_usage_complete`,
  ].join(',\n    ');
}

/**
 * Statement 1's spend figures over a group's rows (sql.ts RowFigure: each adds up, so the rolled-up
 * levels combine them): the rows with usage, the final ones, the priced ones (`spend_priced`, the
 * count behind `unpriced` and the cost sums' overflow), each token sum with its count of values
 * (`_n`: a NULL sum with values is an overflow), the priced cost, its measured and list-priced
 * parts, and the largest priced cost.
 */
export const SPEND_ROW_FIGURES: readonly { name: string; fn: 'COUNT' | 'SUM' | 'MAX' | 'exact'; arg: string }[] = [
  { name: 'spend_with', fn: 'COUNT', arg: 'sp_complete' },
  { name: 'spend_complete', fn: 'SUM', arg: 'sp_complete' },
  { name: 'spend_priced', fn: 'COUNT', arg: 'sp_cost' },
  ...USAGE_TOKEN_FIELDS.flatMap((c) => [
    { name: `spend_${c}`, fn: 'exact' as const, arg: `sp_${c}` },
    { name: `spend_${c}_n`, fn: 'COUNT' as const, arg: `sp_${c}` },
  ]),
  { name: 'spend_cost', fn: 'exact', arg: 'sp_cost' },
  { name: 'spend_measured', fn: 'exact', arg: 'sp_cost * (1 - sp_listed)' },
  { name: 'spend_listed', fn: 'exact', arg: 'sp_cost * sp_listed' },
  { name: 'spend_max', fn: 'MAX', arg: 'sp_cost' },
];

/**
 * Statement 1's spend columns of a group from its figures (alias `f`, NULL for a group with no
 * row), each NULL where the store has no usage table (`usage` false). `spend_overflow`: how many of
 * the group's spend sums are NULL for lying beyond 2^53 − 1 (notes.ts).
 */
export function spendColumns(usage: boolean): string {
  const none = 'CAST(NULL AS BIGINT)';
  const count = (name: string) => `COALESCE(f.${name}, 0)`;
  const sums = [...USAGE_TOKEN_FIELDS.map((c) => `spend_${c}`), 'spend_cost', 'spend_measured', 'spend_listed'];
  const countOf = (sum: string) => (sum.startsWith('spend_tokens') ? `f.${sum}_n` : 'f.spend_priced');
  const columns: [string, string][] = [
    ['spend_with', count('spend_with')],
    ['spend_complete', count('spend_complete')],
    ...sums.map((name): [string, string] => [name, `f.${name}`]),
    ['spend_unpriced', `${count('spend_with')} - ${count('spend_priced')}`],
    [
      'spend_lower_bound',
      `CASE WHEN ${count('spend_with')} > ${count('spend_priced')} OR ${count('spend_with')} > ${count('spend_complete')} THEN 1 ELSE 0 END`,
    ],
    ['spend_p50', 'f.spend_p50'],
    ['spend_p95', 'f.spend_p95'],
    ['spend_max', 'f.spend_max'],
    [
      'spend_overflow',
      sums.map((name) => `CASE WHEN f.${name} IS NULL AND ${countOf(name)} > 0 THEN 1 ELSE 0 END`).join(' + '),
    ],
  ];
  return columns.map(([name, expression]) => `${usage ? expression : none} AS ${name}`).join(', ');
}
