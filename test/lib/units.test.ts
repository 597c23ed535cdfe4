import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
    [59_600, '1 min'],
    [125_000, '2 min 5 s'],
    [3_599_600, '1 h'],
    [11_520_000, '3 h 12 min'],
    [86_400_000, '1 day'],
    [97_200_000, '1 day 3 h'],
    [2 * 86_400_000, '2 days'],
    [9_606_141_869, '111 days'],
    [-4100, '-4.1 s'],
    [Number.NaN, 'NaN'],
  ])('%s ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('any non-negative duration is at most two units, each a known one', () => {
    const unit = '(?:ms|s|min|h|day|days)';
    const shape = new RegExp(`^\\d+(?:\\.\\d+)? ${unit}(?: \\d+ ${unit})?$`);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e15, noNaN: true }), (ms) => {
        expect(humanDuration(ms)).toMatch(shape);
      }),
    );
  });
});
