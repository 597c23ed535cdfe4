import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../../../lib/report/sort.js';

/*
 * R4-12 (docs/report.md#sorting): keys tie-break in code-point order, the byte order of UTF-8 that
 * both dialects sort by (Dialect.byteOrder), so a cut made in SQL keeps the groups JavaScript
 * puts first. The oracle is UTF-8 itself: Buffer.compare of the encoded keys.
 */
const sign = (n: number) => Math.sign(n);
// any well-formed text: astral characters, U+E000…U+FFFF and ASCII, prefixes of each other
const key = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', 'a', 'B', '\uFFFD', '\uE000', '\u{1F600}', '\u{10FFFF}', 'a\u{1F600}', 'a\uFFFD'),
);

describe('compareCodePoints', () => {
  it('R4-12: orders any two keys as their UTF-8 bytes do', () => {
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(sign(compareCodePoints(a, b))).toBe(sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ['\uFFFD', '\u{1F600}', -1],
    ['\uE000', '\u{10000}', -1],
    ['\uD7FF', '\u{10000}', -1],
    ['a', 'a\u{1F600}', -1],
    ['B', 'a', -1],
    ['x', 'x', 0],
  ])('R4-12: %j against %j sorts %d (hand-written)', (a, b, expected) => {
    expect(sign(compareCodePoints(a, b))).toBe(expected);
    expect(sign(compareCodePoints(b, a))).toBe(-expected || 0);
  });
});
