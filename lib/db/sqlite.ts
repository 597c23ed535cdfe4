import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { msUntil } from '../deadline.js';
import { SubagentContextError } from '../errors.js';
import { type DeadlineOwner, type HintClass, hint, SQLITE_MISSING_HINT, SQLITE_UNBUILT_HINT } from '../hints.js';
import type { Database, Queryable, Row } from './database.js';
import { sqliteDialect } from './dialect/sqlite.js';
import { classifySqlstate, DatabaseError, hintClassOf, outOfTime } from './errors.js';
import { registerFunctions, statementRunner } from './sqlite-connection.js';
import { READERS_GONE, type SqliteReaders, startReaders } from './sqlite-readers.js';
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
  /**
   * Issue 59: with `readonly`, this many reader threads (sqlite-readers.ts) answer `query`, side
   * by side, each on its own read-only connection (`connections`); 0 or 1: the one connection.
   * A store in memory has none (no other connection can see it).
   */
  readers?: number;
}

/** Each connection's wait for another's lock (a deadline shortens it: busyNow). */
const BUSY_TIMEOUT_MS = 5000;

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
 *   whose -wal and -shm are both already there (the host has it open, or left them);
 * - `tidy`: a WAL store nobody has open, in a folder this user may write, owned by this user:
 *   SQLite needs -wal/-shm beside it while reading; when it closes, one read-write connection that
 *   writes nothing lets SQLite remove them under its own locks (it keeps them if the host opened
 *   the store meanwhile);
 * - `copy`: no way reads it in place without making a file beside it: a WAL store this user may
 *   not make files beside (a read-only folder, a snapshot, another user's file), or a -wal without
 *   its -shm (a backup's shape: SQLite makes the -shm to read the -wal, and a read-only
 *   connection cannot read it without one). Read from a copy in a private temporary folder, made
 *   in chunks (R4-12: memory stays bounded whatever the file's size; holes stay holes), removed
 *   when the store closes or the process exits.
 *
 * Why not SQLite's `immutable=1` / `mode=ro` URIs, which read such a file in place: better-sqlite3
 * 12 builds SQLite with SQLITE_USE_URI=0 and opens without SQLITE_OPEN_URI, so a `file:` name is
 * a plain path (ATTACH reads the same flags), and its only other source is an in-memory Buffer.
 * A read-only connection in exclusive locking mode (the wal-index in heap, no -shm) needs a write
 * lock the read-only descriptor cannot take (SQLITE_IOERR_LOCK).
 */
type ReadPlan = { how: 'file' | 'tidy' | 'copy'; note: string; wal?: boolean };

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
  const hasWal = existsSync(`${path}-wal`);
  if (hasWal && existsSync(`${path}-shm`))
    return {
      how: 'file',
      note: 'opened read-only, through the -wal and -shm already beside it (the host has the store open, or left them)',
    };
  if (hasWal)
    return {
      how: 'copy',
      wal: true,
      note: `read from a copy of the file and its -wal in a temporary folder under ${tmpdir()}, removed when the command ends: a -wal without its -shm (a backup's shape) cannot be read in place without SQLite making a -shm beside it; nothing was created beside the store`,
    };
  if (mayMakeFilesBeside(path))
    return {
      how: 'tidy',
      note: 'opened read-only; the -wal and -shm SQLite makes to read a WAL store are removed when it closes (kept only if the host opened the store meanwhile)',
    };
  return {
    how: 'copy',
    note: `read from a copy of the file in a temporary folder under ${tmpdir()}, removed when the command ends: a WAL store in a folder or file this user may not make files beside (such as a snapshot) cannot be read in place; nothing was created beside the store`,
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

const CHUNK = 1 << 20;

/**
 * `from` → `to` in 1 MiB chunks (R4-12: the memory is one chunk, whatever the size; a Buffer of
 * the whole file failed past 2 GiB with ERR_FS_FILE_TOO_LARGE); a chunk of zeros is skipped, so a
 * sparse file's holes stay holes in the copy.
 */
function copyInChunks(from: string, to: string): void {
  const chunk = Buffer.alloc(CHUNK);
  const zeros = Buffer.alloc(CHUNK);
  const input = openSync(from, 'r');
  try {
    const output = openSync(to, 'wx', 0o600);
    try {
      let at = 0;
      for (;;) {
        const n = readSync(input, chunk, 0, CHUNK, at);
        if (n === 0) break;
        const part = chunk.subarray(0, n);
        if (!part.equals(zeros.subarray(0, n))) writeSync(output, part, 0, n, at);
        at += n;
      }
      ftruncateSync(output, at);
    } finally {
      closeSync(output);
    }
  } finally {
    closeSync(input);
  }
}

const stamp = (file: string) => {
  if (!existsSync(file)) return 'none';
  const s = statSync(file, { bigint: true });
  return `${s.mtimeNs}:${s.size}`;
};

/** Temporary folders of copies not yet removed: the process's exit removes what close() did not. */
const copies = new Set<string>();
let exitHookSet = false;
function removeCopy(folder: string): void {
  copies.delete(folder);
  rmSync(folder, { recursive: true, force: true });
}

/**
 * Signals that end a process without its 'exit' event (issue 57 #9): a SIGTERM (a supervisor, a
 * timeout) or a SIGHUP (a closed terminal) while a store is read from its copy left the whole copy
 * in TMPDIR. Each removes the copies, then ends the process as the signal would have (the listener
 * is gone, so the default action runs: a shell still sees 128 + the signal). Only SIGKILL, which
 * no process can catch, leaves a copy behind. SIGINT is the CLI's own (lib/cli/interrupt.ts): its
 * commands stop at a boundary and exit, which removes the copies through 'exit'.
 */
const ENDING_SIGNALS = ['SIGTERM', 'SIGHUP'] as const;

function removeCopiesOnExit(): void {
  process.once('exit', () => {
    for (const folder of copies) removeCopy(folder);
  });
  for (const signal of ENDING_SIGNALS) {
    const listener = () => {
      for (const folder of copies) removeCopy(folder);
      for (const other of ENDING_SIGNALS) process.removeListener(other, listeners.get(other)!);
      // another listener of this signal (an embedding program's) decides itself; else its default
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    listeners.set(signal, listener);
    process.once(signal, listener);
  }
}
const listeners = new Map<string, () => void>();

/** A copy's folder names the process that made it: `subagent-context-read-<pid>-XXXXXX`. */
const COPY_PREFIX = 'subagent-context-read-';

/**
 * Copies a SIGKILLed command left (issue 57, owed from round 2): its folder names its process; one
 * of this user's whose process is gone is removed at the next copy. Another user's, or a live
 * process's, is never touched.
 */
function removeStaleCopies(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^subagent-context-read-(\d+)-[^/]+$/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    const folder = join(tmpdir(), name);
    try {
      if (process.getuid !== undefined && statSync(folder).uid !== process.getuid()) continue;
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // gone meanwhile, or not ours to remove: left as it is
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The store (and its -wal when `wal`) copied into a private temporary folder (0700), checked
 * unchanged while copied (a checkpoint meanwhile would tear them); returns the copy's path. Without
 * a -wal the copy is marked a rollback-journal store, so SQLite reads it making nothing.
 */
function copyOf(path: string, wal: boolean): { folder: string; file: string } {
  if (!exitHookSet) {
    exitHookSet = true;
    removeCopiesOnExit();
    removeStaleCopies();
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const folder = mkdtempSync(join(tmpdir(), `${COPY_PREFIX}${process.pid}-`));
    copies.add(folder);
    const file = join(folder, 'store.db');
    try {
      const before = [stamp(path), stamp(`${path}-wal`)];
      copyInChunks(path, file);
      if (wal) copyInChunks(`${path}-wal`, `${file}-wal`);
      const after = [stamp(path), stamp(`${path}-wal`)];
      if (before[0] === after[0] && before[1] === after[1]) {
        if (!wal) {
          const fd = openSync(file, 'r+');
          try {
            writeSync(fd, Buffer.from([1, 1]), 0, 2, 18);
          } finally {
            closeSync(fd);
          }
        }
        return { folder, file };
      }
    } catch (err) {
      removeCopy(folder);
      throw new DatabaseError(
        `the SQLite store ${path} could not be copied to be read (${(err as Error).message}): free space under ${tmpdir()}, or set TMPDIR to a folder with room for the store`,
        'system',
        '58030',
        'SQLITE_CANTOPEN',
        { cause: err, hintClass: 'sqlite_system' },
      );
    }
    removeCopy(folder);
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
 * A write command on a file this user may not write: SQLite would open it read-only without a word,
 * make -wal/-shm beside it (owned by this user) to read a WAL store, and only then refuse the write,
 * leaving them for the next command to trip on. Refused before SQLite touches anything.
 */
function refuseUnwritable(path: string): void {
  try {
    accessSync(path, constants.W_OK);
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'EACCES';
    const hintClass = readonlyHintClass(code);
    // `detail` without the hint: the CLI adds its own hint to it (DatabaseError.detail), once
    const detail = `the SQLite store ${path} is ${hintClass === 'sqlite_readonly_fs' ? 'on a read-only file system' : 'read-only for this user'} (${code}), and this command writes`;
    throw new DatabaseError(`${detail}: ${hint(hintClass, 'cli', 'sqlite')}`, 'system', '25006', 'SQLITE_READONLY', {
      cause: err,
      detail,
      hintClass,
    });
  }
}

/**
 * Issue 58 #15: why a store may not be written, by the error code that said so: EROFS is a
 * read-only mount (no user may write there), anything else this user's permissions.
 */
export function readonlyHintClass(code: string | undefined): 'sqlite_readonly' | 'sqlite_readonly_fs' {
  return code === 'EROFS' ? 'sqlite_readonly_fs' : 'sqlite_readonly';
}

/** The code of a write probe of `path`'s folder (EROFS on a read-only mount), or undefined when it may be written. */
function folderWriteProblem(path: string): string | undefined {
  if (isMemory(path)) return undefined;
  try {
    accessSync(dirname(path), constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
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
  if (!options.readonly && exists && !isMemory(path)) refuseUnwritable(path);
  const copy = plan?.how === 'copy' ? copyOf(path, plan.wal === true) : undefined;
  let db: BetterSqlite3.Database;
  try {
    db = copy
      ? new Driver(copy.file, { readonly: true, fileMustExist: true })
      : new Driver(path, { readonly: options.readonly === true, fileMustExist: !options.create });
  } catch (err) {
    if (copy) removeCopy(copy.folder);
    if (isMissingBinding(err)) throw new SqliteUnavailableError(SQLITE_UNBUILT_HINT, { cause: err });
    throw toDatabaseError(err, path);
  }
  if (!exists) db.pragma('journal_mode = WAL');
  registerFunctions(db);
  // more threads than cores would only take turns
  const readerCount =
    options.readonly && !isMemory(path) ? Math.min(Math.floor(options.readers ?? 0), availableParallelism()) : 0;
  let readers: SqliteReaders | undefined;
  try {
    readers = readerCount > 1 ? startReaders(copy?.file ?? path, readerCount) : undefined;
  } catch (err) {
    db.close();
    if (copy) removeCopy(copy.folder);
    throw toDatabaseError(err, path);
  }
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('foreign_keys = ON');
  const stats = { roundTrips: 0 };
  const execute = statementRunner(db);
  // better-sqlite3 is synchronous and this is one connection: a transaction must not let another
  // caller's statement slip in between its awaits, so statements queue behind it.
  let lock: Promise<unknown> = Promise.resolve();

  // R2-5: with a deadline, waiting for another writer's lock ends at the deadline, not after the
  // configured busy timeout; a statement that starts after it fails at once.
  let deadline: number | undefined;
  let owner: DeadlineOwner | undefined;
  let busyTimeoutMs = 0;
  let appliedBusyMs = -1;
  /** The busy timeout a statement may use now (R2-5: within the deadline); throws past it. */
  const busyNow = (): number | undefined => {
    if (deadline === undefined) return undefined;
    const left = msUntil(deadline);
    if (left <= 0) {
      throw outOfTime('no time left before the deadline for this statement', owner);
    }
    return Math.min(busyTimeoutMs, Math.ceil(left));
  };
  const bound = () => {
    const wanted = busyNow();
    if (wanted !== undefined && wanted !== appliedBusyMs) {
      appliedBusyMs = wanted;
      db.pragma(`busy_timeout = ${wanted}`);
    }
  };
  // issue 59: a read on a reader thread, its errors classified as the main connection's are
  const read = async <T>(pool: SqliteReaders, sql: string, params: readonly unknown[] = []): Promise<T[]> => {
    stats.roundTrips += 1;
    const busy = busyNow() ?? BUSY_TIMEOUT_MS;
    try {
      return await pool.query<T>(sql, params, busy);
    } catch (err) {
      // never sent: no thread is left to take it (sqlite-readers.ts), so this connection does
      if ((err as { code?: unknown }).code === READERS_GONE) {
        stats.roundTrips -= 1; // counted again where it is sent
        return exclusive(async () => run<T>(sql, params));
      }
      throw toDatabaseError(err, path);
    }
  };

  const run = <T>(sql: string, params: readonly unknown[] = [], finishing = false): T[] => {
    stats.roundTrips += 1;
    if (!finishing) bound(); // COMMIT and ROLLBACK always run: a transaction is never left open
    try {
      return execute(sql, params) as T[];
    } catch (err) {
      throw toDatabaseError(err, path);
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
    ...(readers === undefined ? {} : { connections: readers.size }),
    query: <T = Row>(sql: string, params?: readonly unknown[]) =>
      readers === undefined ? exclusive(async () => run<T>(sql, params)) : read<T>(readers, sql, params),
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
      await readers?.close();
      db.close();
      if (plan?.how === 'tidy') tidy(path, Driver);
      if (copy) removeCopy(copy.folder);
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
function sqliteHintClass(
  driverCode: string | undefined,
  sqlstate: string,
  message: string,
  path: string | undefined,
): HintClass {
  // issue 58 #15: SQLITE_READONLY on a read-only mount is no user's permission: probe the folder to tell
  if (driverCode?.startsWith('SQLITE_READONLY') || driverCode?.startsWith('SQLITE_PERM'))
    return readonlyHintClass(path === undefined ? undefined : folderWriteProblem(path));
  // SQLITE_ERROR is every SQL error; a missing table or column is the schema's shape, not the disk (issue 51)
  if (driverCode === 'SQLITE_ERROR' && /^no such (table|column)\b/.test(message)) return 'missing_object';
  const cls = hintClassOf(sqlstate);
  return cls === 'system' || cls === 'unreachable' ? 'sqlite_system' : cls;
}

/** `path`: the store's, so a write refused on a read-only mount says so (issue 58 #15). */
function toDatabaseError(err: unknown, path?: string): DatabaseError {
  const e = err as { code?: unknown; message?: string };
  const driverCode = typeof e.code === 'string' ? e.code : undefined;
  const sqlstate = sqlstateOfSqliteCode(driverCode);
  const detail = `${e.message ?? String(err)} (${driverCode ?? 'sqlite'}, SQLSTATE ${sqlstate})`;
  const hintClass = sqliteHintClass(driverCode, sqlstate, e.message ?? '', path);
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
