import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { msUntil } from '../deadline.js';
import { SubagentContextError } from '../errors.js';
import { type DeadlineOwner, type HintClass, hint, SQLITE_MISSING_HINT, SQLITE_UNBUILT_HINT } from '../hints.js';
import type { Database, Queryable, Row } from './database.js';
import { SQLITE_AGGREGATES, SQLITE_FUNCTIONS, sqliteDialect } from './dialect/sqlite.js';
import { classifySqlstate, DatabaseError, hintClassOf, outOfTime } from './errors.js';
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

/** better-sqlite3 is not installed, or installed without its native module (R4-11). */
export class SqliteUnavailableError extends SubagentContextError {
  override readonly name = 'SqliteUnavailableError';
}

let driver: typeof BetterSqlite3 | undefined;

/**
 * R4-11: better-sqlite3 is an optional dependency, loaded when a `sqlite:` store is opened, never
 * with the CLI: PostgreSQL commands and --version run without it. It is CommonJS, so a lazy
 * `require` keeps opening synchronous.
 */
function loadDriver(): typeof BetterSqlite3 {
  if (driver) return driver;
  try {
    // a CommonJS bundle (the Lambda functions) has its own `require` and no import.meta
    const load = typeof require === 'function' ? require : createRequire(import.meta.url);
    driver = load('better-sqlite3') as typeof BetterSqlite3;
  } catch (err) {
    if ((err as { code?: string }).code === 'MODULE_NOT_FOUND') throw new SqliteUnavailableError(SQLITE_MISSING_HINT);
    throw err;
  }
  return driver;
}

/** better-sqlite3 is there but its native module is not (installed with --ignore-scripts, or built for another Node). */
function isMissingBinding(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (
    typeof e.message === 'string' &&
    !(typeof e.code === 'string' && e.code.startsWith('SQLITE_')) &&
    /bindings file|better_sqlite3\.node|NODE_MODULE_VERSION/.test(e.message)
  );
}

/**
 * How a read-only open reads the file (R4-5: it leaves no file that was not there, and works on a
 * read-only snapshot), and the words for the note that says so:
 * - `file`: SQLite opens it read-only and creates nothing: a rollback-journal store, or a WAL store
 *   whose -wal is already there (the host has it open, or left it: its pages are read through it);
 * - `tidy`: a WAL store nobody has open, in a folder this user may write, owned by this user:
 *   SQLite needs -wal/-shm beside it while reading; when it closes, one read-write connection that
 *   writes nothing lets SQLite remove them under its own locks (it keeps them if the host opened
 *   the store meanwhile);
 * - `copy`: a WAL store nobody has open that this user may not make files beside (a read-only
 *   folder, a snapshot, or another user's file, where files it made would be this user's): read
 *   from an in-memory copy of the file, so nothing is created. Costs the file's size in memory.
 */
type ReadPlan = { how: 'file' | 'tidy' | 'copy'; note: string };

