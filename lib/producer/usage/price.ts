import { asObject } from './records.js';
import type { RunUsage, UsageTokenField } from './run-usage.js';

/*
 * List prices for a run's tokens from a price table shaped as models.dev's
 * (docs/spend.md#pricing, R6-3): dollars per million tokens by kind. No table ships with
 * this package as truth: the caller brings the one it trusts (`--prices FILE`).
 */

/** One model's list prices, dollars per million tokens (models.dev's `cost` object). */
export interface ModelPrice {
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
}

/**
 * A price table in any of models.dev's shapes: its `api.json` (`{provider: {models: {id: {cost}}}}`),
 * a map of models to `{cost}`, or a map of models to the prices themselves.
 */
export type PriceTable = Record<string, unknown>;

/** Which price each token kind is charged at. `tokens_reasoning` is within `tokens_out`: never charged again. */
const PRICE_OF: readonly (readonly [UsageTokenField, keyof ModelPrice])[] = [
  ['tokens_in', 'input'],
  ['tokens_out', 'output'],
  ['tokens_cached_read', 'cache_read'],
  ['tokens_cached_write', 'cache_write'],
];

/** Prices are kept to a millionth of a dollar per million tokens, then the sum is exact (BigInt). */
const PRICE_SCALE = 1_000_000;
/** tokens × (dollars per million × PRICE_SCALE) → subcents: ÷ 10^6 tokens, ÷ PRICE_SCALE, × 10^4 subcents per dollar. */
const SUBCENT_DIVISOR = 100_000_000n;

function priceOf(value: unknown): ModelPrice | undefined {
  const entry = asObject(value);
  if (entry === undefined) return undefined;
  const cost = asObject(entry.cost) ?? entry;
  const price: ModelPrice = {};
  for (const [, kind] of PRICE_OF) {
    const p = cost[kind];
    if (typeof p === 'number' && Number.isFinite(p) && p >= 0) price[kind] = p;
  }
  return Object.keys(price).length === 0 ? undefined : price;
}

/**
 * A model's price: the table's entry for the model's exact id, or for its part after the last `/`
 * (`anthropic/claude-sonnet-4-5`); in models.dev's api.json, the first provider listing the id.
 */
export function lookUpPrice(prices: PriceTable, model: string): ModelPrice | undefined {
  // the whole id first, then its last part (the same twice when it holds no `/`: harmless); an
  // inherited name (toString, __proto__) holds no price, so no own-property check is needed
  for (const name of [model, model.slice(model.lastIndexOf('/') + 1)]) {
    const direct = priceOf(prices[name]);
    if (direct !== undefined) return direct;
    for (const provider of Object.values(prices)) {
      const listed = priceOf(asObject(asObject(provider)?.models)?.[name]);
      if (listed !== undefined) return listed;
    }
  }
  return undefined;
}

const samePrice = (a: ModelPrice, b: ModelPrice) => PRICE_OF.every(([, kind]) => a[kind] === b[kind]);

/**
 * The usage with its list price: `cost_subcents` and `cost_source` `models_dev_list`, or
 * `cost_source` `unpriced` (tokens, no cost) when it cannot be priced. A usage that already has a
 * cost (`provider_reported`, or a list price its agent computed) is returned as it is: never
 * overwritten. Rules:
 * - every model of the run (R6-1's `,`-joined list) needs a price, and with several models they must
 *   all be the same, since the records do not say which model spent which tokens;
 * - `tokens_in` and `tokens_out` must be reported; a cache kind not reported is none;
 * - every kind with tokens above 0 needs its price (a missing cache price is never guessed);
 * - the sum is exact and rounded up to a whole subcent, so a cost above zero never reads as zero;
 *   a sum of 0 with tokens above 0 (a model listed free) is `unpriced`, as R6-1 reads such a 0.
 */
export function priceUsage(usage: RunUsage, prices: PriceTable): RunUsage {
  if (usage.cost_subcents !== undefined && usage.cost_subcents !== null && usage.cost_source !== 'unpriced')
    return usage;
  const unpriced: RunUsage = { ...usage, cost_subcents: null, cost_source: 'unpriced' };
  const models = (usage.model ?? '').split(',').filter((m) => m !== '');
  if (models.length === 0 || typeof prices !== 'object' || prices === null) return unpriced;
  const found = models.map((m) => lookUpPrice(prices, m));
  if (found.some((p) => p === undefined || !samePrice(p, found[0]!))) return unpriced;
  const price = found[0] as ModelPrice; // one model at least, every one priced
  if (!isCount(usage.tokens_in) || !isCount(usage.tokens_out)) return unpriced;
  let numerator = 0n;
  let tokens = 0;
  for (const [field, kind] of PRICE_OF) {
    const n = usage[field];
    if (n === undefined || n === null || n === 0) continue;
    if (!isCount(n)) return unpriced;
    const perMillion = price[kind];
    if (perMillion === undefined) return unpriced;
    numerator += BigInt(n) * BigInt(Math.round(perMillion * PRICE_SCALE));
    tokens += n;
  }
  const subcents = (numerator + SUBCENT_DIVISOR - 1n) / SUBCENT_DIVISOR;
  if (subcents > BigInt(Number.MAX_SAFE_INTEGER) || (subcents === 0n && tokens > 0)) return unpriced;
  return { ...usage, cost_subcents: Number(subcents), cost_source: 'models_dev_list' };
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
