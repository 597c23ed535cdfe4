/**
 * Who meets the failure, so the hint speaks of their world (issue 25): a person at the CLI runs a
 * command; a deployed function's operator invokes a function or changes a parameter.
 */
export type Caller = 'cli' | 'function';

/**
 * What the caller was doing when its deadline came (lib/db/database.ts `setDeadline`): frames
 * that stay on a queue (ingest), or a command that runs again from its last commit (the others).
 */
export type Work = 'ingest' | 'other';

/**
 * The database's kind, so a hint speaks of what is there: SQLite runs in this process and has no
 * server, no log of its own and no `createdb` (issues 34, 36).
 */
export type HintDialect = 'postgres' | 'sqlite';

/** Who set a database deadline, so running out of it is worded for their world. */
export interface DeadlineOwner {
  caller: Caller;
  work: Work;
}

/**
 * What went wrong, as far as the fix is concerned. The database classes come from the SQLSTATE
 * (`hintClassOf` in lib/db/errors.ts, the layer that knows SQLSTATEs); `not_host_database` and `not_migrated` come from looking at the catalog before a
 * command runs (lib/store/probe.ts), which says which table is missing, as a SQLSTATE cannot.
 */
export type HintClass =
  | 'unreachable'
  | 'credentials'
  | 'no_database'
  | 'missing_object'
  | 'not_host_database'
  | 'host_shape'
  | 'not_migrated'
  | 'privilege'
  | 'pooler'
  | 'transient'
  | 'foreign_key'
  | 'row'
  | 'system'
  | 'deadline_ingest'
  | 'deadline'
  | 'statement_timeout'
  | 'pool_wait'
  | 'sqlite_readonly'
  | 'sqlite_readonly_fs'
  | 'sqlite_system';

/*
 * A table of words with no imports: the database layer may use it (test/architecture.test.ts) as it
 * uses lib/errors.ts, without learning anything of the domain.
 */

