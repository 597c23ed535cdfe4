import type { Group, SortBy } from './document.js';

/**
 * Groups in `--sort` order (docs/report.md#sorting): figures descending (a null figure last),
 * `key` ascending; ties by key in code-point order, the NULL key last, so both dialects give the
 * same order whatever their collation.
 */
export function sortGroups(groups: readonly Group[], sort: SortBy): Group[] {
  const figure = FIGURE[sort];
  return [...groups].sort((a, b) => {
    if (figure !== undefined) {
      const x = figure(a);
      const y = figure(b);
      if (x !== y) {
        if (x === null) return 1;
        if (y === null) return -1;
        return x > y ? -1 : 1;
      }
    }
    return compareKeys(a.key, b.key);
  });
}

const FIGURE: Record<SortBy, ((g: Group) => number | string | null) | undefined> = {
  subagents: (g) => g.subagents,
  contexts: (g) => g.contexts,
  tokens: (g) => g.tokens.sum,
  cost: (g) => g.cost_subcents,
  last_observed_at: (g) => g.last_observed_at,
  key: undefined,
};

function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareCodePoints(a, b);
}

/**
 * Code-point order: the byte order of UTF-8, which both dialects sort by (Dialect.byteOrder), so a
 * cut made in SQL (R4-12) keeps the groups this order puts first. UTF-16 code units differ from it
 * only where an astral character (a surrogate pair) meets one from U+E000 to U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A code unit's place in code-point order: surrogates (astral) after U+E000…U+FFFF. */
const codePointRank = (unit: number) => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);
