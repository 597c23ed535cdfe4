import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { breakAtWidth, displayWidth } from '../../lib/display-width.js';

describe('issue 58 #17: text measured in the columns a terminal draws', () => {
  it.each([
    ['ASCII', 'g1-task-00000007', 16],
    ['CJK, two columns each', '中文の題名', 10],
    ['an emoji', '😀', 2],
    ['a family (one cluster joined by ZWJ)', '👨‍👩‍👧', 2],
    ['a flag (two regional indicators)', '🇺🇸', 2],
    ['a heart made an emoji by VS16', '❤️', 2],
    ['an accent that combines', 'e\u0301', 1],
    ['fullwidth forms', 'ＡＢ', 4],
    ['a lone surrogate (drawn as U+FFFD)', '\ud800', 1],
    ['a zero-width space', 'a\u200bb', 2],
  ])('issue 58 #17: %s', (_what, text, width) => {
    expect(displayWidth(text)).toBe(width);
  });

  it('issue 58 #17: breaking at a width keeps every character, splits no cluster and fills each line', () => {
    expect(breakAtWidth('中文中文中', 4)).toEqual(['中文', '中文', '中']);
    expect(breakAtWidth('abcdefgh', 3, 2)).toEqual(['abc', 'de', 'fg', 'h']);
    expect(breakAtWidth('e\u0301e\u0301e\u0301', 2)).toEqual(['e\u0301e\u0301', 'e\u0301']);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.integer({ min: 2, max: 30 }), (text, width) => {
        const pieces = breakAtWidth(text, width);
        expect(pieces.join('')).toBe(text);
        // a cluster wider than the line (string-width gives U+1D160 three columns) is a piece of its own
        const clusters = (piece: string) =>
          [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(piece)].length;
        for (const piece of pieces) if (clusters(piece) > 1) expect(displayWidth(piece)).toBeLessThanOrEqual(width);
      }),
    );
  });
});
