import { describe, expect, it } from 'vitest';
import {
  classifySqlstate,
  DatabaseError,
  type FailureKind,
  failureFields,
  hintFor,
  isSqlstate,
  sqlstateOf,
} from '../../../lib/db/errors.js';
import { toDatabaseError } from '../../../lib/db/neon.js';
import { sqlstateOfSqliteCode } from '../../../lib/db/sqlite.js';

describe('classifySqlstate: R2-4 failure classes (docs/ingest.md)', () => {
  it.each<[string | undefined, FailureKind, string]>([
    // row errors: this row is refused, park it with its SQLSTATE
    ['22001', 'row', 'string_data_right_truncation'],
    ['22003', 'row', 'numeric_value_out_of_range'],
    ['22021', 'row', 'character_not_in_repertoire (U+0000)'],
    ['22P02', 'row', 'invalid_text_representation'],
    ['23502', 'row', 'not_null_violation'],
    ['23505', 'row', 'unique_violation'],
    ['23514', 'row', 'check_violation'],
    ['54000', 'row', 'program_limit_exceeded (index row too big)'],
    // the deleted session
    ['23503', 'foreign_key', 'foreign_key_violation'],
    // contention: redeliver
    ['40001', 'transient', 'serialization_failure'],
    ['40P01', 'transient', 'deadlock_detected'],
    ['55P03', 'transient', 'lock_not_available'],
    // system: never parked, alarm
    [undefined, 'system', 'no SQLSTATE: the connection failed before the server answered'],
    ['28000', 'system', 'invalid_authorization_specification'],
    ['28P01', 'system', 'invalid_password'],
    ['3D000', 'system', 'invalid_catalog_name (missing database)'],
    ['42P01', 'system', 'undefined_table'],
    ['42703', 'system', 'undefined_column'],
    ['42501', 'system', 'insufficient_privilege'],
    ['42601', 'system', 'syntax_error'],
    ['53000', 'system', 'insufficient_resources'],
    ['53100', 'system', 'disk_full'],
    ['53300', 'system', 'too_many_connections'],
    ['57014', 'system', 'query_canceled (statement timeout)'],
    ['57P01', 'system', 'admin_shutdown'],
    ['57P03', 'system', 'cannot_connect_now'],
    ['58000', 'system', 'system_error'],
    ['58030', 'system', 'io_error'],
    ['XX000', 'system', 'internal_error'],
    ['08000', 'system', 'connection_exception'],
    ['08006', 'system', 'connection_failure'],
    ['08P01', 'system', 'protocol_violation'],
    ['54001', 'system', 'statement_too_complex'],
    ['25006', 'system', 'read_only_sql_transaction'],
  ])('R2-4: %s → %s (%s)', (sqlstate, kind) => {
    expect(classifySqlstate(sqlstate)).toBe(kind);
  });
});

describe('R2-4: codes that are not SQLSTATEs are never read as SQLSTATEs', () => {
  it.each([
    ['23503', true],
    ['40P01', true],
    ['XX000', true],
    ['HV000', true],
    ['P0001', true],
    ['EPIPE', false],
    ['EPERM', false],
    ['EBADF', false],
    ['ECONNRESET', false],
    ['ETIMEDOUT', false],
    ['ENOTFOUND', false],
    ['SQLITE_BUSY', false],
    ['2350', false],
    [23503, false],
    [undefined, false],
  ])('isSqlstate(%j) → %s', (code, expected) => {
    expect(isSqlstate(code)).toBe(expected);
  });

  it.each(['EPIPE', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'ECONNREFUSED', 'EAI_AGAIN'])(
    'R2-4: a socket error %s is a system error with a driver code and no SQLSTATE',
    (code) => {
      const socketError = Object.assign(new Error(`write ${code}`), { code, errno: -32, syscall: 'write' });
      expect(sqlstateOf(socketError)).toBeUndefined();
      const error = toDatabaseError(socketError);
      expect(error).toMatchObject({ kind: 'system', sqlstate: undefined, driverCode: code });
    },
  );

  it('R2-4: a server error keeps its SQLSTATE', () => {
    const serverError = Object.assign(new Error('password authentication failed for user "x"'), {
      code: '28P01',
      severity: 'FATAL',
    });
    expect(toDatabaseError(serverError)).toMatchObject({ kind: 'system', sqlstate: '28P01', driverCode: undefined });
  });
});

