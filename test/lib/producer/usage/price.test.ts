import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lookUpPrice, priceUsage } from '../../../../lib/producer/usage/price.js';
import type { RunUsage } from '../../../../lib/producer/usage/run-usage.js';
import { anyValue, count } from './agent-records.js';

/** models.dev's api.json shape: provider → models → id → cost (dollars per million tokens). */
const MODELS_DEV = {
  anthropic: {
    id: 'anthropic',
    models: {
      'claude-sonnet-4-5': {
        id: 'claude-sonnet-4-5',
        cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
      },
      'claude-haiku-4-5': { id: 'claude-haiku-4-5', cost: { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 } },
      'twin-of-sonnet': { cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } },
    },
  },
  openai: {
    models: {
      'gpt-5-codex': { cost: { input: 1.25, output: 10, cache_read: 0.125 } },
      free: { cost: { input: 0, output: 0 } },
    },
  },
};

const sonnet: RunUsage = {
  tokens_in: 1_000_000,
  tokens_out: 100_000,
  tokens_cached_read: 2_000_000,
  tokens_cached_write: 10_000,
  requests: 3,
  model: 'claude-sonnet-4-5',
  complete: true,
};

describe('R6-3: priceUsage, list prices from a models.dev-shaped table', () => {
  it('R6-3: prices every kind at its own rate, in subcents (ten thousand to the dollar): models_dev_list', () => {
    // $3 + $1.5 + $0.6 + $0.0375 = $5.1375
    expect(priceUsage(sonnet, MODELS_DEV)).toEqual({
      ...sonnet,
      cost_subcents: 51_375,
      cost_source: 'models_dev_list',
    });
  });

  it('R6-3: takes a flat table of models to {cost} or to the prices themselves', () => {
    const flat = { 'claude-sonnet-4-5': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } };
    const nested = { 'claude-sonnet-4-5': { cost: flat['claude-sonnet-4-5'] } };
    expect(priceUsage(sonnet, flat).cost_subcents).toBe(51_375);
    expect(priceUsage(sonnet, nested).cost_subcents).toBe(51_375);
  });

  it('R6-3: a model named with its provider (anthropic/…) is found by its id', () => {
    expect(lookUpPrice(MODELS_DEV, 'anthropic/claude-haiku-4-5')).toEqual({
      input: 1,
      output: 5,
      cache_read: 0.1,
      cache_write: 1.25,
    });
  });

  it('R6-3: rounds up to a whole subcent, so a cost above zero never reads as zero', () => {
    const tiny = priceUsage({ tokens_in: 1, tokens_out: 0, model: 'claude-haiku-4-5' }, MODELS_DEV);
    expect(tiny).toMatchObject({ cost_subcents: 1, cost_source: 'models_dev_list' });
    const exact = priceUsage({ tokens_in: 100, tokens_out: 0, model: 'claude-haiku-4-5' }, MODELS_DEV);
    expect(exact.cost_subcents).toBe(1); // $0.0001 exactly: no float error rounds it to 2
  });

  it.each<[string, RunUsage]>([
    ['a model with no price', { ...sonnet, model: 'claude-unknown' }],
    ['no model named', { ...sonnet, model: undefined }],
    [
      'two models of different prices (which spent what is not known)',
      { ...sonnet, model: 'claude-sonnet-4-5,claude-haiku-4-5' },
    ],
    ['tokens_in not reported', { ...sonnet, tokens_in: null }],
    [
      'cache writes with no cache_write price',
      { tokens_in: 1, tokens_out: 1, tokens_cached_write: 5, model: 'gpt-5-codex' },
    ],
    ['tokens priced at 0 (a free model: 0 with tokens)', { tokens_in: 10, tokens_out: 10, model: 'free' }],
  ])('R6-3: %s is unpriced: tokens kept, no cost', (_, usage) => {
    const priced = priceUsage(usage, MODELS_DEV);
    expect(priced).toEqual({ ...usage, cost_subcents: null, cost_source: 'unpriced' });
  });

  it('R6-3: several models of the same price are priced (the split does not matter)', () => {
    expect(priceUsage({ ...sonnet, model: 'claude-sonnet-4-5,twin-of-sonnet' }, MODELS_DEV).cost_subcents).toBe(51_375);
  });

  it('R6-3: a cache kind not reported costs nothing (OpenAI reports no cache writes)', () => {
    const codex = { tokens_in: 1_000_000, tokens_out: 0, tokens_cached_read: 1_000_000, model: 'gpt-5-codex' };
    expect(priceUsage(codex, MODELS_DEV)).toMatchObject({ cost_subcents: 13_750, cost_source: 'models_dev_list' });
  });

  it('R6-3: never overwrites a cost the agent gave (provider_reported, or its own list price)', () => {
    const reported: RunUsage = { ...sonnet, cost_subcents: 7, cost_source: 'provider_reported' };
    expect(priceUsage(reported, MODELS_DEV)).toBe(reported);
    const listed: RunUsage = { ...sonnet, cost_subcents: 9, cost_source: 'models_dev_list' };
    expect(priceUsage(listed, MODELS_DEV)).toBe(listed);
  });

  it('R6-3: prices an unpriced usage when a price is found', () => {
    expect(priceUsage({ ...sonnet, cost_source: 'unpriced' }, MODELS_DEV).cost_source).toBe('models_dev_list');
  });

  it('R6-3: never throws on any table, and the cost is a safe integer or unpriced', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.dictionary(fc.string(), anyValue), fc.constant(MODELS_DEV)),
        fc.record({ tokens_in: count, tokens_out: count, tokens_cached_read: count, tokens_cached_write: count }),
        fc.constantFrom('claude-sonnet-4-5', 'gpt-5-codex', 'x', '__proto__', 'constructor'),
        (table, tokens, model) => {
          const priced = priceUsage({ ...tokens, model }, table as Record<string, unknown>);
          if (priced.cost_source === 'models_dev_list') expect(Number.isSafeInteger(priced.cost_subcents)).toBe(true);
          else expect(priced).toMatchObject({ cost_source: 'unpriced', cost_subcents: null });
        },
      ),
    );
  });

  it('R6-3: sum invariant: the cost of two runs of one model is within a subcent of the costs summed', () => {
    fc.assert(
      fc.property(fc.tuple(count, count, count, count), fc.tuple(count, count, count, count), (a, b) => {
        const run = ([i, o, r, w]: number[]) => ({
          tokens_in: i,
          tokens_out: o,
          tokens_cached_read: r,
          tokens_cached_write: w,
          model: 'claude-sonnet-4-5',
        });
        const cost = (u: RunUsage) => priceUsage(u, MODELS_DEV).cost_subcents ?? 0;
        const both = cost(run(a.map((n, i) => n + b[i]!)));
        const apart = cost(run(a)) + cost(run(b));
        expect(apart - both).toBeGreaterThanOrEqual(0);
        expect(apart - both).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('R6-3: priceUsage, case by case', () => {
  const run = (extra: RunUsage = {}): RunUsage => ({ tokens_in: 1_000_000, tokens_out: 0, model: 'x', ...extra });
  it.each<[string, unknown, number | null]>([
    ['a price of 0 for a kind is a price', { x: { input: 0, output: 1, cache_read: 0 } }, null],
    ['an entry that is not an object', { x: 5 }, null],
    ['a negative price is none', { x: { input: -1, output: 1 } }, null],
    ['a price that is a string is none', { x: { input: '1', output: 1 } }, null],
    ['a price that is not finite is none', { x: { input: Number.POSITIVE_INFINITY, output: 1 } }, null],
    [
      'an entry with no price falls through to api.json',
      { x: { name: 'x' }, p: { models: { x: { cost: { input: 2, output: 1 } } } } },
      20_000,
    ],
    [
      'a provider entry that is not an object is skipped',
      { p: 5, q: { models: 5 }, r: { models: { x: { cost: { input: 3, output: 1 } } } } },
      30_000,
    ],
  ])('R6-3: %s', (_, table, cost) => {
    expect(priceUsage(run(), table as Record<string, unknown>).cost_subcents).toBe(cost);
  });

  it('R6-3: a price of 0 for cache reads prices cache reads at 0 (a listed price, not a missing one)', () => {
    expect(priceUsage(run({ tokens_cached_read: 5 }), { x: { input: 1, output: 1, cache_read: 0 } })).toMatchObject({
      cost_subcents: 10_000,
      cost_source: 'models_dev_list',
    });
  });

  it('R6-3: two models whose input prices agree but output prices do not are unpriced', () => {
    const table = { a: { input: 1, output: 2 }, b: { input: 1, output: 3 } };
    expect(priceUsage(run({ model: 'a,b' }), table).cost_source).toBe('unpriced');
  });

  it.each<[string, RunUsage]>([
    ['a cost of null whatever its source says', run({ cost_subcents: null, cost_source: 'provider_reported' })],
    ['a cost beside the word unpriced', run({ cost_subcents: 5, cost_source: 'unpriced' })],
  ])('R6-3: %s is priced anew', (_, usage) => {
    expect(priceUsage(usage, { x: { input: 1, output: 1 } })).toMatchObject({
      cost_subcents: 10_000,
      cost_source: 'models_dev_list',
    });
  });

  it.each<[string, RunUsage, unknown]>([
    ["a model ''", run({ model: '' }), { '': { input: 1, output: 1 } }],
    ['no model, whatever the table', run({ model: undefined }), { 'Stryker was here!': { input: 1, output: 1 } }],
    ['a table that is null', run(), null],
    ['a table that is a string', run(), 'prices'],
    ['negative input tokens', run({ tokens_in: -5 }), { x: { input: 1, output: 1 } }],
    ['fractional cache reads', run({ tokens_cached_read: 1.5 }), { x: { input: 1, output: 1, cache_read: 1 } }],
    ['a cost beyond the safe integers', run({ tokens_in: Number.MAX_SAFE_INTEGER }), { x: { input: 1e9, output: 1 } }],
  ])('R6-3: %s: unpriced, never a throw', (_, usage, table) => {
    expect(priceUsage(usage, table as Record<string, unknown>)).toMatchObject({
      cost_subcents: null,
      cost_source: 'unpriced',
    });
  });

  it('R6-3: a cache kind reported as null or 0 needs no price', () => {
    const table = { x: { input: 1, output: 1 } };
    expect(priceUsage(run({ tokens_cached_write: null, tokens_cached_read: 0 }), table).cost_subcents).toBe(10_000);
  });

  it('R6-3: no tokens at all cost a measured 0', () => {
    expect(priceUsage(run({ tokens_in: 0 }), { x: { input: 1, output: 1 } })).toMatchObject({
      cost_subcents: 0,
      cost_source: 'models_dev_list',
    });
  });
});
