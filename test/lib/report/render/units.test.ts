import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  codePoints,
  cutText,
  humanDay,
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
    [360_000_000, '4 days 4 h'],
    // each unit's edges
    [999, '999 ms'],
    [1_050, '1.1 s'],
    [60_000, '1 min'],
    [3_599_499, '59 min 59 s'],
    [3_599_500, '1 h'],
    [5_430_000, '1 h 31 min'],
    [3_600_000_000, '42 days'],
  ])('R4-10: %d ms reads "%s"', (ms, shown) => {
    expect(humanDuration(ms)).toBe(shown);
  });

  it.each([
    ['2026-12-01T17:41:25.512846Z', '1 Dec 2026, 17:41 UTC'],
    ['2026-07-09T00:00:00.000000Z', '9 Jul 2026, 00:00 UTC'],
    ['0001-01-01T00:00:00.000000Z', '1 Jan 0001, 00:00 UTC'],
    ['not an instant', 'not an instant'],
    // anything but the document's RFC 3339 UTC text is shown as it is
    ['2026-12-01T17:41:25+01:00', '2026-12-01T17:41:25+01:00'],
    ['2026-13-01T00:00:00.000000Z', '2026-13-01T00:00:00.000000Z'],
    ['2026-00-01T00:00:00.000000Z', '2026-00-01T00:00:00.000000Z'],
    ['at 2026-12-01T17:41:25Z', 'at 2026-12-01T17:41:25Z'],
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

  it.each([
    ['01', 'Jan'],
    ['02', 'Feb'],
    ['03', 'Mar'],
    ['04', 'Apr'],
    ['05', 'May'],
    ['06', 'Jun'],
    ['07', 'Jul'],
    ['08', 'Aug'],
    ['09', 'Sep'],
    ['10', 'Oct'],
    ['11', 'Nov'],
    ['12', 'Dec'],
  ])('R4-10: month %s reads %s', (month, name) => {
    expect(humanInstant(`2026-${month}-15T08:05:00.000000Z`)).toBe(`15 ${name} 2026, 08:05 UTC`);
  });

  it.each([
    ['2026-12-01', '1 Dec 2026'],
    ['2026-07-09', '9 Jul 2026'],
    ['2026-13-01', '2026-13-01'],
    ['(not a day)', '(not a day)'],
  ])('R4-10: the day %s reads "%s"', (day, shown) => {
    expect(humanDay(day)).toBe(shown);
  });

  it.each([
    ['the first pair, U+10000', '\uD800\uDC00', 1],
    ['the last pair, U+10FFFF', '\uDBFF\uDFFF', 1],
    ['a lone high surrogate', '\uD800', 1],
    ['a high surrogate last', 'a\uD800', 2],
    ['a high surrogate before a letter', '\uD800a', 2],
    ['a low surrogate first', '\uDC00\uD800', 2],
    ['two low surrogates', '\uDC00\uDC00', 2],
    ['a high surrogate before a non-surrogate', '\uD800\uE000', 2],
    ['U+D7FF before a low surrogate', '\uD7FF\uDC00', 2],
    ['a high surrogate before U+DBFF', '\uD800\uDBFF', 2],
  ])('R4-4: %s (%j) counts as %d character(s)', (_, s, n) => {
    expect(codePoints(s)).toBe(n);
  });

  it.each([
    ['fits by code points though longer in UTF-16: kept whole', '😀😀', 3, { text: '😀😀' }],
    ['exactly max', 'abcd', 4, { text: 'abcd' }],
    ['one over', 'abcde', 4, { text: 'abcd', cutFrom: 5 }],
  ])('R4-4: cutText: %s', (_, s, max, cut) => {
    expect(cutText(s, max)).toEqual(cut);
  });

  it.each([
    ['shorter than max', 'abc', 4, 'abc'],
    ['exactly max', 'abcd', 4, 'abcd'],
    ['max in code points, longer in UTF-16', '😀😀', 2, '😀😀'],
    ['longer: max - 1 characters and …', 'abcdef', 4, 'abc…'],
  ])('R4-10: a chart label %s', (_, s, max, shown) => {
    expect(shortLabel(s, max)).toBe(shown);
  });
});
