/*
 * One subagent's run usage (../../../docs/spend.md, R6-1): what the frame's
 * `subagent_task.usage` carries, what the agents' readers return, what `task_session_subagent_usage`
 * stores. Lives with the producer because the package's readers return it (no dependency added);
 * lib/frame/schema.ts stays the authority on the wire (test/lib/producer/frame-type.test.ts).
 */

/** The host ledger's words for where a cost came from (kandev's `office_cost_events.cost_source`). */
export const COST_SOURCES = ['provider_reported', 'models_dev_list', 'unpriced'] as const;
export type CostSource = (typeof COST_SOURCES)[number];

/** The token counts, by kind, in the order every output lists them. */
export const USAGE_TOKEN_FIELDS = [
  'tokens_in',
  'tokens_out',
  'tokens_cached_read',
  'tokens_cached_write',
  'tokens_reasoning',
] as const;
export type UsageTokenField = (typeof USAGE_TOKEN_FIELDS)[number];

/** Every count of a run (non-negative safe integers): the tokens and the distinct requests. */
export const USAGE_COUNT_FIELDS = [...USAGE_TOKEN_FIELDS, 'requests'] as const;
export type UsageCountField = (typeof USAGE_COUNT_FIELDS)[number];

/**
 * A subagent's whole run, never one request. Every field is optional and NULL-not-zero: absent or
 * null is "not reported", a 0 is a reported 0. `cost_subcents` is ten thousand to the dollar (the
 * host ledger's unit). A cost without a source, or 0 with tokens above 0, is `unpriced` (R6-1).
 */
export interface RunUsage {
  tokens_in?: number | null;
  tokens_out?: number | null;
  tokens_cached_read?: number | null;
  tokens_cached_write?: number | null;
  tokens_reasoning?: number | null;
  /** distinct requests the run made (a message streamed in several blocks is one request) */
  requests?: number | null;
  cost_subcents?: number | null;
  cost_source?: CostSource | null;
  /** the model, or the models joined by `,` when the run used several */
  model?: string | null;
  /** the run is over and the figures are final */
  complete?: boolean | null;
}

/** Subcents per US dollar: the host ledger's unit. */
export const SUBCENTS_PER_DOLLAR = 10_000;
