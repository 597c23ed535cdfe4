import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { USAGE_COUNT_FIELDS } from '../../lib/producer/usage/run-usage.js';
import type { Micros } from '../../lib/time.js';
import { foldUsage, normalizeUsage, supersedes, type UsageWrite } from '../../lib/usage-write.js';

const AT = 1_000n as Micros;

/** A stored usage with every field not reported but those given. */
function usage(fields: Partial<UsageWrite> = {}): UsageWrite {
  return {
    tokens_in: null,
    tokens_out: null,
    tokens_cached_read: null,
    tokens_cached_write: null,
    tokens_reasoning: null,
    requests: null,
    cost_subcents: null,
    cost_source: null,
    model: null,
    complete: null,
    observed_at: AT,
    ...fields,
  };
}

describe('R6-1: subagent_task.usage normalized', () => {
  it.each<[string, unknown, UsageWrite | null, boolean]>([
    ['absent', undefined, null, false],
    ['null', null, null, false],
    ['an empty object reports nothing', {}, null, false],
    ['every field null reports nothing', { tokens_in: null, model: null, complete: null }, null, false],
    ['a string is not reported, anomalous', 'lots', null, true],
    ['an array is not reported, anomalous', [1, 2], null, true],
    [
      'tokens, requests, a measured cost, one model, final',
      {
        tokens_in: 10,
        tokens_out: 20,
        tokens_cached_read: 30,
        tokens_cached_write: 40,
        tokens_reasoning: 5,
        requests: 3,
        cost_subcents: 1234,
        cost_source: 'provider_reported',
        model: 'claude-opus-5',
        complete: true,
      },
      usage({
        tokens_in: 10,
        tokens_out: 20,
        tokens_cached_read: 30,
        tokens_cached_write: 40,
        tokens_reasoning: 5,
        requests: 3,
        cost_subcents: 1234,
        cost_source: 'provider_reported',
        model: 'claude-opus-5',
        complete: 1,
      }),
      false,
    ],
    ['a reported 0 is a 0, not absent', { tokens_out: 0, requests: 0 }, usage({ tokens_out: 0, requests: 0 }), false],
    ['a count beyond 2^31 is kept (BIGINT)', { tokens_in: 2 ** 40 }, usage({ tokens_in: 2 ** 40 }), false],
    ['a negative count is not reported', { tokens_in: -1, tokens_out: 2 }, usage({ tokens_out: 2 }), true],
    ['a fraction is not reported', { tokens_in: 1.5, tokens_out: 2 }, usage({ tokens_out: 2 }), true],
    ['an unsafe integer is not reported', { tokens_in: 2 ** 53, tokens_out: 2 }, usage({ tokens_out: 2 }), true],
    ['a numeric string is not reported', { tokens_in: '12', tokens_out: 2 }, usage({ tokens_out: 2 }), true],
    ['a model that is not text is not reported', { model: 7, tokens_in: 1 }, usage({ tokens_in: 1 }), true],
    [
      'complete that is not a boolean is not reported',
      { complete: 'yes', tokens_in: 1 },
      usage({ tokens_in: 1 }),
      true,
    ],
    ['not final', { complete: false, tokens_in: 1 }, usage({ complete: 0, tokens_in: 1 }), false],
    [
      'a list price is kept',
      { cost_subcents: 9, cost_source: 'models_dev_list', tokens_in: 1 },
      usage({ cost_subcents: 9, cost_source: 'models_dev_list', tokens_in: 1 }),
      false,
    ],
    [
      'a cost without a source is unpriced, the cost dropped',
      { cost_subcents: 50, tokens_in: 1 },
      usage({ cost_source: 'unpriced', tokens_in: 1 }),
      false,
    ],
    [
      'a source without a cost is unpriced',
      { cost_source: 'provider_reported', tokens_in: 1 },
      usage({ cost_source: 'unpriced', tokens_in: 1 }),
      false,
    ],
    [
      'unpriced with a cost is unpriced, the cost dropped',
      { cost_source: 'unpriced', cost_subcents: 70, tokens_in: 1 },
      usage({ cost_source: 'unpriced', tokens_in: 1 }),
      false,
    ],
    [
      'a cost of 0 beside tokens above 0 is unpriced, never a measured $0',
      { cost_source: 'provider_reported', cost_subcents: 0, tokens_out: 3 },
      usage({ cost_source: 'unpriced', tokens_out: 3 }),
      false,
    ],
    [
      'a cost of 0 with no tokens above 0 is a measured 0',
      { cost_source: 'provider_reported', cost_subcents: 0, tokens_out: 0 },
      usage({ cost_source: 'provider_reported', cost_subcents: 0, tokens_out: 0 }),
      false,
    ],
    [
      "a source that is not the ledger's word is not reported",
      { cost_source: 'PROVIDER_REPORTED', cost_subcents: 5, tokens_in: 1 },
      usage({ cost_source: 'unpriced', tokens_in: 1 }),
      true,
    ],
    [
      'a model is cleaned like every stored text (U+0000 removed)',
      { model: 'a\u0000b', tokens_in: 1 },
      usage({ model: 'ab', tokens_in: 1 }),
      false,
    ],
    ['an empty model is not reported', { model: '', tokens_in: 1 }, usage({ tokens_in: 1 }), false],
  ])('R6-1: %s', (_, given, expected, anomalous) => {
    expect(normalizeUsage(given, AT)).toEqual({ usage: expected, anomalous });
  });

  it('R6-1: any value at all normalizes without throwing, every stored count a non-negative safe integer or null', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.dictionary(fc.constantFrom(...USAGE_COUNT_FIELDS), fc.anything())),
        (v) => {
          const { usage: stored } = normalizeUsage(v, AT);
          if (stored === null) return;
          for (const name of [...USAGE_COUNT_FIELDS, 'cost_subcents'] as const) {
            const value = stored[name];
            expect(value === null || (Number.isSafeInteger(value) && value >= 0)).toBe(true);
          }
          // priced means a cost with a source that prices it; anything else has no cost
          expect(
            stored.cost_subcents === null || ['provider_reported', 'models_dev_list'].includes(stored.cost_source!),
          ).toBe(true);
        },
      ),
    );
  });
});

