import type { Figures, GroupBy } from '../../lib/report/document.js';
import type { SubagentRow } from '../../lib/row.js';

/**
 * The report's row figures computed in JavaScript from the rows themselves (lib/store/read.ts),
 * written independently of lib/report/sql.ts: the truth a test holds the SQL to (R3-5, R3-6).
 * Sessions, contexts and cost come from other tables and are checked against the generator.
 */
export type RowFigures = Omit<
  Figures,
  | 'sessions'
  | 'orphan_rows'
  | 'contexts'
  | 'cost_subcents'
  | 'estimated_cost_subcents'
  | 'cost_per_context_subcents'
  | 'unpriced_events'
  | 'cost_lower_bound'
  | 'measured_cost_subcents'
  | 'list_priced_cost_subcents'
  | 'spend'
>;

const rank = (values: number[], p: number) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p * sorted.length) / 100) - 1]!;
};

const sum = (values: (number | null)[]) => {
  const reported = values.filter((v): v is number => v !== null);
  return { sum: reported.length === 0 ? null : reported.reduce((a, b) => a + b, 0), reported: reported.length };
};

/** R5-4: a metric's sum with its nearest-rank p50, p95 and max over the reported values. */
const ranked = (values: (number | null)[]) => {
  const reported = values.filter((v): v is number => v !== null);
  return {
    ...sum(values),
    p50: rank(reported, 50),
    p95: rank(reported, 95),
    max: reported.length === 0 ? null : Math.max(...reported),
  };
};

export function rowFigures(rows: readonly SubagentRow[]): RowFigures {
  const top = (r: SubagentRow) => !r.parent_tool_call_id;
  const durations = rows.map((r) => r.duration_ms).filter((v): v is number => v !== null);
  const models = new Map<string, number>();
  for (const r of rows) if (r.model !== null) models.set(r.model, (models.get(r.model) ?? 0) + 1);
  const perTurn = new Map<string, number>();
  for (const r of rows) if (r.turn_id && top(r)) perTurn.set(r.turn_id, (perTurn.get(r.turn_id) ?? 0) + 1);
  const histogram = new Map<number, number>();
  for (const k of perTurn.values()) histogram.set(k, (histogram.get(k) ?? 0) + 1);
  const observed = rows.map((r) => r.observed_at).sort();
  return {
    subagents: rows.length,
    top_level: rows.filter(top).length,
    nested: rows.filter((r) => !top(r)).length,
    async: rows.filter((r) => r.is_async === 1).length,
    live: rows.filter((r) => r.source === 'live').length,
    backfill: rows.filter((r) => r.source === 'backfill').length,
    settled: rows.filter((r) => r.settled_at !== null).length,
    failed: rows.filter((r) => ['error', 'failed', 'cancelled'].includes(r.tool_status ?? '')).length,
    tokens: ranked(rows.map((r) => r.total_tokens)),
    tool_uses: sum(rows.map((r) => r.tool_use_count)),
    duration_ms: {
      reported: durations.length,
      p50: rank(durations, 50),
      p95: rank(durations, 95),
      max: durations.length === 0 ? null : Math.max(...durations),
    },
    models: {
      counts: [...models]
        .map(([model, subagents]) => ({ model, subagents }))
        .sort((a, b) => b.subagents - a.subagents || (a.model < b.model ? -1 : 1)),
      unreported: rows.filter((r) => r.model === null).length,
    },
    fan_out: [...histogram]
      .map(([top_level, turns]) => ({ top_level, turns }))
      .sort((a, b) => a.top_level - b.top_level),
    executions: new Set(rows.map((r) => r.agent_execution_id).filter((e) => e !== 'unknown')).size,
    unknown_execution: rows.filter((r) => r.agent_execution_id === 'unknown').length,
    turns: new Set(rows.map((r) => r.turn_id).filter((t) => t)).size,
    first_observed_at: observed[0] ?? null,
    last_observed_at: observed.at(-1) ?? null,
  };
}

const ROW_FIGURES = Object.keys(rowFigures([])) as (keyof RowFigures)[];

/** The figures of a totals or group object that rowFigures gives (a group's by, key, title… left out). */
export function onlyRowFigures(figures: Figures): RowFigures {
  return Object.fromEntries(ROW_FIGURES.map((k) => [k, figures[k]])) as RowFigures;
}

/**
 * R4-3 (docs/report.md#unreadable-values): the row figures of rows some of whose stored values the
 * report cannot read, written independently of the SQL. `observed_at` null marks a row whose
 * observed_at is no instant; a metric the caller found unreadable is given as null. Such a row
 * still counts in every row figure; it is only left out of first/last_observed_at.
 */
export function readableRowFigures(
  rows: readonly (Omit<SubagentRow, 'observed_at'> & { observed_at: string | null })[],
): RowFigures {
  const figures = rowFigures(rows.map((r) => ({ ...r, observed_at: r.observed_at ?? '' })));
  const observed = rows.flatMap((r) => (r.observed_at === null ? [] : [r.observed_at])).sort();
  return { ...figures, first_observed_at: observed[0] ?? null, last_observed_at: observed.at(-1) ?? null };
}

/** A row's group key by docs/report.md#figures, written from the rows (not from lib/report/sql.ts). */
export const KEY_OF: Record<GroupBy, (r: SubagentRow) => string | null> = {
  task: (r) => r.task_id,
  session: (r) => r.task_session_id,
  turn: (r) => (r.turn_id === '' ? null : r.turn_id),
  type: (r) => r.subagent_type,
  model: (r) => r.model,
  day: (r) => r.observed_at.slice(0, 10),
};
