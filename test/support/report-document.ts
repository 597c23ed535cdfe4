import {
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
