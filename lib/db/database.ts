import type { DeadlineOwner } from '../hints.js';
import type { Dialect } from './dialect/dialect.js';

export type Row = Record<string, unknown>;

/** How a statement is sent. */
export interface QueryOptions {
  /**
   * Keep the statement parsed on the connection under this name and reuse it on later calls
   * (PostgreSQL's named prepared statement): for a large statement sent on every batch, whose
   * parse and analysis cost the server more than running it (docs/ingest.md#one-statement). The
   * name must identify the SQL text. SQLite caches every statement already and ignores it.
   */
  readonly prepareAs?: string;
}

export interface Queryable {
  readonly dialect: Dialect;
  /**
   * How many statements it runs at once (a pool's connections); absent: one. A caller that sends
   * several statements side by side sends no more than this (lib/db/limit.ts), so none waits for
   * a connection the pool cannot give it (R4-12).
   */
  readonly connections?: number;
  /** One statement, one round trip. SQL uses `$1…$n` placeholders on every dialect. */
  query<T = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
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
  /** How a read-only open read the store, for a note (R4-5: SQLite says whether it made files to read it) */
  readonly readNote?: string;
  close(): Promise<void>;
}
