import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { msUntil } from '../deadline.js';
import type { DeadlineOwner } from '../hints.js';
import type { Database, Queryable, Row } from './database.js';
import { SQLITE_FUNCTIONS, sqliteDialect } from './dialect/sqlite.js';
import { classifySqlstate, DatabaseError, hintFor, outOfTime } from './errors.js';
import { type OpenTransaction, runTransaction } from './transaction.js';

/**
 * SQLite result codes → the SQLSTATE they stand for, so one classifier (errors.ts) serves both
 * dialects. Extended codes not listed fall back to their primary code (SQLITE_IOERR_WRITE →
 * SQLITE_IOERR); a primary code not listed is a system error (XX000), never a row error.
 */
const SQLSTATE_OF: Record<string, string> = {
  SQLITE_CONSTRAINT_FOREIGNKEY: '23503',
  SQLITE_CONSTRAINT_UNIQUE: '23505',
  SQLITE_CONSTRAINT_PRIMARYKEY: '23505',
  SQLITE_CONSTRAINT_NOTNULL: '23502',
  SQLITE_CONSTRAINT_CHECK: '23514',
  SQLITE_CONSTRAINT_TRIGGER: '23514', // RAISE(ABORT, …) in a trigger: the row was refused
  SQLITE_CONSTRAINT: '23000',
  SQLITE_TOOBIG: '54000',
  SQLITE_MISMATCH: '22000',
  SQLITE_BUSY: '55P03',
  SQLITE_BUSY_SNAPSHOT: '40001',
  SQLITE_BUSY_TIMEOUT: '55P03',
  SQLITE_LOCKED: '55P03',
  SQLITE_LOCKED_SHAREDCACHE: '55P03',
  SQLITE_ERROR: '42000', // no such table / column, syntax: the schema is not what the code expects
  SQLITE_PERM: '42501',
  SQLITE_AUTH: '42501',
  SQLITE_READONLY: '25006',
  SQLITE_CANTOPEN: '58030',
  SQLITE_IOERR: '58030',
  SQLITE_FULL: '53100',
  SQLITE_NOMEM: '53200',
  SQLITE_CORRUPT: 'XX001',
  SQLITE_NOTADB: 'XX001',
};

/** `$n` placeholders (the shared SQL's) → positional `?` with the parameters reordered to match. */
function translate(sql: string): { text: string; order: number[] } {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { text, order };
}

export interface SqliteOpenOptions {
  /**
   * Open for reading only (health --full, report, export): the host's file is never written, and a
   * store on read-only storage can still be read. Implies the file must exist.
   */
  readonly?: boolean;
  /**
   * Make a new store when the file does not exist (`--create`; tests and `npm start` create theirs
   * explicitly). Without it a path that does not exist is refused: a mistyped path must not
   * silently become a new, empty database.
   */
  create?: boolean;
}

const isMemory = (path: string) => path === ':memory:' || path.startsWith('file::memory:');

/**
 * `sqlite:<path>` (or `sqlite::memory:`) through better-sqlite3, with foreign keys enforced. The
 * host's store is left as it was: its journal mode is never changed (only a store this call
 * creates is put in WAL mode, so its readers and writer do not block each other).
 */
