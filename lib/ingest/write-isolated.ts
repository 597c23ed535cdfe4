import type { Queryable } from '../db/database.js';
import { DatabaseError, type FailureKind } from '../db/errors.js';
import type { SubagentWrite } from '../row.js';
import { writeBatch } from '../store/write.js';
import type { Micros } from '../time.js';

export interface GroupedWrite {
  /** the SQS MessageGroupId the write arrived in */
  group: string;
  write: SubagentWrite;
}

export type WriteOutcome = { status: 'persisted' } | { status: FailureKind; error: DatabaseError };

/**
 * Writes a batch in one statement and, only if that statement fails, finds out which writes were
 * to blame so healthy message groups still commit:
 * 1. the whole batch, one statement (the normal case: one round trip);
 * 2. on failure, each message group on its own (groups are independent sessions);
 * 3. a group that failed for a non-transient reason, one write at a time in arrival order, so a
 *    deleted session or a rejected row is pinned to its frame and the rest of the group lands.
 * A transient failure fails the write and every later write of its group (they must not overtake it).
 * Outcomes are returned in the input order.
 */
export async function writeIsolated(db: Queryable, items: readonly GroupedWrite[], now: Micros): Promise<WriteOutcome[]> {
  if (items.length === 0) return [];
  let error: DatabaseError;
  try {
    await writeBatch(db, items.map((i) => i.write), now);
    return items.map(() => ({ status: 'persisted' }));
  } catch (err) {
    error = asDatabaseError(err);
  }
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => groups.set(item.group, [...(groups.get(item.group) ?? []), index]));
  const outcomes: WriteOutcome[] = new Array(items.length);
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      // With a single group the batch statement already was the group statement.
      const groupError = groups.size === 1 ? error : await tryWrite(db, indexes.map((i) => items[i]!.write), now);
      const results = groupError ? await writeOneByOne(db, indexes.map((i) => items[i]!.write), now, groupError) : indexes.map(() => ({ status: 'persisted' as const }));
      indexes.forEach((itemIndex, k) => (outcomes[itemIndex] = results[k]!));
    }),
  );
  return outcomes;
}

async function writeOneByOne(db: Queryable, writes: readonly SubagentWrite[], now: Micros, groupError: DatabaseError): Promise<WriteOutcome[]> {
  if (groupError.kind === 'transient' || writes.length === 1) return writes.map(() => ({ status: groupError.kind, error: groupError }));
  const outcomes: WriteOutcome[] = [];
  for (const [i, write] of writes.entries()) {
    const error = await tryWrite(db, [write], now);
    if (error?.kind === 'transient') {
      for (let k = i; k < writes.length; k += 1) outcomes.push({ status: 'transient', error });
      break;
    }
    outcomes.push(error ? { status: error.kind, error } : { status: 'persisted' });
  }
  return outcomes;
}

async function tryWrite(db: Queryable, writes: readonly SubagentWrite[], now: Micros): Promise<DatabaseError | undefined> {
  try {
    await writeBatch(db, writes, now);
    return undefined;
  } catch (err) {
    return asDatabaseError(err);
  }
}

/**
 * Anything that is not a classified database error (a bug, an unexpected driver failure) is
 * treated as transient: the frames are redelivered and, if it persists, SQS moves them to the
 * DLQ after maxReceiveCount — never acknowledged and lost.
 */
function asDatabaseError(err: unknown): DatabaseError {
  if (err instanceof DatabaseError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new DatabaseError(`unexpected write failure: ${message}`, 'transient', undefined, undefined, { cause: err });
}
