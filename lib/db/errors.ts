import { SubagentContextError } from '../errors.js';
import {
  type Caller,
  type DeadlineOwner,
  deadlineHintClass,
  type HintClass,
  type HintDialect,
  hint,
} from '../hints.js';

/**
 * Database failures and their classes (docs/ingest.md, R2-4), decided by SQLSTATE or by the
 * driver's own code, never by message text:
 * - `row`: this row was rejected (data exception 22xxx, integrity 23xxx, 54000): park it;
 * - `foreign_key`: the row's session was deleted (23503 on task_session_id): acknowledge it;
 * - `transient`: contention that clears by itself (40001, 40P01, 55P03): redeliver, WARN;
 * - `system`: the database, its configuration or the connection is broken (28xxx, 3D000, 42xxx,
 *   53xxx, 57xxx, 58xxx, XX000, 08xxx, socket and driver codes, no code at all): never park;
 *   redeliver, log at ERROR and count, so the alarm fires.
 */
export type FailureKind = 'row' | 'foreign_key' | 'transient' | 'system';

export class DatabaseError extends SubagentContextError {
  override readonly name = 'DatabaseError';
  constructor(
    message: string,
    readonly kind: FailureKind,
    /** SQLSTATE from PostgreSQL, or the equivalent of a SQLite result code */
    readonly sqlstate: string | undefined,
    /** the driver's or the socket's own code (e.g. SQLITE_BUSY, ECONNRESET, EPIPE); never a SQLSTATE */
    readonly driverCode: string | undefined,
    options?: { cause?: unknown; detail?: string; hintClass?: HintClass },
  ) {
    super(message, options);
    this.detail = options?.detail ?? this.message;
    this.hintClass = options?.hintClass ?? hintClassOf(sqlstate);
  }
  /**
   * Which hint of lib/hints.ts fixes it: the SQLSTATE's (`hintClassOf`), unless the layer that
   * failed knows better (a deadline has no SQLSTATE, and is not an unreachable server).
   */
  readonly hintClass: HintClass;
  /**
   * What the driver said, with its codes and without a hint: a caller other than a function (the
   * CLI) adds its own hint from lib/hints.ts to this.
   */
  readonly detail: string;
}

/** Contention: the same statement succeeds once the other transaction is done. */
const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available (lock_timeout; SQLite's busy)
]);

/** Row errors outside classes 22 and 23. */
const ROW_SQLSTATES = new Set([
  '54000', // program_limit_exceeded (e.g. an index row too big for one value)
]);

export function classifySqlstate(sqlstate: string | undefined): FailureKind {
  if (sqlstate === undefined) return 'system'; // the connection failed before the server answered
  if (sqlstate === '23503') return 'foreign_key';
  if (TRANSIENT_SQLSTATES.has(sqlstate)) return 'transient';
  if (sqlstate.startsWith('22') || sqlstate.startsWith('23') || ROW_SQLSTATES.has(sqlstate)) return 'row';
  return 'system';
}

/**
 * R2-4 by evidence (docs/ingest.md#write-failures: one group never delays another): the failures whose class alone proves
 * that no write of the batch can succeed, so isolating the failing frame would only cost round
 * trips: no SQLSTATE (the connection, the socket, the deadline), the connection class 08,
 * authentication 28, a missing database 3D000, insufficient resources 53, system I/O 58, the server
 * shutting down or refusing connections 57P01-57P05, and a missing table or column (42P01, 42703;
 * SQLite's 42000 "no such table"). Every other failure — a trigger's P0001, a row-level-security
 * 42501, XX000, 25006, HV000, 2F003, a row error, contention — may belong to one frame, and the
 * batch is retried without it (lib/ingest/write-isolated.ts); whether the database is unusable is
 * then decided by evidence: a missing grant fails every frame, a trigger only its own.
 */
export function provesDatabaseUnusable(sqlstate: string | undefined): boolean {
  if (sqlstate === undefined) return true;
  const cls = sqlstate.slice(0, 2);
  if (cls === '08' || cls === '28' || cls === '53' || cls === '58') return true;
  if (/^57P0[1-5]$/.test(sqlstate)) return true;
  return sqlstate === '3D000' || sqlstate === '42P01' || sqlstate === '42703' || sqlstate === '42000';
}