export function openSqlite(path: string, options: SqliteOpenOptions = {}): Database {
  const exists = isMemory(path) || existsSync(path);
  if (!exists && (options.readonly || !options.create)) {
    throw new DatabaseError(
      `the SQLite store ${path} does not exist: check the path in DATABASE_URL / --database-url` +
        (options.readonly ? '' : ', or pass --create to make a new, empty store there'),
      'system',
      '3D000',
      'SQLITE_CANTOPEN',
    );
  }
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(path, { readonly: options.readonly === true, fileMustExist: !options.create });
  } catch (err) {
    throw toDatabaseError(err);
  }
  if (!exists) db.pragma('journal_mode = WAL');
  for (const [name, fn] of Object.entries(SQLITE_FUNCTIONS)) db.function(name, { deterministic: true }, fn);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  const stats = { roundTrips: 0 };
  const cache = new Map<string, { statement: BetterSqlite3.Statement; order: number[] }>();
  // better-sqlite3 is synchronous and this is one connection: a transaction must not let another
  // caller's statement slip in between its awaits, so statements queue behind it.
  let lock: Promise<unknown> = Promise.resolve();

  // R2-5: with a deadline, waiting for another writer's lock ends at the deadline, not after the
  // configured busy timeout; a statement that starts after it fails at once.
  let deadline: number | undefined;
  let owner: DeadlineOwner | undefined;
  let busyTimeoutMs = 0;
  let appliedBusyMs = -1;
  const bound = () => {
    if (deadline === undefined) return;
    const left = msUntil(deadline);
    if (left <= 0) {
      throw outOfTime('no time left before the deadline for this statement', owner);
    }
    const wanted = Math.min(busyTimeoutMs, Math.ceil(left));
    if (wanted !== appliedBusyMs) {
      appliedBusyMs = wanted;
      db.pragma(`busy_timeout = ${wanted}`);
    }
  };

  const run = <T>(sql: string, params: readonly unknown[] = [], finishing = false): T[] => {
    stats.roundTrips += 1;
    if (!finishing) bound(); // COMMIT and ROLLBACK always run: a transaction is never left open
    try {
      let entry = cache.get(sql);
      if (!entry) {
        const { text, order } = translate(sql);
        entry = { statement: db.prepare(text), order };
        cache.set(sql, entry);
      }
      const args = entry.order.map((i) => params[i]);
      if (entry.statement.reader) return entry.statement.all(...args) as T[];
      entry.statement.run(...args);
      return [];
    } catch (err) {
      throw toDatabaseError(err);
    }
  };
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const result = lock.then(fn);
    lock = result.catch(() => undefined);
    return result;
  };

  return {
    dialect: sqliteDialect,
    stats,
    query: <T = Row>(sql: string, params?: readonly unknown[]) => exclusive(async () => run<T>(sql, params)),
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return exclusive(async () => {
        run('BEGIN IMMEDIATE');
        const open: OpenTransaction = {
          tx: { dialect: sqliteDialect, query: async (sql, params) => run(sql, params) },
          commit: async () => void run('COMMIT', [], true),
          rollback: async () => void (db.inTransaction && run('ROLLBACK', [], true)),
        };
        return runTransaction(open, fn);
      });
    },
    // In-process: a statement costs no round trip to save, so the plain transaction.
    batch(statements) {
      return this.transaction(async (tx) => {
        for (const { sql, params } of statements) await tx.query(sql, params);
      });
    },
    setDeadline(next: number | undefined, by?: DeadlineOwner) {
      owner = by;
      if (next !== undefined && deadline === undefined)
        busyTimeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
      if (next === undefined && deadline !== undefined && appliedBusyMs !== -1)
        db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      deadline = next;
      appliedBusyMs = -1;
    },
    close: async () => {
      await lock;
      db.close();
    },
  };
}

/** The SQLSTATE a SQLite result code stands for; an error without a SQLite code is a bug (XX000). */
export function sqlstateOfSqliteCode(driverCode: string | undefined): string {
  if (!driverCode) return 'XX000';
  const primary = driverCode.split('_').slice(0, 2).join('_');
  return SQLSTATE_OF[driverCode] ?? SQLSTATE_OF[primary] ?? 'XX000';
}

function toDatabaseError(err: unknown): DatabaseError {
  const e = err as { code?: unknown; message?: string };
  const driverCode = typeof e.code === 'string' ? e.code : undefined;
  const sqlstate = sqlstateOfSqliteCode(driverCode);
  const detail = `${e.message ?? String(err)} (${driverCode ?? 'sqlite'}, SQLSTATE ${sqlstate})`;
  return new DatabaseError(
    `${detail}: ${hintFor(sqlstate, 'function', 'sqlite')}`,
    classifySqlstate(sqlstate),
    sqlstate,
    driverCode,
    {
      cause: err,
      detail,
    },
  );
}
