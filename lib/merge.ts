import { COLUMNS, type MergeRule, NEWEST_COLUMNS } from './columns.js';
import type { StoredWrite, SubagentWrite } from './row.js';
import type { Micros } from './time.js';

type Value = SubagentWrite[keyof SubagentWrite] | undefined;

/**
 * The columns a write of ours carries in memory: `id` is the writer's, and `updated_at` equals
 * `last_observed_at` on every row we write (R3-1), so it is carried once.
 */
const WRITE_COLUMNS = COLUMNS.filter((c) => c.name !== 'id' && c.name !== 'updated_at');

/** What a rule needs to know about the row and the frame landing on it. */
interface MergeContext {
  /** the frame is older than the row's newest applied observation (R2-7, R3-1): it only fills NULLs */
  older: boolean;
  /** the row was settled before this frame */
  settled: boolean;
  /** this frame settles the row (it fills settled_at) */
  settles: boolean;
  /** the row's newest applied observation before this frame */
  newest: Micros;
  /** the frame's observation */
  observed: Micros;
}

/**
 * A row's newest applied observation (R2-7, R3-1, docs/merge.md#two-writers-one-row): the greatest
 * of its `newest` columns, NULL (or, in memory, absent) read as observed_at. For a row we wrote
 * last that is `last_observed_at`; for a row the host's writer created or updated after us it is
 * the host's `updated_at`, its clock at that write. lib/store/upsert.ts says the same in SQL.
 */
export function newestObservation(row: StoredWrite): Micros {
  let newest = row.observed_at;
  for (const name of NEWEST_COLUMNS) {
    const value = row[name] ?? row.observed_at;
    if (value > newest) newest = value;
  }
  return newest;
}

/**
 * The conflict clause's rules applied in memory (docs/merge.md): `mergeWrite(stored, next)` is what
 * the upsert leaves when the frame `next` lands on the row `stored`, which either writer may have
 * left (its `updated_at` is then `last_observed_at`). lib/store/upsert.ts generates the same rules
 * as SQL from the same column list.
 */
export function mergeWrite(stored: StoredWrite, next: SubagentWrite): SubagentWrite {
  const newest = newestObservation(stored);
  const settled = stored.settled_at !== null;
  const context: MergeContext = {
    older: next.observed_at < newest,
    settled,
    settles: !settled && next.settled_at !== null,
    newest,
    observed: next.observed_at,
  };
  const merged: Record<string, Value> = {};
  for (const column of WRITE_COLUMNS) {
    const name = column.name as keyof SubagentWrite;
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
    case 'newest':
      // The greater of the row's newest observation and the frame's; a tie keeps the row's.
      if (c.observed > c.newest) return c.observed;
      return c.newest;
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
