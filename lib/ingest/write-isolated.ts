import type { Queryable } from '../db/database.js';
import { clearsByItself, DatabaseError, type FailureKind, hintFor, provesDatabaseUnusable } from '../db/errors.js';
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
 * to blame so healthy message groups still commit (docs/ingest.md#write-failures: one group never delays another):
 * 1. the whole batch, one statement (the normal case: one round trip);
 * 2. unless the failure's class proves the whole database unusable (db/errors.ts
 *    provesDatabaseUnusable: connection, authentication, missing database/table/column, resources —
 *    then every write fails at once, R2-4), each message group on its own (groups are independent
 *    sessions: a lock or a trigger on one session must not hold back the others);
 * 3. a group that failed for anything but contention, one write at a time in arrival order, so the
 *    failure is pinned to its frame and the rest of the group lands. A write that fails for time or
 *    contention there (db/errors.ts clearsByItself) fails the rest of its group (the FIFO rule,
 *    fifo.ts).
 * Isolation by evidence, not by code list: a write that failed ALONE with a system-class SQLSTATE
 * (a host trigger's P0001, a row-level-security 42501, XX000…) is that frame's when other writes of
 * the batch landed and it fails again when tried once more by itself — it is then parked with its
 * SQLSTATE (status `row`); when nothing landed, nothing shows the database usable (a missing grant
 * fails every frame), so it stays a system error and the records stay on the queue.
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
  if (!error) {
    for (const item of items) results.set(item, { status: 'persisted' });
    return results;
  }
  if (provesDatabaseUnusable(error.sqlstate)) {
    // The database itself is unusable (R2-4): no group can succeed, and trying each costs time.
    for (const item of items) results.set(item, { status: error.kind, error });
    return results;
  }
  /** writes that failed alone with a system-class error: theirs, if anything else landed */
  const alone = new Map<T, DatabaseError>();
  const groups = byGroup(items, (item) => item.group);
  await Promise.all(
    groups.map(async (members) => {
      // With a single group the batch statement already was the group statement.
      const groupError = groups.length === 1 ? error : await tryWrite(db, members, now);
      if (!groupError) for (const item of members) results.set(item, { status: 'persisted' });
      else await writeOneByOne(db, members, now, groupError, results, alone);
    }),
  );
  const landed = [...results.values()].some((result) => result.status === 'persisted');
  // Evidence twice over: once everything else is done, each such frame is tried once more on its
  // own, with nothing running beside it. A refusal of the frame (a trigger, a policy) repeats; a
  // failure of the moment (a connection's state, a concurrent statement) does not, and the frame lands.
  for (const [item, failure] of alone) {
    if (!landed) {
      results.set(item, { status: failure.kind, error: failure });
      continue;
    }
    const again = await tryWrite(db, [item], now);
    if (!again) results.set(item, { status: 'persisted' });
    else if (again.kind === 'system' && isolatable(again))
      results.set(item, { status: 'row', error: refusedAlone(again) });
    else results.set(item, { status: again.kind, error: again });
  }
  return results;
}

async function writeOneByOne<T extends GroupedWrite>(
  db: Queryable,
  members: readonly T[],
  now: Micros,
  groupError: DatabaseError,
  results: Map<T, WriteResult>,
  alone: Map<T, DatabaseError>,
): Promise<void> {
  if (members.length === 1) {
    settle(members[0]!, groupError, results, alone);
    return;
  }
  if (!isolatable(groupError)) {
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
    if (!error) results.set(item, { status: 'persisted' });
    else if (isolatable(error)) settle(item, error, results, alone);
    else {
      results.set(item, { status: error.kind, error });
      gate.fail(item.group);
      blocking = error;
    }
  }
}

/** The result of a write that failed on its own: a row's reason is decided now, a system-class one by evidence. */
function settle<T>(item: T, error: DatabaseError, results: Map<T, WriteResult>, alone: Map<T, DatabaseError>): void {
  if (error.kind === 'system' && isolatable(error)) alone.set(item, error);
  else results.set(item, { status: error.kind, error });
}

/** A failure one frame can cause (not the database's state, not time or contention): worth finding which frame. */
function isolatable(error: DatabaseError): boolean {
  return !provesDatabaseUnusable(error.sqlstate) && !clearsByItself(error.sqlstate);
}

/**
 * The error a frame is parked with when it failed alone while others landed: its SQLSTATE and the
 * server's own words kept, the system hint ("the frames stay on the queue") replaced by what is true.
 */
function refusedAlone(failure: DatabaseError): DatabaseError {
  const hint = `: ${hintFor(failure.sqlstate)}`;
  const said = failure.message.endsWith(hint) ? failure.message.slice(0, -hint.length) : failure.message;
  return new DatabaseError(
    `${said}: the database refused this frame alone while the other frames of its batch landed (a trigger, a row-level security policy or another rule of the host's); it will not succeed on retry — fix the cause, then redrive it`,
    'row',
    failure.sqlstate,
    failure.driverCode,
    { cause: failure },
  );
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
