import { describe, expect, it } from 'vitest';
import { DatabaseError, classifySqlstate, hintFor, isSqlstate, type FailureKind } from '../../../lib/db/errors.js';
import { sqlstateOfSqliteCode } from '../../../lib/db/sqlite.js';

describe('classifySqlstate: retry only what can succeed later (docs/ingest.md)', () => {
  it.each<[string | undefined, FailureKind, string]>([
    [undefined, 'transient', 'no SQLSTATE: the connection failed before the server answered'],
    ['08000', 'transient', 'connection_exception'],
    ['08003', 'transient', 'connection_does_not_exist'],
    ['08006', 'transient', 'connection_failure'],
    ['08001', 'transient', 'sqlclient_unable_to_establish_sqlconnection'],
    ['08P01', 'transient', 'protocol_violation (class 08)'],
    ['40001', 'transient', 'serialization_failure'],
    ['40P01', 'transient', 'deadlock_detected'],
    ['53000', 'transient', 'insufficient_resources'],
    ['53300', 'transient', 'too_many_connections'],
    ['55P03', 'transient', 'lock_not_available'],
    ['57014', 'transient', 'query_canceled (statement timeout)'],
    ['57P01', 'transient', 'admin_shutdown'],
    ['57P02', 'transient', 'crash_shutdown'],
    ['57P03', 'transient', 'cannot_connect_now'],
    ['58000', 'transient', 'system_error'],
    ['23503', 'foreign_key', 'foreign_key_violation'],
    ['23505', 'permanent', 'unique_violation'],
    ['23502', 'permanent', 'not_null_violation'],
    ['23514', 'permanent', 'check_violation'],
    ['22P02', 'permanent', 'invalid_text_representation'],
    ['22003', 'permanent', 'numeric_value_out_of_range'],
    ['42P01', 'permanent', 'undefined_table'],
    ['42601', 'permanent', 'syntax_error'],
    ['42501', 'permanent', 'insufficient_privilege'],
    ['28P01', 'permanent', 'invalid_password'],
    ['XX000', 'permanent', 'internal_error'],
    ['HV000', 'permanent', 'fdw_error (an unmapped SQLite code)'],
  ])('%s → %s (%s)', (sqlstate, kind) => {
    expect(classifySqlstate(sqlstate)).toBe(kind);
  });
});

describe('sqlstateOfSqliteCode: one classifier serves SQLite too', () => {
  it.each<[string | undefined, string, FailureKind]>([
    ['SQLITE_CONSTRAINT_FOREIGNKEY', '23503', 'foreign_key'],
    ['SQLITE_CONSTRAINT_UNIQUE', '23505', 'permanent'],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', '23505', 'permanent'],
    ['SQLITE_CONSTRAINT_NOTNULL', '23502', 'permanent'],
    ['SQLITE_CONSTRAINT_CHECK', '23514', 'permanent'],
    ['SQLITE_BUSY', '55P03', 'transient'],
    ['SQLITE_BUSY_SNAPSHOT', '40001', 'transient'],
    ['SQLITE_BUSY_TIMEOUT', '55P03', 'transient'],
    ['SQLITE_LOCKED', '55P03', 'transient'],
    ['SQLITE_LOCKED_SHAREDCACHE', '55P03', 'transient'],
    ['SQLITE_ERROR', 'HV000', 'permanent'],
    ['SQLITE_MISMATCH', 'HV000', 'permanent'],
    [undefined, 'XX000', 'permanent'],
  ])('%s → SQLSTATE %s → %s', (code, sqlstate, kind) => {
    expect(sqlstateOfSqliteCode(code)).toBe(sqlstate);
    expect(classifySqlstate(sqlstateOfSqliteCode(code))).toBe(kind);
  });
});

describe('isSqlstate', () => {
  it.each([
    ['23503', true],
    ['40P01', true],
    ['ECONNRESET', false],
    ['SQLITE_BUSY', false],
    ['2350', false],
    [23503, false],
    [undefined, false],
  ])('%j → %s', (code, expected) => {
    expect(isSqlstate(code)).toBe(expected);
  });
});

describe('hintFor: messages say how to fix', () => {
  it.each<[string | undefined, RegExp]>([
    [undefined, /DATABASE_URL.*retried/],
    ['40001', /retried/],
    ['23503', /task session does not exist/],
    ['42P01', /run the migrate function/],
    ['23505', /will not succeed on retry/],
  ])('%s → %s', (sqlstate, hint) => {
    expect(hintFor(sqlstate)).toMatch(hint);
  });
});

describe('DatabaseError', () => {
  it('carries kind, SQLSTATE, driver code and cause', () => {
    const cause = new Error('boom');
    const error = new DatabaseError('m', 'transient', '40001', 'ECONNRESET', { cause });
    expect(error).toMatchObject({ name: 'DatabaseError', kind: 'transient', sqlstate: '40001', driverCode: 'ECONNRESET', cause });
    expect(error).toBeInstanceOf(Error);
  });
});
