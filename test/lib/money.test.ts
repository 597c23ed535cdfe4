import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dollarColumn, dollars, moneyDecimals } from '../../lib/money.js';

/** "$1,204.00", "-$0.0133" read back as subcents, and its digits after the point. */
function readBack(shown: string): { subcents: number; decimals: number } {
  const m = /^(-?)\$(\d{1,3}(?:,\d{3})*)\.(\d{2}|\d{4})$/.exec(shown);
  if (m === null) throw new Error(`not one money format: ${shown}`);
  const [whole, fraction] = [m[2]!.replaceAll(',', ''), m[3]!];
  const subcents = Number(whole) * 10_000 + Number(fraction.padEnd(4, '0'));
  return { subcents: m[1] === '-' ? -subcents : subcents, decimals: fraction.length };
}

const subcents = fc.integer({ min: -(2 ** 40), max: 2 ** 40 });

describe('one money format (R6-11, docs/report.md#money)', () => {
  it.each([
    // cents from ten cents up, half away from zero
    [821_000, false, '$82.10'],
    [12_040_000, false, '$1,204.00'],
    [69_800, false, '$6.98'],
    [4_340, false, '$0.43'],
    [1_499, false, '$0.15'],
    [1_000, false, '$0.10'],
    [10_050, false, '$1.01'],
    [10_049, false, '$1.00'],
    [-41_000, false, '-$4.10'],
    [-10_050, false, '-$1.01'],
    [-12_345_678, false, '-$1,234.57'],
    // under ten cents, every subcent (never $0.00)
    [999, false, '$0.0999'],
    [133, false, '$0.0133'],
    [1, false, '$0.0001'],
    [-133, false, '-$0.0133'],
    [0, false, '$0.00'],
    // a lower bound is rounded down, never up (issue 57: ≥ 2,655 subcents is ≥ $0.26)
    [2_655, true, '$0.26'],
    [1_499, true, '$0.14'],
    [10_099, true, '$1.00'],
    [-41_001, true, '-$4.11'],
    [-41_000, true, '-$4.10'],
    [133, true, '$0.0133'],
  ])('R6-11: %d subcents (lower bound: %s) read "%s"', (value, lowerBound, shown) => {
    expect(dollars(value, { lowerBound })).toBe(shown);
  });

  it.each([
    ['every value at least ten cents: cents', [69_800, 4_340, null], 2],
    ['one value under ten cents: every subcent, for the whole column', [69_800, 4_340, 133], 4],
    ['a negative value under ten cents counts by its size', [69_800, -999], 4],
    ['0 and null are no reason for subcents', [0, null, 12_000], 2],
    ['an empty column', [], 2],
  ] as const)('R6-11: a column: %s', (_, column, decimals) => {
    expect(moneyDecimals(column)).toBe(decimals);
  });

  it('R6-11: the fan-out column of issue 58 reads at one precision: $6.98 beside $0.43, never $0.4340', () => {
    expect(dollarColumn([69_800, 4_340, null])).toEqual(['$6.98', '$0.43', null]);
    expect(dollarColumn([12_040_000, 133])).toEqual(['$1,204.0000', '$0.0133']);
  });

  it('R6-11: a column rounds each lower bound of it down, the others to the nearest', () => {
    expect(dollarColumn([2_655, 2_655], (i) => i === 0)).toEqual(['$0.26', '$0.27']);
  });

  it('R6-11: a figure that is not an integer is refused, with what it expected', () => {
    expect(() => dollars(1.5)).toThrow(/an integer, got 1.5/);
  });

  it("R6-11: a lower bound's printed dollars never exceed the figure, and are within one shown unit of it", () => {
    fc.assert(
      fc.property(subcents, fc.constantFrom(2 as const, 4 as const), (value, decimals) => {
        const shown = readBack(dollars(value, { decimals, lowerBound: true }));
        expect(shown.subcents).toBeLessThanOrEqual(value);
        expect(value - shown.subcents).toBeLessThan(decimals === 2 ? 100 : 1);
      }),
    );
  });

  it('R6-11: an exact figure is printed within half a shown unit, and a negative one is its mirror (half away from zero)', () => {
    fc.assert(
      fc.property(subcents, fc.constantFrom(2 as const, 4 as const), (value, decimals) => {
        const shown = dollars(value, { decimals });
        expect(Math.abs(readBack(shown).subcents - value)).toBeLessThanOrEqual(decimals === 2 ? 50 : 0);
        const mirror = dollars(-value, { decimals });
        expect(mirror).toBe(
          readBack(shown).subcents === 0 ? shown : shown.startsWith('-') ? shown.slice(1) : `-${shown}`,
        );
      }),
    );
  });

  it('R6-11: every value of a column is printed in one format, at the same precision, with separators', () => {
    fc.assert(
      fc.property(fc.array(fc.option(subcents, { nil: null }), { maxLength: 12 }), (column) => {
        const shown = dollarColumn(column).filter((s) => s !== null);
        const decimals = new Set(shown.map((s) => readBack(s).decimals));
        expect(decimals.size).toBeLessThanOrEqual(1);
        // readBack accepts only -$d,ddd.dd(dd): one sign place, separators every three digits
        for (const s of shown) expect(readBack(s).decimals).toBe(moneyDecimals(column));
        // a nonzero figure is never shown as $0.00
        for (const [i, v] of column.entries())
          if (v !== null && v !== 0) expect(readBack(dollarColumn(column)[i]!).subcents).not.toBe(0);
      }),
    );
  });
});