describe('sqlstateOfSqliteCode: one classifier serves SQLite too', () => {
  it.each<[string | undefined, string, FailureKind]>([
    ['SQLITE_CONSTRAINT_FOREIGNKEY', '23503', 'foreign_key'],
    ['SQLITE_CONSTRAINT_UNIQUE', '23505', 'row'],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', '23505', 'row'],
    ['SQLITE_CONSTRAINT_NOTNULL', '23502', 'row'],
    ['SQLITE_CONSTRAINT_CHECK', '23514', 'row'],
    ['SQLITE_CONSTRAINT_TRIGGER', '23514', 'row'],
    ['SQLITE_CONSTRAINT_DATATYPE', '23000', 'row'],
    ['SQLITE_TOOBIG', '54000', 'row'],
    ['SQLITE_MISMATCH', '22000', 'row'],
    ['SQLITE_BUSY', '55P03', 'transient'],
    ['SQLITE_BUSY_SNAPSHOT', '40001', 'transient'],
    ['SQLITE_BUSY_TIMEOUT', '55P03', 'transient'],
    ['SQLITE_LOCKED', '55P03', 'transient'],
    ['SQLITE_LOCKED_SHAREDCACHE', '55P03', 'transient'],
    ['SQLITE_ERROR', '42000', 'system'],
    ['SQLITE_READONLY_DBMOVED', '25006', 'system'],
    ['SQLITE_IOERR_WRITE', '58030', 'system'],
    ['SQLITE_CANTOPEN', '58030', 'system'],
    ['SQLITE_CORRUPT', 'XX001', 'system'],
    ['SQLITE_SOMETHING_NEW', 'XX000', 'system'],
    [undefined, 'XX000', 'system'],
  ])('R2-4: %s → SQLSTATE %s → %s', (code, sqlstate, kind) => {
    expect(sqlstateOfSqliteCode(code)).toBe(sqlstate);
    expect(classifySqlstate(sqlstateOfSqliteCode(code))).toBe(kind);
  });
});

describe("hintFor: a function's messages say how to fix in the function's world", () => {
  it.each<[string | undefined, RegExp]>([
    [undefined, /DATABASE_URL SSM parameter.*reachable/],
    ['28P01', /credentials.*rotation/],
    ['3D000', /does not exist; fix the SSM parameter/],
    ['40001', /retried/],
    ['23503', /task session does not exist/],
    ['42P01', /invoke the migrate function.*not the host store/],
    ['42501', /GRANT/],
    ['23505', /will not succeed on retry/],
    // issue 24: the batch upsert is a named prepared statement (docs/ingest.md#one-statement)
    ['42P05', /pooler.*direct \(unpooled\) endpoint/],
    ['26000', /pooler.*direct \(unpooled\) endpoint/],
    // R4-12: the server's statement cap, in the function's world
    ['57014', /function's statement timeout.*raise the function's timeout/],
  ])('%s → %s', (sqlstate, hint) => {
    expect(hintFor(sqlstate)).toMatch(hint);
    expect(hintFor(sqlstate)).not.toMatch(/stay on the queue/);
  });

  it('R4-12: a statement timeout (57014) names --statement-timeout at the CLI, never --database-url', () => {
    expect(hintFor('57014', 'cli')).toMatch(/raise --statement-timeout <seconds>/);
    expect(hintFor('57014', 'cli')).not.toMatch(/--database-url|function/);
  });

  it('the CLI gets its own words for the same class: a command to run, flags, never a function', () => {
    expect(hintFor('42P01', 'cli')).toMatch(/run `subagent-context migrate`/);
    expect(hintFor(undefined, 'cli')).toMatch(/--database-url/);
    expect(hintFor('42P05', 'cli')).toMatch(/--database-url/);
    for (const sqlstate of [undefined, '28P01', '3D000', '42P01', '42501', '42P05', '40001', 'XX000'])
      expect(hintFor(sqlstate, 'cli')).not.toMatch(/function|stay on the queue|invoke/);
  });
});

describe('failureFields: the same class in every report', () => {
  it('reads a DatabaseError, through causes, and defaults to system', () => {
    const error = new DatabaseError('m', 'row', '23505', undefined);
    expect(failureFields(error)).toEqual({ failure_class: 'row', sqlstate: '23505' });
    expect(failureFields(new Error('wrapped', { cause: error }))).toEqual({ failure_class: 'row', sqlstate: '23505' });
    expect(failureFields(new Error('bug'))).toEqual({ failure_class: 'system' });
  });
});

describe('DatabaseError', () => {
  it('carries kind, SQLSTATE, driver code and cause', () => {
    const cause = new Error('boom');
    const error = new DatabaseError('m', 'transient', '40001', 'ECONNRESET', { cause });
    expect(error).toMatchObject({
      name: 'DatabaseError',
      kind: 'transient',
      sqlstate: '40001',
      driverCode: 'ECONNRESET',
      cause,
    });
    expect(error).toBeInstanceOf(Error);
  });
});