/**
 * A failure that is about time or contention (40001, 40P01, 55P03, 57014 statement timeout or
 * cancel): it clears by itself, so a frame that fails alone with it stays on the queue (redelivered
 * in order) rather than being parked; anything else a frame fails with alone, while other frames of
 * the batch landed, is that frame's and is parked with its SQLSTATE.
 */
export function clearsByItself(sqlstate: string | undefined): boolean {
  return sqlstate === '57014' || classifySqlstate(sqlstate) === 'transient';
}

/** Classes that do not start with a digit; a Node error code (EPIPE, ENOENT…) never starts like these. */
const LETTER_CLASSES = new Set(['HV', 'XX', 'P0', 'F0']);

/**
 * A SQLSTATE as PostgreSQL sends it: five characters whose class (the first two) is a digit class
 * or one of PostgreSQL's letter classes. `EPIPE` has the shape of a SQLSTATE and is not one.
 */
export function isSqlstate(code: unknown): code is string {
  return (
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    (/^[0-9]/.test(code) || LETTER_CLASSES.has(code.slice(0, 2)))
  );
}

/** The SQLSTATE an error carries, if the server sent one: a socket error (it has a syscall) never does. */
export function sqlstateOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; syscall?: unknown } | null;
  if (!e || typeof e !== 'object' || typeof e.syscall === 'string') return undefined;
  return isSqlstate(e.code) ? e.code : undefined;
}

/**
 * True when the connection URL itself may be out of date: the credentials were rejected (28xxx, a
 * rotated secret) or the database it names does not exist (3D000, a corrected parameter). The
 * functions then read the secret from SSM again before the next attempt.
 */
export function urlMayBeStale(error: { sqlstate?: string } | undefined): boolean {
  const sqlstate = error?.sqlstate;
  return sqlstate !== undefined && (sqlstate.startsWith('28') || sqlstate === '3D000');
}

/**
 * The hint class a SQLSTATE stands for. A missing table is 42P01 on PostgreSQL and SQLite's
 * "no such table" is SQLITE_ERROR (42000, also every other SQL error), so the CLI's catalog probe
 * (lib/store/probe.ts), not the SQLSTATE, tells the missing-table cases apart on both dialects alike.
 */
export function hintClassOf(sqlstate: string | undefined): HintClass {
  if (sqlstate === undefined) return 'unreachable';
  if (sqlstate.startsWith('28')) return 'credentials';
  if (sqlstate === '3D000') return 'no_database';
  if (sqlstate === '42P01' || sqlstate === '42703') return 'missing_object';
  if (sqlstate === '42501') return 'privilege';
  if (sqlstate === '42P05' || sqlstate === '26000') return 'pooler';
  if (sqlstate === '57014') return 'statement_timeout';
  return classifySqlstate(sqlstate);
}

/** How to fix a database failure with this SQLSTATE, for `caller` on `dialect` (the table is lib/hints.ts). */
export function hintFor(
  sqlstate: string | undefined,
  caller: Caller = 'function',
  dialect: HintDialect = 'postgres',
): string {
  return hint(hintClassOf(sqlstate), caller, dialect);
}

/** The fields every report and log line carries for a failure (ingest, migrate, health). */
export function failureFields(err: unknown): { failure_class: FailureKind; sqlstate?: string; driver_code?: string } {
  if (err instanceof DatabaseError) {
    return {
      failure_class: err.kind,
      ...(err.sqlstate ? { sqlstate: err.sqlstate } : {}),
      ...(err.driverCode ? { driver_code: err.driverCode } : {}),
    };
  }
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== err ? failureFields(cause) : { failure_class: 'system' };
}

/**
 * A deadline that came (R2-5): a system error with no SQLSTATE, hinted for whoever set it
 * (lib/hints.ts), never a fixed "the frames stay on the queue" whatever the caller.
 */
export function outOfTime(detail: string, owner: DeadlineOwner | undefined): DatabaseError {
  const hintClass = deadlineHintClass(owner?.work ?? 'other');
  return new DatabaseError(
    `${detail}: ${hint(hintClass, owner?.caller ?? 'function')}`,
    'system',
    undefined,
    'ETIMEDOUT',
    {
      detail,
      hintClass,
    },
  );
}
