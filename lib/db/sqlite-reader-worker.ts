import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { registerFunctions, statementRunner } from './sqlite-connection.js';
import type { DriverFailure, ReaderData, ReaderJob, ReaderReply } from './sqlite-readers.js';

/*
 * One reader thread of a read-only SQLite store (sqlite-readers.ts): its own read-only connection
 * with the dialect's functions, answering one statement at a time. better-sqlite3 runs a statement
 * on the thread that calls it, so the report's independent statements run side by side only on
 * connections of their own threads (issue 59), as PostgreSQL's run on the pool's connections.
 */
const { file } = workerData as ReaderData;
const port = parentPort!;
const post = (reply: ReaderReply) => port.postMessage(reply);
const failure = (err: unknown): DriverFailure => {
  const e = err as { message?: unknown; code?: unknown };
  return { message: String(e.message ?? err), ...(typeof e.code === 'string' ? { code: e.code } : {}) };
};

let db: BetterSqlite3.Database;
try {
  const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  db = new Driver(file, { readonly: true, fileMustExist: true });
  registerFunctions(db);
  post({ ready: true });
} catch (err) {
  post({ openFailed: failure(err) });
  process.exit(0);
}
const execute = statementRunner(db);
let busyMs = -1;
port.on('message', (job: ReaderJob | 'close') => {
  if (job === 'close') {
    // the connection closes here, before the thread is ended (a store read in place is tidied after)
    db.close();
    post({ closed: true });
    return;
  }
  try {
    if (job.busyMs !== busyMs) {
      busyMs = job.busyMs;
      db.pragma(`busy_timeout = ${busyMs}`);
    }
    post({ rows: execute(job.sql, job.params) });
  } catch (err) {
    post({ error: failure(err) });
  }
});
