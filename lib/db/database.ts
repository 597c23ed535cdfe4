import type { DeadlineOwner } from '../hints.js';
import type { Dialect } from './dialect/dialect.js';

export type Row = Record<string, unknown>;

export interface Queryable {
  readonly dialect: Dialect;
  /** One statement, one round trip. SQL uses `$1…$n` placeholders on every dialect. */
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

export interface Database extends Queryable {
  /** BEGIN … COMMIT on one connection; ROLLBACK and rethrow on any failure. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * The statements in order in one transaction, as `transaction` running them one by one would
   * (all or nothing; each sees the ones before it), in as few round trips as the driver allows:
   * on PostgreSQL one (a pipeline, lib/db/pipeline.ts), plus a ROLLBACK when one fails.
   */
  batch(statements: readonly { sql: string; params?: readonly unknown[] }[]): Promise<void>;
  /** Statements sent since open (BEGIN/COMMIT included): the cost of a batch. */
  readonly stats: { roundTrips: number };
  /**
   * Bounds every later connect and statement by this epoch time in ms (R2-5: the invocation's
   * remaining time); undefined removes the bound. A statement past it fails as a system error
   * whose hint is the owner's (lib/hints.ts: the frames stay on the queue only for ingest).
   */
  setDeadline(deadline: number, owner: DeadlineOwner): void;
  setDeadline(deadline: undefined): void;
  close(): Promise<void>;
}