function readPlan(path: string): ReadPlan {
  const header = Buffer.alloc(20);
  const fd = openSync(path, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  // bytes 18 and 19 of the header: 1 = rollback journal, 2 = WAL (sqlite.org/fileformat.html)
  const wal = read === 20 && (header[18] === 2 || header[19] === 2);
  if (!wal)
    return { how: 'file', note: 'opened read-only (a rollback-journal store: SQLite creates nothing to read it)' };
  if (existsSync(`${path}-wal`))
    return {
      how: 'file',
      note: 'opened read-only, through the -wal and -shm already beside it (the host has the store open, or left them)',
    };
  if (mayMakeFilesBeside(path))
    return {
      how: 'tidy',
      note: 'opened read-only; the -wal and -shm SQLite makes to read a WAL store are removed when it closes (kept only if the host opened the store meanwhile)',
    };
  return {
    how: 'copy',
    note: 'read from an in-memory copy of the file (a WAL store in a folder or file this user may not make files beside, such as a snapshot): nothing was created',
  };
}

function mayMakeFilesBeside(path: string): boolean {
  try {
    accessSync(dirname(path), constants.W_OK);
    accessSync(path, constants.W_OK);
    // files SQLite makes belong to this user: beside another user's store they would lock its owner out
    return process.getuid === undefined || statSync(path).uid === process.getuid();
  } catch {
    return false;
  }
}

/** The file's bytes, checked unchanged while they were read (a checkpoint meanwhile would tear them). */
function copyOf(path: string): Buffer {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = statSync(path, { bigint: true });
    const bytes = readFileSync(path);
    const after = statSync(path, { bigint: true });
    if (before.mtimeNs === after.mtimeNs && before.size === after.size && BigInt(bytes.length) === after.size) {
      // the copy lives in memory, where WAL cannot be used: mark it a rollback-journal database
      bytes[18] = 1;
      bytes[19] = 1;
      return bytes;
    }
  }
  throw new DatabaseError(
    `the SQLite store ${path} kept changing while it was copied to be read: run the command again when the host is idle`,
    'transient',
    '55P03',
    'SQLITE_BUSY',
    { hintClass: 'transient' },
  );
}

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
  const Driver = loadDriver();
  const plan = options.readonly && !isMemory(path) ? readPlan(path) : undefined;
  let db: BetterSqlite3.Database;
  try {
    db =
      plan?.how === 'copy'
        ? new Driver(copyOf(path), { readonly: true })
        : new Driver(path, { readonly: options.readonly === true, fileMustExist: !options.create });
  } catch (err) {
    if (isMissingBinding(err)) throw new SqliteUnavailableError(SQLITE_UNBUILT_HINT, { cause: err });
    throw toDatabaseError(err);
  }
  if (!exists) db.pragma('journal_mode = WAL');
  for (const [name, fn] of Object.entries(SQLITE_FUNCTIONS)) db.function(name, { deterministic: true }, fn);
  // the typings give step one argument; the driver counts the step function's own (value, percent)
  for (const [name, fns] of Object.entries(SQLITE_AGGREGATES))
    db.aggregate(name, { ...fns, deterministic: true } as unknown as BetterSqlite3.AggregateOptions);
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
    readNote: plan?.note,
    close: async () => {
      await lock;
      db.close();
      if (plan?.how === 'tidy') tidy(path, Driver);
    },
  };
}

/**
 * After a `tidy` read: SQLite removes a WAL store's -wal and -shm when its last connection that
 * read the store closes, if that connection may write; a read-only one leaves them. So one
 * read-write connection reads the schema and closes: it writes nothing (the WAL is empty), and
 * SQLite keeps the files when another connection (the host's) has the store open.
 */
function tidy(path: string, Driver: typeof BetterSqlite3): void {
  if (!existsSync(`${path}-wal`) && !existsSync(`${path}-shm`)) return;
  try {
    const rw = new Driver(path, { fileMustExist: true });
    try {
      rw.prepare('SELECT count(*) FROM sqlite_master').get();
    } finally {
      rw.close();
    }
  } catch {
    // the store became unwritable meanwhile: the files stay, as SQLite left them
  }
}

/** The SQLSTATE a SQLite result code stands for; an error without a SQLite code is a bug (XX000). */
export function sqlstateOfSqliteCode(driverCode: string | undefined): string {
  if (!driverCode) return 'XX000';
  const primary = driverCode.split('_').slice(0, 2).join('_');
  return SQLSTATE_OF[driverCode] ?? SQLSTATE_OF[primary] ?? 'XX000';
}

/**
 * The hint for a SQLite failure: SQLite has no server, so its system failures get SQLite's own
 * words (R4-5: a write refused on a read-only file or folder says so, never "the server's log").
 */
function sqliteHintClass(driverCode: string | undefined, sqlstate: string, message: string): HintClass {
  if (driverCode?.startsWith('SQLITE_READONLY') || driverCode?.startsWith('SQLITE_PERM')) return 'sqlite_readonly';
  // SQLITE_ERROR is every SQL error; a missing table or column is the schema's shape, not the disk (issue 51)
  if (driverCode === 'SQLITE_ERROR' && /^no such (table|column)\b/.test(message)) return 'missing_object';
  const cls = hintClassOf(sqlstate);
  return cls === 'system' || cls === 'unreachable' ? 'sqlite_system' : cls;
}

function toDatabaseError(err: unknown): DatabaseError {
  const e = err as { code?: unknown; message?: string };
  const driverCode = typeof e.code === 'string' ? e.code : undefined;
  const sqlstate = sqlstateOfSqliteCode(driverCode);
  const detail = `${e.message ?? String(err)} (${driverCode ?? 'sqlite'}, SQLSTATE ${sqlstate})`;
  const hintClass = sqliteHintClass(driverCode, sqlstate, e.message ?? '');
  return new DatabaseError(
    `${detail}: ${hint(hintClass, 'function', 'sqlite')}`,
    classifySqlstate(sqlstate),
    sqlstate,
    driverCode,
    {
      cause: err,
      detail,
      hintClass,
    },
  );
}
