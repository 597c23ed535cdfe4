import { COLUMNS, type ColumnDef, type MergeRule, NEWEST_COLUMNS } from './columns.js';
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
 * key, in first-seen key order. (Onto a stored row, a key's frames land as `foldFrames` summarises
 * them: `mergeFold`.)
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

/** The columns whose fold needs more than the folded row: `replace` and `replaceUntilSettled`. */
const REPLACE_COLUMNS = COLUMNS.filter((c) => c.merge === 'replace' || c.merge === 'replaceUntilSettled').map(
  (c) => c.name as ReplaceColumn,
);
export type ReplaceColumn = Extract<ColumnDef, { merge: 'replace' | 'replaceUntilSettled' }>['name'];
export { REPLACE_COLUMNS };

/**
 * What the closed form needs of a replaceable column beyond the folded row (docs/merge.md#batches):
 * `at`, the observation of the last record-setting frame with a value (null: there is none), and
 * `first`, the first value in arrival order.
 */
export interface ReplaceSummary {
  at: Micros | null;
  first: SubagentWrite[ReplaceColumn];
}

/**
 * One key's frames folded (docs/merge.md#batches): `row` is what they leave where there is no row
 * yet (foldByKey), `replace` what else the closed form needs, for the replaceable columns where it
 * differs from what one frame would say (`at` = the row's newest observation when its value is not
 * NULL, else null; `first` = its value). A single frame needs nothing more.
 */
export interface KeyFold {
  row: SubagentWrite;
  replace: Partial<Record<ReplaceColumn, ReplaceSummary>>;
}

/** What one frame (or `row` read as one frame) says of a replaceable column. */
function asOneFrame(row: SubagentWrite, name: ReplaceColumn): ReplaceSummary {
  const value = row[name];
  return { at: value === null ? null : row.last_observed_at, first: value };
}

/**
 * Folds one key's frames, in arrival order, into the summary whose merge onto any stored row
 * (`mergeFold`) equals applying them one at a time (`foldByKey`, `mergeWrite`). A frame is
 * record-setting when no earlier frame of the batch was observed later; only record-setting frames
 * can be newer than the stored row, and they are newer exactly when observed no earlier than the
 * row's newest observation, a suffix of them. So a replaceable column ends with the value of the
 * last record-setting frame that has one, when that frame is newer than the row, and otherwise
 * with the stored value, or the batch's first value where the row has none.
 */
export function foldFrames(frames: readonly SubagentWrite[]): KeyFold {
  // One frame is its own fold (most keys of a FIFO batch of 10).
  if (frames.length === 1) return { row: frames[0]!, replace: {} };
  let row = frames[0]!;
  let record = row.observed_at;
  const at: Partial<Record<ReplaceColumn, Micros>> = {};
  const first: Partial<Record<ReplaceColumn, SubagentWrite[ReplaceColumn]>> = {};
  frames.forEach((frame, i) => {
    if (i > 0) row = mergeWrite(row, frame);
    const recordSetting = frame.observed_at >= record;
    if (recordSetting) record = frame.observed_at;
    for (const name of REPLACE_COLUMNS) {
      const value = frame[name];
      if (value === null) continue;
      if (!(name in first)) first[name] = value;
      if (recordSetting) at[name] = frame.observed_at;
    }
  });
  const replace: KeyFold['replace'] = {};
  for (const name of REPLACE_COLUMNS) {
    const summary = { at: at[name] ?? null, first: name in first ? first[name]! : null };
    const one = asOneFrame(row, name);
    if (summary.at !== one.at || summary.first !== one.first) replace[name] = summary;
  }
  return { row, replace };
}

/**
 * The closed form (docs/merge.md#batches): what `fold` leaves on the stored row, the conflict
 * clause's rules in memory (lib/store/upsert.ts generates them as SQL from the same column list).
 * Equals `frames.reduce(mergeWrite, stored)` for the frames `fold` was made of.
 */
export function mergeFold(stored: StoredWrite, fold: KeyFold): SubagentWrite {
  const { row } = fold;
  const newest = newestObservation(stored);
  const merged: Record<string, Value> = {};
  for (const column of WRITE_COLUMNS) {
    const name = column.name as keyof SubagentWrite;
    const value = stored[name];
    switch (column.merge) {
      case 'keep':
        merged[name] = value;
        break;
      case 'fill':
        merged[name] = value ?? row[name];
        break;
      case 'sticky':
        merged[name] = value === 1 || row[name] === 1 ? 1 : 0;
        break;
      case 'newest':
        // The later of the row's and the batch's newest observation; a tie keeps the row's.
        merged[name] = newest;
        if (row.last_observed_at > newest) merged[name] = row.last_observed_at;
        break;
      case 'replaceUntilSettled':
        if (stored.settled_at !== null) merged[name] = value;
        else if (row.settled_at !== null) merged[name] = row[name];
        else merged[name] = replaced(stored, fold, name as ReplaceColumn, newest);
        break;
      case 'replace':
        merged[name] = replaced(stored, fold, name as ReplaceColumn, newest);
        break;
    }
  }
  return merged as unknown as SubagentWrite;
}

function replaced(stored: StoredWrite, fold: KeyFold, name: ReplaceColumn, newest: Micros): Value {
  const { at, first } = fold.replace[name] ?? asOneFrame(fold.row, name);
  return at !== null && at >= newest ? fold.row[name] : (stored[name] ?? first);
}

/** One key's frames in arrival order, per key in first-seen order. */
export function framesByKey(
  writes: readonly SubagentWrite[],
  keyOf: (w: SubagentWrite) => string,
): Map<string, SubagentWrite[]> {
  const byKey = new Map<string, SubagentWrite[]>();
  for (const write of writes) {
    const key = keyOf(write);
    const list = byKey.get(key);
    if (list) list.push(write);
    else byKey.set(key, [write]);
  }
  return byKey;
}
