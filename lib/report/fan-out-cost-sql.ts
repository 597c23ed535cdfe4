import type { Dialect } from '../db/dialect/dialect.js';
import type { StoreCatalog } from './catalog.js';
import { FAN_OUT_COST_BUCKETS } from './document.js';
import { exactSum, usageJoin, usageValues } from './spend-sql.js';
import {
  boundedSum,
  EVENT_TASK,
  ledgerValues,
  NONE,
  Params,
  RANKS,
  type ReportScope,
  roundedQuotient,
  type Statement,
  TOP_LEVEL,
} from './sql.js';

/*
 * R5-3 (docs/report.md#what-a-fan-out-costs): what a turn costs, by how many subagents it fanned
 * out to, in one statement over the totals' scope. A turn of task_session_turns is in scope when
 * its session is in the --task/--session filter and, with --since/--until, its started_at is in
 * the window (the window selects turns, not rows). Its fan-out is the number of top-level rows
 * with its id, whenever observed; its cost the sum of the ledger events with its id, at any
 * occurred_at (a turn's usage may be reported after it ends). Every figure is computed here.
 * R6-10: each event is counted once, in its turn's costed cost, in its uncosted turn's priced cost
 * (`uncosted_turns_priced_cost_subcents`) or among the unattributed events, so without filters the
 * three add up to the totals' cost.
 */

/** R6-5: a known turn whose every top-level subagent has priced, final usage (per_turn's `sk` of its `k`). */
const KNOWN_SPEND = 'CASE WHEN known = 1 AND sk = k THEN 1 ELSE 0 END';

/**
 * 1 where a turn's cost sum is beyond 2^53 − 1 (issue 57 #4, R4-3): its bucket's cost figures are
 * null, as the totals' are, never a failed report; 0 otherwise.
 */
const beyondSafe = (sum: string) =>
  `CASE WHEN ${sum} NOT BETWEEN -${Number.MAX_SAFE_INTEGER} AND ${Number.MAX_SAFE_INTEGER} THEN 1 ELSE 0 END`;

/** The bucket (an index of FAN_OUT_COST_BUCKETS) of a fan-out `k`: 0, 1, 2, 3, 4–5, 6–8, 9 or more. */
const BUCKET = (k: string) => `CASE WHEN ${k} <= 3 THEN ${k} WHEN ${k} <= 5 THEN 4 WHEN ${k} <= 8 THEN 5 ELSE 6 END`;

/**
 * The statement, or undefined where the section cannot be given (the reason: `fanOutCostGap`).
 * Rows: `kind` 'bucket' (one per non-empty bucket `b`; `over`: its costed turns whose cost is beyond
 * 2^53 − 1), 'unattributed' (the events on no turn, where there is any) and, with a window,
 * 'unreadable' (the turns whose start is held but is no instant: a NULL start is not reported, not
 * unreadable, issue 57 #15).
 */
