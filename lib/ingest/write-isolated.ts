import type { Queryable } from '../db/database.js';
import { DatabaseError, type FailureKind } from '../db/errors.js';
import type { SubagentWrite } from '../row.js';
import { writeBatch } from '../store/write.js';
import type { Micros } from '../time.js';
import { byGroup, GroupGate } from './fifo.js';

export interface GroupedWrite {
  /** the SQS message group the write arrived in (fifo.ts `groupOf`) */
  group: string;
  write: SubagentWrite;
}

export type WriteResult = { status: 'persisted' } | { status: FailureKind; error: DatabaseError };

/**
 * Writes a batch in one statement and, only if that statement fails, finds out which writes were
 * to blame so healthy message groups still commit (docs/ingest.md):
 * 1. the whole batch, one statement (the normal case: one round trip);
 * 2. on a row or contention failure, each message group on its own (groups are independent
 *    sessions: a lock held on one session must not hold back the others); a system failure
 *    (R2-4: the database is unusable) fails every write at once;
 * 3. a group that failed for a row's reason, one write at a time in arrival order, so a deleted
 *    session or a rejected row is pinned to its frame and the rest of the group lands. A write
 *    that fails transiently there fails the rest of its group (the FIFO rule, fifo.ts).
 * Returns each item's result, keyed by the item itself.
 */
export async function writeIsolated<T extends GroupedWrite>(
  db: Queryable,
  items: readonly T[],
  now: Micros,
): Promise<Map<T, WriteResult>> {
  const results = new Map<T, WriteResult>();
  if (items.length === 0) return results;
  const error = await tryWrite(db, items, now);
  if (error?.kind === 'system') {
    // The database itself is unusable (R2-4): no group can succeed, and trying each costs time.
    for (const item of items) results.set(item, { status: 'system', error });
    return results;
  }
  const groups = byGroup(items, (item) => item.group);
  await Promise.all(
    groups.map(async (members) => {
      // With a single group the batch statement already was the group statement.
      const groupError = error && (groups.length === 1 ? error : await tryWrite(db, members, now));
      if (!groupError) for (const item of members) results.set(item, { status: 'persisted' });
      else await writeOneByOne(db, members, now, groupError, results);
    }),
  );
  return results;
}

async function writeOneByOne<T extends GroupedWrite>(
  db: Queryable,
  members: readonly T[],
  now: Micros,
  groupError: DatabaseError,
  results: Map<T, WriteResult>,
): Promise<void> {
  if (!isolatable(groupError) || members.length === 1) {
    for (const item of members) results.set(item, { status: groupError.kind, error: groupError });
    return;
  }
  const gate = new GroupGate();
  let blocking = groupError;
  for (const item of members) {
    if (gate.blocks(item.group)) {
      results.set(item, { status: blocking.kind, error: blocking });
      continue;
    }
    const error = await tryWrite(db, [item], now);
    results.set(item, error ? { status: error.kind, error } : { status: 'persisted' });
    if (error && !isolatable(error)) {
      gate.fail(item.group);
      blocking = error;
    }
  }
}

/** A failure one row can cause (a rejected row, a deleted session): worth finding which row. */
function isolatable(error: DatabaseError): boolean {
  return error.kind === 'row' || error.kind === 'foreign_key';
}

async function tryWrite(
  db: Queryable,
  items: readonly GroupedWrite[],
  now: Micros,
): Promise<DatabaseError | undefined> {
  try {
    await writeBatch(
      db,
      items.map((i) => i.write),
      now,
    );
    return undefined;
  } catch (err) {
    return asDatabaseError(err);
  }
}

/**
 * Anything that is not a classified database error (a bug, an unexpected driver failure) is a
 * system error: the frames stay on the queue and the alarm fires — never acknowledged and lost.
 */
function asDatabaseError(err: unknown): DatabaseError {
  if (err instanceof DatabaseError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new DatabaseError(`unexpected write failure: ${message}`, 'system', undefined, undefined, { cause: err });
}
