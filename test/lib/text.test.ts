import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identityProblem, MAX_IDENTITY_CHARS, MAX_TEXT_CHARS, storedText } from '../../lib/text.js';

/*
 * R2-1's text rules in memory (docs/frame.md#text-rules); test/lib/text-parity.test.ts and
 * test/lib/migrate/text-parity.test.ts prove the same rules end to end on every dialect.
 * The boundary code points of the surrogate ranges (U+10000 = D800 DC00, U+10FFFF = DBFF DFFF)
 * and U+E000 (the first unit past them) are where a range check can be off by one.
 */

const NUL = '\u0000';
const FIRST_ASTRAL = '\uD800\uDC00'; // U+10000
const LAST_ASTRAL = '\uDBFF\uDFFF'; // U+10FFFF
const PAST_SURROGATES = '\uE000';

describe('identityProblem', () => {
  it.each([
    ['an ordinary id', 'toolu_01', undefined],
    ['an empty id', '', undefined],
    ['a U+0000', `c1${NUL}x`, 'contains U+0000'],
    ['a lone high surrogate', 'c1\uD800x', 'contains an unpaired UTF-16 surrogate'],
    ['a lone high surrogate at the end', 'c1\uD83D', 'contains an unpaired UTF-16 surrogate'],
    ['a lone low surrogate', 'c1\uDC00x', 'contains an unpaired UTF-16 surrogate'],
    ['a paired surrogate (an emoji)', 'c1\uD83D\uDE00', undefined],
    [`${MAX_IDENTITY_CHARS} characters`, 'c'.repeat(MAX_IDENTITY_CHARS), undefined],
    [`${MAX_IDENTITY_CHARS + 1} characters`, 'c'.repeat(MAX_IDENTITY_CHARS + 1), 'is longer than 512 characters'],
    [
      `${MAX_IDENTITY_CHARS} × U+10000 (twice as many UTF-16 units)`,
      FIRST_ASTRAL.repeat(MAX_IDENTITY_CHARS),
      undefined,
    ],
    [`${MAX_IDENTITY_CHARS} × U+10FFFF`, LAST_ASTRAL.repeat(MAX_IDENTITY_CHARS), undefined],
    [
      `${MAX_IDENTITY_CHARS + 1} × U+10000`,
      FIRST_ASTRAL.repeat(MAX_IDENTITY_CHARS + 1),
      'is longer than 512 characters',
    ],
    [`${MAX_IDENTITY_CHARS} × U+E000`, PAST_SURROGATES.repeat(MAX_IDENTITY_CHARS), undefined],
  ])('R2-1: %s → %s', (_name, value, expected) => {
    expect(identityProblem(value)).toBe(expected);
  });
});

describe('storedText', () => {
  it.each([
    ['ordinary text is kept', 'Review auth', 'Review auth'],
    ['every U+0000 is removed', `a${NUL}b${NUL}${NUL}c`, 'abc'],
    ['every unpaired surrogate becomes U+FFFD', 'a\uD800b\uDC00c\uD83D', 'a\uFFFDb\uFFFDc\uFFFD'],
    ['a paired surrogate is kept', 'ok \uD83D\uDE00', 'ok \uD83D\uDE00'],
    [`${MAX_TEXT_CHARS} characters are kept`, 'd'.repeat(MAX_TEXT_CHARS), 'd'.repeat(MAX_TEXT_CHARS)],
    [`${MAX_TEXT_CHARS + 1} characters are cut to ${MAX_TEXT_CHARS}`, 'd'.repeat(5000), 'd'.repeat(MAX_TEXT_CHARS)],
    [
      'U+10000 counts as one character when cutting',
      FIRST_ASTRAL.repeat(MAX_TEXT_CHARS + 1),
      FIRST_ASTRAL.repeat(MAX_TEXT_CHARS),
    ],
    ['U+10FFFF counts as one character when cutting', LAST_ASTRAL.repeat(5000), LAST_ASTRAL.repeat(MAX_TEXT_CHARS)],
    [
      'U+E000 counts as one character when cutting',
      PAST_SURROGATES.repeat(5000),
      PAST_SURROGATES.repeat(MAX_TEXT_CHARS),
    ],
    [
      'a cut never splits a pair: the last character kept is whole',
      `${'d'.repeat(MAX_TEXT_CHARS - 1)}${FIRST_ASTRAL}e`,
      `${'d'.repeat(MAX_TEXT_CHARS - 1)}${FIRST_ASTRAL}`,
    ],
  ])('R2-1: %s', (_name, value, expected) => {
    expect(storedText(value)).toBe(expected);
  });

  it('R2-1: for any UTF-16 text, the stored text holds no U+0000, no unpaired surrogate and at most 4,096 characters', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
      fc.constantFrom(NUL, '\uD800', '\uDFFF', FIRST_ASTRAL, LAST_ASTRAL),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 5000 }), (units) => {
        const stored = storedText(units.join(''));
        expect(stored).not.toContain(NUL);
        // UTF-8 cannot hold an unpaired surrogate: the round trip changes text that has one.
        expect(Buffer.from(stored, 'utf8').toString('utf8')).toBe(stored);
        expect([...stored].length).toBeLessThanOrEqual(MAX_TEXT_CHARS);
      }),
      { numRuns: 50 },
    );
  });
});