export function fanOutCostStatement(d: Dialect, scope: ReportScope, catalog: StoreCatalog): Statement | undefined {
  if (fanOutCostGap(scope, catalog) !== undefined) return undefined;
  const ledger = catalog.costEvents!;
  const p = new Params(d);
  const byTask = scope.task !== undefined;
  const filter: string[] = [];
  if (scope.task !== undefined) filter.push(`s.task_id = ${p.text(scope.task)}`);
  if (scope.session !== undefined) filter.push(`t.task_session_id = ${p.text(scope.session)}`);
  // R4-12: the starts are read only where a window selects by them (an instant's readable test on
  // every turn was most of the statement: 0.8 of 3.2 s at 1M messages on PostgreSQL)
  const started = d.readableInstant('t.started_at');
  const window: string[] = [];
  if (scope.since !== undefined) window.push(`${started} >= ${p.instant(scope.since)}`);
  if (scope.until !== undefined) window.push(`${started} < ${p.instant(scope.until)}`);
  const { cost, unpriced, unreadableCost } = ledgerValues(d, ledger);
  // an event's own scope (for the unattributed ones): its session in the filter, occurred_at in the window
  const eventScope: string[] = [];
  if (scope.task !== undefined) eventScope.push(`${EVENT_TASK} = ${p.text(scope.task)}`);
  if (scope.session !== undefined) eventScope.push(`e.session_id = ${p.text(scope.session)}`);
  const occurred = d.readableInstant('e.occurred_at');
  if (scope.since !== undefined) eventScope.push(`${occurred} >= ${p.instant(scope.since)}`);
  if (scope.until !== undefined) eventScope.push(`${occurred} < ${p.instant(scope.until)}`);
  const inScope = (conditions: readonly string[]) =>
    conditions.length === 0 ? '1' : `CASE WHEN ${conditions.join(' AND ')} THEN 1 ELSE 0 END`;
  const priced = ledger.costSource;
  // R4-12: without a filter or window every turn and event is in scope, so a turn's in_scope is its
  // known and its events in scope are its events: the parts carry neither, and per_turn reads the
  // same aggregates under both names (each dialect computes an aggregate written twice once). Four
  // fewer aggregates over every turn, row and event: a sixth of the statement at 1M messages.
  const scoped = filter.length > 0 || window.length > 0;
  const scopeParts = (...values: string[]) => (scoped ? `, ${values.join(', ')}` : '');
  // R6-5: a top-level subagent's priced, final usage (`sk` 1) and its cost (`sc`), joined on the
  // usage table's key where the store has it; its cost read once per row (a fenced subquery: the
  // expression is long, and each dialect would repeat it wherever a flattened column is read)
  const usage = catalog.usage;
  const u = usageValues(d);
  const topRows = usage
    ? `SELECT turn_id, 0, 1, 0, 0, 0, ${NONE}${scopeParts('0', '0', '0', NONE)}, CASE WHEN c IS NOT NULL AND done = 1 THEN 1 ELSE 0 END, CASE WHEN done = 1 THEN c END
  FROM (
    SELECT r.turn_id, ${u.cost} AS c, ${u.complete} AS done
    FROM task_session_subagents r ${usageJoin('r')}
    WHERE ${TOP_LEVEL} AND r.turn_id IS NOT NULL AND r.turn_id <> '' ${d.fence}
  ) ru`
    : `SELECT r.turn_id, 0, 1, 0, 0, 0, ${NONE}${scopeParts('0', '0', '0', NONE)}, 0, ${NONE}
  FROM task_session_subagents r
  WHERE ${TOP_LEVEL} AND r.turn_id IS NOT NULL AND r.turn_id <> ''`;
  const turnsFrom = `task_session_turns t${byTask ? ' LEFT JOIN task_sessions s ON s.id = t.task_session_id' : ''}`;
  // R4-12: the turns, their top-level rows and their events are gathered by one GROUP BY on the
  // turn id, not joined (two groupings and two hash joins were 1.9 s at 1M messages on
  // PostgreSQL): a group with no turn of task_session_turns (`known` 0; NULL and '' among them)
  // holds events on no turn, the unattributed ones; a known turn is in scope by its own filter.
  const sql = `WITH parts AS (
  SELECT t.id AS turn_id, 1 AS known, 0 AS top, 0 AS events, 0 AS unpriced, 0 AS unreadable, ${NONE} AS cost${
    scoped
      ? `,
    ${inScope([...filter, ...window])} AS in_scope, 0 AS ev_scope, 0 AS ev_unpriced, ${NONE} AS ev_cost`
      : ''
  },
    0 AS sk, ${NONE} AS sc
  FROM ${turnsFrom} WHERE t.id <> ''
  UNION ALL
  ${topRows}
  UNION ALL
  SELECT turn_id, 0, 0, 1, unpriced, unreadable, cost${scopeParts('0', 'ev_scope', 'ev_scope * unpriced', 'CASE WHEN ev_scope = 1 THEN cost END')},
    0, ${NONE}
  FROM (
    SELECT COALESCE(e.turn_id, '') AS turn_id, ${cost} AS cost, ${unpriced} AS unpriced, ${unreadableCost} AS unreadable${
      scoped ? `, ${inScope(eventScope)} AS ev_scope` : ''
    }
    FROM office_cost_events e${byTask ? ' LEFT JOIN task_sessions s ON s.id = e.session_id' : ''}
  ) ev
),
per_turn AS (
  SELECT MAX(known) AS known, ${scoped ? 'MAX(in_scope)' : 'MAX(known)'} AS in_scope, SUM(top) AS k, SUM(events) AS events, SUM(unpriced) AS unpriced,
    SUM(unreadable) AS unreadable, ${boundedSum('cost')} AS cost, ${beyondSafe('SUM(cost)')} AS over,
    ${
      scoped
        ? 'SUM(ev_scope) AS ev_scope, SUM(ev_unpriced) AS ev_unpriced, CAST(SUM(ev_cost) AS BIGINT) AS ev_cost'
        : 'SUM(events) AS ev_scope, SUM(unpriced) AS ev_unpriced, CAST(SUM(cost) AS BIGINT) AS ev_cost'
    },
    SUM(sk) AS sk, ${exactSum('sc')} AS sc
  FROM parts GROUP BY turn_id
),
classed AS (
  SELECT CASE WHEN known = 0 THEN -1 WHEN in_scope = 0 THEN -2 ELSE ${BUCKET('k')} END AS b,
    CASE WHEN events = 0 THEN 1 ELSE 0 END AS none,
    CASE WHEN unpriced > 0 THEN 1 ELSE 0 END AS unpriced,
    CASE WHEN unpriced = 0 AND unreadable > 0 THEN 1 ELSE 0 END AS unreadable,
    CASE WHEN events > 0 AND unpriced = 0 AND unreadable = 0 THEN 1 ELSE 0 END AS costed,
    CASE WHEN known = 1 AND events > 0 AND unpriced = 0 AND unreadable = 0 THEN cost END AS cost,
    CASE WHEN known = 1 AND events > 0 AND unpriced = 0 AND unreadable = 0 THEN over ELSE 0 END AS over,
    CASE WHEN known = 1 AND (unpriced > 0 OR unreadable > 0) AND events > unpriced + unreadable THEN cost END AS uncosted_cost,
    ev_scope, ev_unpriced, ev_cost,
    ${KNOWN_SPEND} AS spend_known,
    -- a turn with no top-level subagent spent nothing on them; a known sum NULL lies beyond 2^53 − 1
    CASE WHEN ${KNOWN_SPEND} = 1 THEN CASE WHEN k = 0 THEN 0 ELSE sc END END AS sub_cost,
    CASE WHEN ${KNOWN_SPEND} = 1 AND events > 0 AND unpriced = 0 AND unreadable = 0 AND cost > 0
      THEN CAST(CASE WHEN k = 0 THEN 0 ELSE sc END AS DOUBLE PRECISION) / cost END AS share
  FROM per_turn
),
buckets AS (
  SELECT b, COUNT(*) AS turns, CAST(SUM(costed) AS BIGINT) AS costed, CAST(SUM(unpriced) AS BIGINT) AS unpriced,
    CAST(SUM(none) AS BIGINT) AS none, CAST(SUM(unreadable) AS BIGINT) AS unreadable, CAST(SUM(over) AS BIGINT) AS over,
    ${boundedSum('cost')} AS cost,
    ${RANKS.map((r) => `${d.nearestRank('cost', r, RANKS)} AS p${r}`).join(', ')},
    CAST(SUM(ev_scope) AS BIGINT) AS events, CAST(SUM(ev_unpriced) AS BIGINT) AS ev_unpriced, ${boundedSum('ev_cost')} AS ev_cost,
    CAST(SUM(spend_known) AS BIGINT) AS spend_known,
    CASE WHEN SUM(CASE WHEN spend_known = 1 AND sub_cost IS NULL THEN 1 ELSE 0 END) = 0 THEN ${exactSum('sub_cost')} END AS sub_cost,
    ${d.nearestRank('share', 50, [50])} AS share,
    ${boundedSum('uncosted_cost')} AS uncosted_cost
  FROM classed WHERE b <> -2 GROUP BY b
)
SELECT CASE WHEN b = -1 THEN 'unattributed' ELSE 'bucket' END AS kind, b, turns, costed,
  ${priced ? 'unpriced' : 'NULL'} AS unpriced, none, unreadable, over, CASE WHEN over = 0 THEN cost END AS cost,
  CASE WHEN costed = 0 OR cost IS NULL OR over > 0 THEN NULL ELSE ${roundedQuotient('cost', 'costed')} END AS mean,
  CASE WHEN over = 0 THEN p50 END AS p50, CASE WHEN over = 0 THEN p95 END AS p95,
  events, ${priced ? 'ev_unpriced' : 'NULL'} AS ev_unpriced, ev_cost,
  ${usage ? 'spend_known' : 'NULL'} AS spend_known, ${usage ? 'sub_cost' : 'NULL'} AS sub_cost, ${usage ? 'share' : 'NULL'} AS share,
  uncosted_cost
FROM buckets${
    window.length === 0
      ? ''
      : `
UNION ALL
SELECT 'unreadable', NULL, COUNT(*), ${Array(16).fill('NULL').join(', ')}
FROM ${turnsFrom} WHERE ${[...filter, 't.started_at IS NOT NULL', `${started} IS NULL`].join(' AND ')}`
  }`;
  return { sql, params: p.values };
}

/**
 * Why the section is null in this scope (a note for completeness.notes), or undefined where it is
 * given: the ledger or task_session_turns is missing, the ledger has no turn_id, or a window is
 * asked of turns without started_at.
 */
export function fanOutCostGap(scope: ReportScope, catalog: StoreCatalog): string | undefined {
  if (catalog.costEvents === undefined) return NO_LEDGER;
  if (!catalog.costEvents.turnId)
    return 'fan_out_cost is null: office_cost_events has no turn_id column (a host before its turn attribution).';
  if (catalog.turns === undefined) return 'fan_out_cost is null: the store has no task_session_turns table.';
  if ((scope.since !== undefined || scope.until !== undefined) && !catalog.turns.startedAt)
    return 'fan_out_cost is null: --since/--until select turns by started_at, and task_session_turns has no started_at column.';
  return undefined;
}

const NO_LEDGER =
  'fan_out_cost is null: the store has no office_cost_events table (the host office cost ledger) to cost its turns.';

/** The label of bucket `b` (the statement's index). */
export const bucketLabel = (b: number) => FAN_OUT_COST_BUCKETS[b]!;
