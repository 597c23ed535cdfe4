import {
  COST_SOURCES,
  type CostSource,
  USAGE_COUNT_FIELDS,
  USAGE_TOKEN_FIELDS,
  type UsageCountField,
} from './producer/usage/run-usage.js';
import { storedText } from './text.js';
import type { Micros } from './time.js';

/**
 * One subagent's run usage as our table stores it (R6-2, docs/spend.md#the-usage-table): every
 * R6-1 field, NULL where not reported, `complete` as the 0/1 the column holds, and the
 * observation it is as of.
 */
export type UsageWrite = Record<UsageCountField, number | null> & {
  cost_subcents: number | null;
  cost_source: CostSource | null;
  model: string | null;
  complete: 0 | 1 | null;
  observed_at: Micros;
};

export type UsageResult = { usage: UsageWrite | null; anomalous: boolean };

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const isCostSource = (value: unknown): value is CostSource => COST_SOURCES.includes(value as CostSource);

/**
 * `subagent_task.usage` → the stored usage (R6-1). Absent or null: no usage. Not an object: no
 * usage, anomalous. A field of the wrong type or range: that field not reported, anomalous (AC-9).
 * A usage that reports nothing is no usage (it would count the subagent as covered). Priced means
 * a cost and a source that prices it; a cost without a source, a source without a cost, `unpriced`
 * with a cost, or a cost of 0 beside tokens above 0 is `unpriced` with no cost: never a measured $0.
 */
export function normalizeUsage(value: unknown, observedAt: Micros): UsageResult {
  if (value === undefined || value === null) return { usage: null, anomalous: false };
  if (typeof value !== 'object' || Array.isArray(value)) return { usage: null, anomalous: true };
  const given = value as Record<string, unknown>;
  let anomalous = false;
  const field = <T>(name: string, accept: (v: unknown) => v is T): T | null => {
    const v = given[name];
    if (v === undefined || v === null) return null;
    if (accept(v)) return v;
    anomalous = true;
    return null;
  };
  const counts = Object.fromEntries(USAGE_COUNT_FIELDS.map((name) => [name, field(name, isCount)])) as Record<
    UsageCountField,
    number | null
  >;
  const cost = field('cost_subcents', isCount);
  const source = field('cost_source', isCostSource);
  const modelGiven = field('model', (v): v is string => typeof v === 'string');
  const completeGiven = field('complete', (v): v is boolean => typeof v === 'boolean');
  const model = modelGiven === null ? null : storedText(modelGiven) || null;
  const complete = completeGiven === null ? null : completeGiven ? 1 : 0;
  const reportsNothing =
    USAGE_COUNT_FIELDS.every((name) => counts[name] === null) &&
    cost === null &&
    source === null &&
    model === null &&
    complete === null;
  if (reportsNothing) return { usage: null, anomalous };
  const tokensAboveZero = USAGE_TOKEN_FIELDS.some((name) => (counts[name] ?? 0) > 0);
  const priced = cost !== null && source !== null && source !== 'unpriced' && !(cost === 0 && tokensAboveZero);
  const pricing = priced
    ? { cost_subcents: cost, cost_source: source }
    : cost === null && source === null
      ? { cost_subcents: null, cost_source: null }
      : { cost_subcents: null, cost_source: 'unpriced' as const };
  return { usage: { ...counts, ...pricing, model, complete, observed_at: observedAt }, anomalous };
}

/**
 * R6-2's merge, one rule for the SQL (lib/store/usage-upsert.ts) and memory: `next` replaces the
 * stored usage as a whole when it is not older (R2-7's order: a tie goes to the later arrival),
 * unless the stored usage is final and `next` is not (`complete` never goes back to false).
 * A frame without usage never reaches this: absence never blanks.
 */
export function supersedes(stored: UsageWrite, next: UsageWrite): boolean {
  return next.observed_at >= stored.observed_at && !(stored.complete === 1 && next.complete !== 1);
}

/** A key's usages in arrival order, folded as they would land one at a time (null: none). */
export function foldUsage(usages: readonly UsageWrite[]): UsageWrite | null {
  let kept: UsageWrite | null = null;
  for (const usage of usages) if (kept === null || supersedes(kept, usage)) kept = usage;
  return kept;
}