/** The one table of hints: each class, for each caller (docs: README "Reading the output"). */
const HINTS: Record<HintClass, Record<Caller, string>> = {
  unreachable: {
    cli: 'the connection failed before the server answered; check --database-url (or DATABASE_URL) and that the database server is running and reachable',
    function:
      'the connection failed before the server answered; check the DATABASE_URL SSM parameter and that the database is reachable from the function',
  },
  credentials: {
    cli: 'the database rejected the user or password; fix them in --database-url (or DATABASE_URL)',
    function: 'the database rejected the credentials; update the DATABASE_URL SecureString in SSM (rotation?)',
  },
  no_database: {
    cli: 'the database named in the URL does not exist; create it first (e.g. `createdb <name>`) or fix --database-url',
    function: 'the database named in DATABASE_URL does not exist; fix the SSM parameter',
  },
  missing_object: {
    cli: 'a table or column is missing: for task_session_subagents or kandev_meta run `subagent-context migrate`; for task_sessions or task_session_messages --database-url names a database that is not the host store',
    function:
      'a table or column is missing: for task_session_subagents or kandev_meta invoke the migrate function; for task_sessions or task_session_messages DATABASE_URL names a database that is not the host store',
  },
  not_host_database: {
    cli: "this is not the host's store: point --database-url at the database the orchestrator writes task_sessions and task_session_messages to (a demo store: `npm start -- --sqlite <path>`)",
    function:
      "DATABASE_URL names a database without the host's task_sessions and task_session_messages tables; point the SSM parameter at the host's database",
  },
  // issue 51: the host's tables are there but lack a column every command reads (another version, another product)
  host_shape: {
    cli: "nothing was written: point --database-url at the host's own database, or bring its schema to the host's (the columns above are what this tool reads)",
    function:
      "nothing was written: DATABASE_URL names a database whose host tables lack columns this service reads; point the SSM parameter at the host's database",
  },
  not_migrated: {
    cli: 'this store was never migrated: run `subagent-context migrate` with the same --database-url first',
    function: 'this store was never migrated: invoke the migrate function first (README "Deploying")',
  },
  privilege: {
    cli: "the database user lacks a privilege on the table; GRANT it (README 'Deploying') or use a user that has it",
    function: "the function's database user lacks a privilege on the table; GRANT it (README 'Deploying')",
  },
  // 42P05 / 26000 on the batch upsert, a named prepared statement (docs/ingest.md#one-statement).
  pooler: {
    cli: 'a prepared statement was missing or already existed on the connection: a pooler in transaction mode that does not track prepared statements sits in between; use the direct (unpooled) connection string in --database-url',
    function:
      'a prepared statement was missing or already existed on the connection: a pooler in transaction mode that does not track prepared statements (PgBouncer before 1.21, or max_prepared_statements = 0) sits in between; point the DATABASE_URL SSM parameter at the direct (unpooled) endpoint',
  },
  transient: {
    cli: 'a transient server condition (contention); run the command again',
    function: 'a transient server condition; the write will be retried',
  },
  foreign_key: {
    cli: 'the referenced task session does not exist (deleted, or never created by the host)',
    function: 'the referenced task session does not exist (deleted, or never created by the host)',
  },
  row: {
    cli: 'the database rejected this row; it will not succeed on retry',
    function: 'the database rejected this row; it will not succeed on retry',
  },
  system: {
    cli: "the database or its schema is not in a usable state; see the server's log, fix it, then run the command again",
    function: "the database or its schema is not in a usable state; see the server's log and fix it",
  },
  // The deadline (R2-5): only a deployed function sets one (its invocation's remaining time).
  deadline_ingest: {
    cli: 'the frames not written stay on the local queue and are delivered again',
    function: 'the frames stay on the queue and are delivered again',
  },
  deadline: {
    cli: 'what was not committed is rolled back; run the command again',
    function: 'what was not committed is rolled back; invoke the function again, and raise its timeout if this repeats',
  },
  // R4-12: 57014, the server's statement cap (or a cancel); and a statement that found no free pooled connection.
  statement_timeout: {
    cli: "a statement ran past the server's statement timeout (or was cancelled); raise --statement-timeout <seconds>, or narrow the command (report: --since/--until, --task)",
    function:
      "a statement ran past the function's statement timeout (or was cancelled); raise the function's timeout, or run the work from the CLI with --statement-timeout",
  },
  pool_wait: {
    cli: 'a statement waited for a free pooled connection and got none (the server answered; nothing is wrong with the URL); run the command again',
    function:
      'a statement waited for a free pooled connection and got none (the database answered); invoke the function again',
  },
  // R4-5: SQLite runs in this process; it has no server and no server's log.
  sqlite_readonly: {
    cli: 'SQLite could not write: the store, or the folder it is in (SQLite writes its -journal, -wal and -shm files beside the store), is read-only for this user; run the command as a user who may write both, or on a writable copy (`sqlite3 host.db ".backup copy.db"`); report and health --full only read',
    function: 'SQLite could not write: the store or its folder is read-only for the function',
  },
  // issue 58 #15: EROFS, a read-only mount: no user may write there, so no user to run it as
  sqlite_readonly_fs: {
    cli: 'the file system the SQLite store is on is mounted read-only, so no user may write the store or the -journal, -wal and -shm files SQLite writes beside it: copy the store to a writable place (`sqlite3 host.db ".backup /tmp/host-copy.db"`) and run the command on the copy, or remount the file system read-write; report and health --full only read, and work on it as it is',
    function:
      'SQLite could not write: the store is on a file system mounted read-only; remount it read-write or move the store to a writable one',
  },
  sqlite_system: {
    cli: 'SQLite could not use the store; check the path in --database-url, that the file is a SQLite database, the disk (full? readable?) and the permissions of the file and its folder',
    function: 'SQLite could not use the store; check the file, its folder and the disk',
  },
};

/**
 * Where SQLite's fix differs from PostgreSQL's (the file, its folder, its lock; never a server):
 * the classes not listed read the same on both.
 */
