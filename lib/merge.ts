import { COLUMNS, type MergeRule } from './columns.js';
import type { SubagentWrite } from './row.js';

type Value = SubagentWrite[keyof SubagentWrite] | undefined;

/** What a rule needs to know about the row and the frame landing on it. */
interface MergeContext {
  /** the frame is older than the row's newest applied observation (R2-7): it only fills NULLs */
  older: boolean;
  /** the row was settled before this frame */
  settled: boolean;
  /** this frame settles the row (it fills settled_at) */
  settles: boolean;
  /** the row's newest applied observation before this frame */
  newest: SubagentWrite['last_observed_at'];
}

/**
 * The conflict clause's rules applied in memory (docs/merge.md): `mergeWrite(stored, next)` is what
 * the upsert leaves when the frame `next` lands on the row `stored`. lib/store/upsert.ts generates
 * the same rules as SQL from the same column list.
 */
export function mergeWrite(stored: SubagentWrite, next: SubagentWrite): SubagentWrite {
  const newest = stored.last_observed_at ?? stored.observed_at;
  const settled = stored.settled_at !== null;
  const context: MergeContext = {
    older: next.observed_at < newest,
    settled,
    settles: !settled && next.settled_at !== null,
    newest,
  };
  const merged: Record<string, Value> = { ...stored };
  for (const column of COLUMNS) {
    const name = column.name as keyof SubagentWrite;
    if (!(name in stored)) continue; // id and updated_at are the writer's
    merged[name] = mergeValue(column.merge, stored[name], next[name], context);
  }
  return merged as unknown as SubagentWrite;
}

function mergeValue(rule: MergeRule, stored: Value, next: Value, c: MergeContext): Value {
  switch (rule) {
    case 'keep':
      return stored;
    case 'fill':
      return stored ?? next;
    case 'replace':
      return c.older ? (stored ?? next) : (next ?? stored);
    case 'replaceUntilSettled':
      if (c.settled) return stored;
      if (c.settles) return next;
      return c.older ? (stored ?? next) : (next ?? stored);
    case 'sticky':
      return stored === 1 || next === 1 ? 1 : 0;
    case 'overwrite':
      return next;
    case 'newest':
      return c.older ? c.newest : next;
  }
}

/**
 * What the table holds after `writes` land one at a time in arrival order: one row per conflict
 * key, in first-seen key order. (The writer cannot send such a fold as one row: whether each frame
 * is older depends on the stored row, which only the database sees; see lib/store/write.ts.)
 */
export function foldByKey(writes: readonly SubagentWrite[], keyOf: (w: SubagentWrite) => string): SubagentWrite[] {
  const folded = new Map<string, SubagentWrite>();
  for (const write of writes) {
    const key = keyOf(write);
    const stored = folded.get(key);
    folded.set(key, stored ? mergeWrite(stored, write) : write);
  }
  return [...folded.values()];
}
