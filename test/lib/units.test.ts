import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { humanDuration as pageDuration } from '../../lib/report/render/units.js';
import { humanDuration } from '../../lib/units.js';

describe('humanDuration: one human duration for every text output (issue 34)', () => {
  // Expected strings worked out by hand from the unit boundaries, not from the function.
  it.each([
    [0, '0 ms'],
    [0.125, '0.125 ms'],
    [1, '1 ms'],
    [850, '850 ms'],
    [999.4, '999 ms'],
    [999.6, '1 s'],
    [1000, '1 s'],
    [4100, '4.1 s'],
    [4149, '4.1 s'],
    [9960, '10 s'],
    [42_000, '42 s'],
    [48_211, '48.2 s'],
    [59_600, '59.6 s'],
    [59_950, '1 min'],
    [125_000, '2 min 5 s'],
    [3_599_600, '1 h'],
    [11_520_000, '3 h 12 min'],
    [86_400_000, '1 day'],
    [97_200_000, '1 day 3 h'],
    [2 * 86_400_000, '2 days'],
    [9_606_141_869, '111 days'],
    [86_400_000_000, '1,000 days'],
    [-4100, '-4.1 s'],
    [Number.NaN, 'NaN'],
  ])('%s ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('any non-negative duration is at most two units, each a known one', () => {
    const unit = '(?:ms|s|min|h|day|days)';
    const shape = new RegExp(`^\\d{1,3}(?:,\\d{3})*(?:\\.\\d+)? ${unit}(?: \\d+ ${unit})?$`);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e15, noNaN: true }), (ms) => {
        expect(humanDuration(ms)).toMatch(shape);
      }),
    );
  });
});

describe('issue 58 #19 (one duration format)', () => {
  it('the page and the report table say a duration as migrate, health and ingest do: one formatter', () => {
    // the same figure read in two outputs: "48.2 s" on the page was "48 s" in migrate's text
    for (const [ms, text] of [
      [48_211, '48.2 s'],
      [59_600, '59.6 s'],
      [162_185, '2 min 42 s'],
      [97_200_000, '1 day 3 h'],
      [360_000_000, '4 days 4 h'],
    ] as const) {
      expect([humanDuration(ms), pageDuration(ms)]).toEqual([text, text]);
    }
    expect(pageDuration).toBe(humanDuration);
  });
});