const SQLITE_HINTS: Partial<Record<HintClass, Record<Caller, string>>> = {
  unreachable: {
    cli: 'SQLite could not open the file; check the path in --database-url (sqlite:<path>) and that the file and its folder may be read',
    function: 'SQLite could not open the file named in DATABASE_URL; check the path and its permissions',
  },
  no_database: {
    cli: 'a SQLite store is a file: fix the path in --database-url (sqlite:<path>); `npm start -- --sqlite <path>` makes a demo store',
    function: 'the SQLite file named in DATABASE_URL does not exist; fix the path',
  },
  privilege: {
    cli: 'SQLite was refused the file (its permissions, or a read-only file or folder); fix them, or run as the user that owns the store',
    function: 'SQLite was refused the file named in DATABASE_URL (its permissions, or a read-only file or folder)',
  },
  transient: {
    cli: 'another connection holds the SQLite store locked (the host writing, or another command); run the command again',
    function: 'another connection holds the SQLite store locked; the write will be retried',
  },
  system: {
    cli: "the SQLite file or its schema is not in a usable state (the disk, the file's permissions, or corruption); check it with `sqlite3 <path> 'PRAGMA integrity_check'`, fix it, then run the command again",
    function:
      "the SQLite file or its schema is not in a usable state (the disk, the file's permissions, or corruption); check it with `sqlite3 <path> 'PRAGMA integrity_check'`",
  },
  pool_wait: {
    cli: 'a statement waited for the SQLite store and got no turn (another command holds it); run the command again',
    function: 'a statement waited for the SQLite store and got no turn; invoke the function again',
  },
  statement_timeout: {
    cli: 'SQLite has no statement timeout; the statement was interrupted: run the command again',
    function: 'SQLite has no statement timeout; the statement was interrupted and runs again on the next invocation',
  },
};

/** Every class of the table, for tests that must hold for each (e.g. no SQLite hint names a server). */
export const HINT_CLASSES = Object.keys(HINTS) as readonly HintClass[];

/** The hint class for running out of time while doing `work`. */
export function deadlineHintClass(work: Work): HintClass {
  return work === 'ingest' ? 'deadline_ingest' : 'deadline';
}

export function hint(cls: HintClass, caller: Caller, dialect: HintDialect = 'postgres'): string {
  return (dialect === 'sqlite' ? SQLITE_HINTS[cls]?.[caller] : undefined) ?? HINTS[cls][caller];
}

/*
 * R4-11: the CLI's optional parts, when a command needs one that is not installed. The commands
 * and versions are the README's ("Prerequisites"); test/package/install.test.ts runs the CLI
 * without them. `-g` where subagent-context was installed with -g.
 */

/** `sqlite:` without better-sqlite3 (`--omit=optional`, or its native build failed and npm removed it). */
export const SQLITE_MISSING_HINT =
  'SQLite support is not installed (the optional dependency better-sqlite3): run `npm install better-sqlite3@12.11.1 --allow-scripts=better-sqlite3` where subagent-context is installed (with the same --prefix, or -g); it compiles a native module when no prebuilt binary fits this platform, which needs python3, make and g++ (README "Prerequisites"). PostgreSQL URLs work without it (and the deployed functions only reach PostgreSQL)';

/** better-sqlite3 is there without its native module (installed with --ignore-scripts, or built for another Node). */
export const SQLITE_UNBUILT_HINT =
  'SQLite support is installed without its native module (better-sqlite3 was installed with --ignore-scripts, or built for another Node version): run `npm rebuild better-sqlite3` in the folder that holds its node_modules (`npm root -g` for a global install); it needs python3, make and g++ when no prebuilt binary fits (README "Prerequisites"). PostgreSQL URLs work without it';

/** `ingest` without fauxqs (an optional peer: the CLI's local SQS emulator). */
export const FAUXQS_MISSING_HINT =
  'ingest runs the frames through a local SQS emulator, fauxqs, which is not installed: run `npm install fauxqs@1.9.2` where subagent-context is installed (add -g for a global install; it needs Node 22 or later; README "Prerequisites")';
