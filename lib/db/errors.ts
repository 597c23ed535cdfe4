/**
 * A database failure with the context an operator needs. `transient` is decided by SQLSTATE or by
 * the absence of one (the connection failed before the server answered), never by message text.
 */
export type FailureKind = 'transient' | 'foreign_key' | 'permanent';

export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';
  constructor(
    message: string,
    readonly kind: FailureKind,
    /** SQLSTATE from PostgreSQL, or the equivalent of a SQLite result code */
    readonly sqlstate: string | undefined,
    /** the driver's own code (e.g. SQLITE_BUSY, ECONNRESET) */
    readonly driverCode: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** SQLSTATE classes and codes worth retrying: the same statement can succeed later. */
const TRANSIENT_SQLSTATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '53000', // insufficient_resources
  '53300', // too_many_connections
  '55P03', // lock_not_available
  '57014', // query_canceled (statement timeout)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '58000', // system_error
]);

export function classifySqlstate(sqlstate: string | undefined): FailureKind {
  if (sqlstate === undefined) return 'transient';
  if (sqlstate === '23503') return 'foreign_key';
  if (sqlstate.startsWith('08') || TRANSIENT_SQLSTATES.has(sqlstate)) return 'transient';
  return 'permanent';
}

export function isSqlstate(code: unknown): code is string {
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** How to fix it, for the common cases an operator meets. */
export function hintFor(sqlstate: string | undefined): string {
  switch (classifySqlstate(sqlstate)) {
    case 'transient':
      return sqlstate === undefined
        ? 'the connection failed before the server answered; check DATABASE_URL and that the database is reachable — the write will be retried'
        : 'a transient server condition; the write will be retried';
    case 'foreign_key':
      return 'the referenced task session does not exist (deleted, or never created by the host)';
    case 'permanent':
      return sqlstate === '42P01'
        ? 'a table is missing; run the migrate function first'
        : 'the statement was rejected; it will not succeed on retry';
  }
}
