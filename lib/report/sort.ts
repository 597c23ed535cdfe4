import type { Group, SortBy } from './document.js';

/**
 * Groups in `--sort` order (docs/report.md#sorting): figures descending (a null figure last),
 * `key` ascending; ties by key in code-unit order, the NULL key last, so both dialects give the
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
  return a < b ? -1 : 1;
}
