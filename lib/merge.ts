import { COLUMNS, type MergeRule } from './columns.js';
import type { SubagentWrite } from './row.js';

type Value = SubagentWrite[keyof SubagentWrite] | undefined;

/**
 * The conflict clause's rules applied in memory: `mergeWrite(stored, next)` is what the upsert
 * leaves when `next` lands on `stored`. The rules are associative, so folding a batch's frames of
 * one key first and upserting the fold equals upserting them one at a time.
 */
export function mergeWrite(stored: SubagentWrite, next: SubagentWrite): SubagentWrite {
  const merged: Record<string, Value> = { ...stored };
  for (const column of COLUMNS) {
    const name = column.name as keyof SubagentWrite;
    if (!(name in stored)) continue; // id and updated_at are the writer's
    merged[name] = mergeValue(column.merge, stored[name], next[name], stored.settled_at !== null);
  }
  return merged as unknown as SubagentWrite;
}

function mergeValue(rule: MergeRule, stored: Value, next: Value, settled: boolean): Value {
  switch (rule) {
    case 'keep':
      return stored;
    case 'fill':
      return stored ?? next;
    case 'replace':
      return next ?? stored;
    case 'replaceUntilSettled':
      return settled ? stored : (next ?? stored);
    case 'sticky':
      return stored === 1 || next === 1 ? 1 : 0;
    case 'overwrite':
      return next;
  }
}

/** Folds writes given in arrival order into one write per conflict key, first-seen key order. */
export function foldByKey(writes: readonly SubagentWrite[], keyOf: (w: SubagentWrite) => string): SubagentWrite[] {
  const folded = new Map<string, SubagentWrite>();
  for (const write of writes) {
    const key = keyOf(write);
    const stored = folded.get(key);
    folded.set(key, stored ? mergeWrite(stored, write) : write);
  }
  return [...folded.values()];
}
