import {
  FAN_OUT_COST_BUCKETS,
  type FanOutCost,
  type FanOutCostBucket,
  type Figures,
  type Group,
  NOTHING_UNREADABLE,
  type ReportDocument,
  SPEND_NOT_COLLECTED,
} from '../../lib/report/document.js';

/** Figures of one scope, every sum unreported unless overridden: the renderers' input, written by hand. */
export function figures(overrides: Partial<Figures> = {}): Figures {
  return {
    subagents: 3,
    top_level: 3,
    nested: 0,
    async: 0,
    live: 3,
    backfill: 0,
    settled: 0,
    failed: 0,
    tokens: { sum: null, reported: 0, p50: null, p95: null, max: null },
    tool_uses: { sum: null, reported: 0 },
    duration_ms: { reported: 0, p50: null, p95: null, max: null },
    models: { counts: [], unreported: 3 },
    fan_out: [],
    executions: 1,
    unknown_execution: 0,
    turns: 1,
    sessions: 1,
    orphan_rows: 0,
    contexts: 4,
    cost_subcents: null,
    estimated_cost_subcents: null,
    cost_per_context_subcents: null,
    unpriced_events: null,
    cost_lower_bound: false,
    estimated_unpriced_events: null,
    estimated_cost_lower_bound: false,
    measured_cost_subcents: null,
    list_priced_cost_subcents: null,
    first_observed_at: null,
    last_observed_at: null,
    spend: { ...SPEND_NOT_COLLECTED },
    ...overrides,
  };
}

export function group(overrides: Partial<Group> = {}): Group {
  return { ...figures(), by: 'task', key: 't1', title: null, lower_bound: false, started_at: null, ...overrides };
}

/** A report document by task with the given groups and completeness. */
export function reportDoc(
  groups: Group[],
  completeness: Partial<ReportDocument['completeness']> = {},
  totals: Partial<Figures> = {},
): ReportDocument {
  return {
    version: 1,
    generated_at: '2026-08-12T13:00:00.000000Z',
    filters: { since: null, until: null, task: null, session: null, by: 'task', sort: 'subagents', limit: null },
    completeness: {
      capture_since: '2026-08-01T00:00:00.000000Z',
      backfill_through: null,
      verified_through: null,
      shortfall: { open: false, count: 0, checked: true },
      missing: [],
      unreadable: { ...NOTHING_UNREADABLE },
      lower_bound_sessions: 0,
      unpriced_events: null,
      notes: [],
      ...completeness,
    },
    totals: figures(totals),
    groups,
    trees: [],
    fan_out_cost: null,
  };
}

/** R5-3: a fan_out_cost section, every bucket empty unless overridden. */
export function fanOutCost(
  buckets: Partial<Record<(typeof FAN_OUT_COST_BUCKETS)[number], Partial<FanOutCostBucket>>> = {},
  rest: Partial<Omit<FanOutCost, 'buckets'>> = {},
): FanOutCost {
  return {
    buckets: FAN_OUT_COST_BUCKETS.map((fan_out) => ({
      fan_out,
      turns: 0,
      costed_turns: 0,
      unpriced_turns: 0,
      turns_without_cost: 0,
      unreadable_cost_turns: 0,
      cost_subcents: null,
      mean_subcents: null,
      median_subcents: null,
      p95_subcents: null,
      spend_known_turns: null,
      subagent_cost_subcents: null,
      subagent_share: null,
      uncosted_turns_priced_cost_subcents: null,
      ...buckets[fan_out],
    })),
    unattributed_events: 0,
    unattributed_cost_subcents: null,
    unattributed_unpriced_events: 0,
    unreadable_started_at: 0,
    ...rest,
  };
}
