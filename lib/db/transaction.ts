import type { Queryable } from './database.js';

/** A transaction a driver has begun: the connection its statements run on, and how it ends. */
export interface OpenTransaction {
  readonly tx: Queryable;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** a ROLLBACK that failed: the connection is in an unknown state (the driver discards it) */
  onRollbackError?: (error: Error) => void;
}

/**
 * The one transaction rule for every driver: `fn` runs on the transaction's connection; COMMIT when
 * it resolves; ROLLBACK when it or the COMMIT throws, and then the error that caused it is
 * rethrown. A failing ROLLBACK never hides that error: it goes to `onRollbackError`.
 */
export async function runTransaction<T>(open: OpenTransaction, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    const result = await fn(open.tx);
    await open.commit();
    return result;
  } catch (err) {
    try {
      await open.rollback();
    } catch (rollbackError) {
      open.onRollbackError?.(rollbackError as Error);
    }
    throw err;
  }
}
