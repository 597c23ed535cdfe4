import type { Dialect } from '../db/dialect/dialect.js';
import type { StoreCatalog } from './catalog.js';
import { FAN_OUT_COST_BUCKETS } from './document.js';
import {
  boundedSum,
  EVENT_TASK,
  ledgerValues,
  Params,
  RANKS,
  type ReportScope,
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
 */

/** The bucket (an index of FAN_OUT_COST_BUCKETS) of a fan-out `k`: 0, 1, 2, 3, 4–5, 6–8, 9 or more. */
const BUCKET = (k: string) => `CASE WHEN ${k} <= 3 THEN ${k} WHEN ${k} <= 5 THEN 4 WHEN ${k} <= 8 THEN 5 ELSE 6 END`;

/** `a / n` rounded half away from zero, for n > 0 (integer division truncates toward zero on both dialects). */
const roundedMean = (a: string, n: string) =>
  `CASE WHEN ${a} >= 0 THEN (2 * ${a} + ${n}) / (2 * ${n}) ELSE -((2 * -(${a}) + ${n}) / (2 * ${n})) END`;

/**
 * The statement, or undefined where the section cannot be given (the reason: `fanOutCostGap`).
 * Rows: `kind` 'bucket' (one per non-empty bucket `b`), 'unattributed' (one) and 'unreadable' (one).
 */
export function fanOutCostStatement(d: Dialect, scope: ReportScope, catalog: StoreCatalog): Statement | undefined {
  if (fanOutCostGap(scope, catalog) !== undefined) return undefined;
  const ledger = catalog.costEvents!;
  const startedAt = catalog.turns!.startedAt;
  const p = new Params(d);
  const byTask = scope.task !== undefined;
  const filter: string[] = [];
  if (scope.task !== undefined) filter.push(`s.task_id = ${p.text(scope.task)}`);
  if (scope.session !== undefined) filter.push(`t.task_session_id = ${p.text(scope.session)}`);
  const window: string[] = [];
  if (scope.since !== undefined) window.push(`started >= ${p.instant(scope.since)}`);
  if (scope.until !== undefined) window.push(`started < ${p.instant(scope.until)}`);
  const { cost, unpriced, unreadableCost } = ledgerValues(d, ledger);
  // the events in scope that name no turn of task_session_turns
  const eventWhere: string[] = [
    "(COALESCE(e.turn_id, '') = '' OR NOT EXISTS (SELECT 1 FROM task_session_turns tt WHERE tt.id = e.turn_id))",
  ];
  if (scope.task !== undefined) eventWhere.push(`${EVENT_TASK} = ${p.text(scope.task)}`);
  if (scope.session !== undefined) eventWhere.push(`e.session_id = ${p.text(scope.session)}`);
  const occurred = d.readableInstant('e.occurred_at');
  if (scope.since !== undefined) eventWhere.push(`${occurred} >= ${p.instant(scope.since)}`);
  if (scope.until !== undefined) eventWhere.push(`${occurred} < ${p.instant(scope.until)}`);
  const priced = ledger.costSource;
  const sql = `WITH turns_f AS MATERIALIZED (
  SELECT t.id AS turn_id, ${startedAt ? d.readableInstant('t.started_at') : 'NULL'} AS started
  FROM task_session_turns t${byTask ? ' LEFT JOIN task_sessions s ON s.id = t.task_session_id' : ''}${
    filter.length ? ` WHERE ${filter.join(' AND ')}` : ''
  }
),
turns_in AS MATERIALIZED (
  SELECT turn_id FROM turns_f${window.length ? ` WHERE started IS NOT NULL AND ${window.join(' AND ')}` : ''}
),
fan AS (
  SELECT turn_id, COUNT(*) AS k FROM task_session_subagents
  WHERE ${TOP_LEVEL} AND turn_id IN (SELECT turn_id FROM turns_in)
  GROUP BY turn_id
),
turn_cost AS (
  SELECT turn_id, COUNT(*) AS events, SUM(unpriced) AS unpriced, SUM(unreadable) AS unreadable, CAST(SUM(cost) AS BIGINT) AS cost
  FROM (
    SELECT e.turn_id, ${cost} AS cost, ${unpriced} AS unpriced, ${unreadableCost} AS unreadable
    FROM office_cost_events e WHERE e.turn_id IN (SELECT turn_id FROM turns_in)
  ) ev GROUP BY turn_id
),
per_turn AS (
  SELECT ${BUCKET('COALESCE(f.k, 0)')} AS b,
    CASE WHEN tc.events IS NULL THEN 1 ELSE 0 END AS none,
    CASE WHEN tc.unpriced > 0 THEN 1 ELSE 0 END AS unpriced,
    CASE WHEN tc.unpriced = 0 AND tc.unreadable > 0 THEN 1 ELSE 0 END AS unreadable,
    CASE WHEN tc.unpriced = 0 AND tc.unreadable = 0 THEN 1 ELSE 0 END AS costed,
    CASE WHEN tc.unpriced = 0 AND tc.unreadable = 0 THEN tc.cost END AS cost
  FROM turns_in ti LEFT JOIN fan f ON f.turn_id = ti.turn_id LEFT JOIN turn_cost tc ON tc.turn_id = ti.turn_id
),
buckets AS (
  SELECT b, COUNT(*) AS turns, CAST(SUM(costed) AS BIGINT) AS costed, CAST(SUM(unpriced) AS BIGINT) AS unpriced,
    CAST(SUM(none) AS BIGINT) AS none, CAST(SUM(unreadable) AS BIGINT) AS unreadable, ${boundedSum('cost')} AS cost,
    ${RANKS.map((r) => `${d.nearestRank('cost', r, RANKS)} AS p${r}`).join(', ')}
  FROM per_turn GROUP BY b
)
SELECT 'bucket' AS kind, b, turns, costed, ${priced ? 'unpriced' : 'NULL'} AS unpriced, none, unreadable, cost,
  CASE WHEN costed = 0 OR cost IS NULL THEN NULL ELSE ${roundedMean('cost', 'costed')} END AS mean, p50, p95
FROM buckets
UNION ALL
SELECT 'unattributed', NULL, COUNT(*), NULL, ${priced ? `CAST(COALESCE(SUM(${unpriced}), 0) AS BIGINT)` : 'NULL'}, NULL, NULL, ${boundedSum(cost)}, NULL, NULL, NULL
FROM office_cost_events e${byTask ? ' LEFT JOIN task_sessions s ON s.id = e.session_id' : ''}
WHERE ${eventWhere.join(' AND ')}
UNION ALL
SELECT 'unreadable', NULL, COUNT(*), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM turns_f WHERE ${startedAt ? 'started IS NULL' : '1 = 0'}`;
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
