import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Group, SortBy } from '../../../lib/report/document.js';
import { compareCodePoints, sortGroups } from '../../../lib/report/sort.js';
import { figures } from '../../../local/report-documents.js';

/*
 * `--sort` (docs/report.md#sorting, R3-5) on groups made here: each figure descending with a null
 * figure last, `key` ascending, ties by key in code-point order with the NULL key last. The
 * database tests (figures-edges.test.ts) prove the same order on each dialect's rows.
 */

function group(key: string | null, change: Partial<Group> = {}): Group {
  return {
    ...figures(1, () => 0.5, true),
    by: 'model',
    key,
    title: null,
    lower_bound: false,
    started_at: null,
    ...change,
  };
}

const keys = (groups: readonly Group[]) => groups.map((g) => g.key);

describe('R3-5 --sort', () => {
  it('R3-5: a null cost sorts after a negative one (a refund), in either input order', () => {
    for (const order of [
      [group('n', { cost_subcents: null }), group('r', { cost_subcents: -5 })],
      [group('r', { cost_subcents: -5 }), group('n', { cost_subcents: null })],
    ])
      expect(keys(sortGroups(order, 'cost'))).toEqual(['r', 'n']);
  });

  it.each([
    ['subagents', (n: number | null) => ({ subagents: n ?? 0 })],
    ['contexts', (n: number | null) => ({ contexts: n })],
    [
      'tokens',
      (n: number | null) => ({ tokens: { sum: n, reported: n === null ? 0 : 1, p50: null, p95: null, max: null } }),
    ],
    ['cost', (n: number | null) => ({ cost_subcents: n })],
  ] as const)(
    'R3-5: --sort %s is descending, a null figure last, ties by key with the NULL key last',
    (sort, figure) => {
      const groups = [
        group('b', figure(5)),
        group(null, figure(9)),
        group('c', figure(null)),
        group('a', figure(5)),
        group('d', figure(9)),
        group(null, figure(5)),
        group('e', figure(null)),
      ];
      // (subagents is never null: its "null" here is 0, last all the same)
      expect(keys(sortGroups(groups, sort as SortBy))).toEqual(['d', null, 'a', 'b', null, 'c', 'e']);
      // the input is left as it was
      expect(keys(groups)).toEqual(['b', null, 'c', 'a', 'd', null, 'e']);
    },
  );

  it('R3-5: --sort last_observed_at puts the latest first (instants compared as text), none last', () => {
    const groups = [
      group('a', { last_observed_at: '2026-08-12T13:00:00.000001Z' }),
      group('b', { last_observed_at: null }),
      group('c', { last_observed_at: '2026-08-12T13:00:00.000002Z' }),
      group('d', { last_observed_at: '2026-08-12T13:00:00.000001Z' }),
    ];
    expect(keys(sortGroups(groups, 'last_observed_at'))).toEqual(['c', 'a', 'd', 'b']);
  });

  it('R3-5: --sort key is ascending in code-point order ("B" before "a", "" first), the NULL key last, whatever the figures', () => {
    const groups = [
      group('a', { subagents: 1 }),
      group(null, { subagents: 9 }),
      group('B', { subagents: 2 }),
      group('', { subagents: 3 }),
      group('ä', { subagents: 4 }),
    ];
    expect(keys(sortGroups(groups, 'key'))).toEqual(['', 'B', 'a', 'ä', null]);
  });

  it('R3-5: for any groups, --sort key gives keys in ascending order, NULL last, and sorting twice changes nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.string(), { nil: null }), { maxLength: 20 }), (list) => {
        const sorted = keys(
          sortGroups(
            list.map((k) => group(k)),
            'key',
          ),
        );
        const nonNull = sorted.filter((k) => k !== null) as string[];
        expect(sorted.slice(nonNull.length).every((k) => k === null)).toBe(true);
        for (let i = 1; i < nonNull.length; i++) expect(nonNull[i - 1]! <= nonNull[i]!).toBe(true);
        expect(sorted).toHaveLength(list.length);
      }),
    );
  });
});

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
    // the unit just below the surrogates against the one just above them: a unit below U+D800 keeps
    // its place (it is not moved after U+E000…U+FFFF as the surrogates are)
    ['\uD7FF', '\uE000', -1],
    ['a', 'a\u{1F600}', -1],
    ['B', 'a', -1],
    ['x', 'x', 0],
  ])('R4-12: %j against %j sorts %d (hand-written)', (a, b, expected) => {
    expect(sign(compareCodePoints(a, b))).toBe(expected);
    expect(sign(compareCodePoints(b, a))).toBe(-expected || 0);
  });
});