describe('R6-2: which usage a subagent keeps', () => {
  it.each<[string, UsageWrite, UsageWrite, boolean]>([
    ['a newer usage replaces', usage({ tokens_in: 1 }), usage({ observed_at: 2_000n as Micros }), true],
    ['an equal observation (a later arrival) replaces', usage({ tokens_in: 1 }), usage({ tokens_in: 2 }), true],
    ['an older usage never regresses', usage({ observed_at: 2_000n as Micros }), usage({ tokens_in: 9 }), false],
    [
      'a final usage is not replaced by a newer one that is not final',
      usage({ complete: 1 }),
      usage({ complete: 0, observed_at: 2_000n as Micros }),
      false,
    ],
    [
      'a final usage is not replaced by a newer one that does not say',
      usage({ complete: 1 }),
      usage({ observed_at: 2_000n as Micros }),
      false,
    ],
    [
      'a final usage is replaced by a newer final one',
      usage({ complete: 1 }),
      usage({ complete: 1, observed_at: 2_000n as Micros }),
      true,
    ],
  ])('R6-2: %s', (_, stored, next, expected) => {
    expect(supersedes(stored, next)).toBe(expected);
  });

  it('R6-2: a fold keeps one whole usage, one nothing later would replace, and final once a final one was the newest so far', () => {
    const arb = fc.array(
      fc.record({ at: fc.integer({ min: 0, max: 5 }), complete: fc.constantFrom<0 | 1 | null>(0, 1, null) }),
      { minLength: 1, maxLength: 8 },
    );
    fc.assert(
      fc.property(arb, (given) => {
        const usages = given.map((g, i) =>
          usage({ observed_at: BigInt(g.at) as Micros, complete: g.complete, tokens_in: i }),
        );
        const kept = foldUsage(usages)!;
        const at = usages.indexOf(kept);
        expect(at).toBeGreaterThanOrEqual(0); // never mixed from two observations
        for (const later of usages.slice(at + 1)) expect(supersedes(kept, later)).toBe(false);
        const finalWasNewest = usages.some(
          (u, i) => u.complete === 1 && usages.slice(0, i).every((e) => e.observed_at <= u.observed_at),
        );
        if (finalWasNewest) expect(kept.complete).toBe(1); // complete never goes back to false
      }),
    );
  });
});
