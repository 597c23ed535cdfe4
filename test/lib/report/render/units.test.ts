import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  codePoints,
  cutText,
  dollars,
  humanDuration,
  humanInstant,
  shortLabel,
} from '../../../../lib/report/render/units.js';

describe("the page's human units (R4-10, docs/page.md#units)", () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [1_000, '1 s'],
    [48_211, '48.2 s'],
    [59_949, '59.9 s'],
    [59_950, '1 min'],
    [165_232, '2 min 45 s'],
    [301_776, '5 min 2 s'],
    [3_600_000, '1 h'],
    [11_520_000, '3 h 12 min'],
    [360_000_000, '100 h'],
  ])('R4-10: %d ms reads "%s"', (ms, shown) => {
    expect(humanDuration(ms)).toBe(shown);
  });

  it.each([
    [821_000, '$82.10'],
    [12_040_000, '$1,204.00'],
    [10_000, '$1.00'],
    [133, '$0.0133'],
    [1, '$0.0001'],
    [0, '$0.0000'],
    [-821_000, '-$82.10'],
  ])('R4-10: %d subcents read "%s" (10,000 to the dollar)', (subcents, shown) => {
    expect(dollars(subcents)).toBe(shown);
  });

  it.each([
    ['2026-12-01T17:41:25.512846Z', '1 Dec 2026, 17:41 UTC'],
    ['2026-07-09T00:00:00.000000Z', '9 Jul 2026, 00:00 UTC'],
    ['0001-01-01T00:00:00.000000Z', '1 Jan 0001, 00:00 UTC'],
    ['not an instant', 'not an instant'],
  ])('R4-10: the instant %s reads "%s"', (at, shown) => {
    expect(humanInstant(at)).toBe(shown);
  });

  it('R4-4: a cut keeps at most max characters, never half a surrogate pair, and states the full length', () => {
    expect(cutText('abc', 5)).toEqual({ text: 'abc' });
    expect(cutText('😀😀😀', 2)).toEqual({ text: '😀😀', cutFrom: 3 });
    expect(cutText('a😀b', 2)).toEqual({ text: 'a😀', cutFrom: 3 });
    expect(shortLabel(`${'m'.repeat(12)}😀😀${'m'.repeat(12)}😀😀tail`, 28)).toBe(
      `${'m'.repeat(12)}😀😀${'m'.repeat(12)}😀…`,
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite' }), fc.integer({ min: 1, max: 20 }), (s, max) => {
        const cut = cutText(s, max);
        expect(s.startsWith(cut.text)).toBe(true);
        expect(codePoints(cut.text)).toBeLessThanOrEqual(max);
        // no lone high surrogate at the end of a cut
        expect(/[\uD800-\uDBFF]$/.test(cut.text) && cut.text.length < s.length).toBe(false);
        expect(cut.cutFrom).toBe(cut.text === s ? undefined : [...s].length);
      }),
    );
  });
});
