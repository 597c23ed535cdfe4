import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/*
 * Issue 59 (R4-12): reader threads for a read-only SQLite store. better-sqlite3 is synchronous, so
 * one connection runs the report's independent statements (the figures, the breakdown, the fan-out
 * cost, the trees) one after the other, where PostgreSQL runs them side by side on its pool. Each
 * reader here is a thread with its own read-only connection to the same file (sqlite-reader-worker.ts);
 * a statement goes to a free one, in the order sent. Rows come back by structured clone, the values
 * better-sqlite3 gives (numbers, strings, null, Buffers).
 */

/** What a reader thread is given: the file to open read-only (the store, or its private copy). */
export interface ReaderData {
  file: string;
}

/** A statement for a thread; its answer is the thread's next reply (one statement at a time). */
export interface ReaderJob {
  sql: string;
  params: readonly unknown[];
  /** the busy timeout for this statement (the connection's, bounded by a deadline: sqlite.ts) */
  busyMs: number;
}

/** What a thread says: its connection opened (or why not), a statement's rows or error, closed. */
export type ReaderReply =
  | { ready: true }
  | { openFailed: DriverFailure }
  | { rows: unknown[] }
  | { error: DriverFailure }
  | { closed: true };

/** A driver error as the thread saw it: its message and SQLite code. */
export interface DriverFailure {
  message: string;
  code?: string;
}

/**
 * The code of a statement no reader thread took: every thread is gone (none could open the file,
 * say: it was removed or replaced after the main connection opened it). The statement was never
 * sent, so the main connection runs it (sqlite.ts): the threads save time, they are not needed.
 */
export const READERS_GONE = 'SUBAGENT_CONTEXT_READERS_GONE';

export interface SqliteReaders {
  readonly size: number;
  /** The statement on a free reader; rejects with the driver's message and code (sqlite.ts classifies them). */
  query<T>(sql: string, params: readonly unknown[], busyMs: number): Promise<T[]>;
  /** Waits for the statements in flight, then closes every reader's connection and ends its thread. */
  close(): Promise<void>;
}

interface Reader {
  worker: Worker;
  ready: boolean;
  job?: Pending;
  gone?: Error;
}

interface Pending {
  job: ReaderJob;
  resolve: (rows: unknown[]) => void;
  reject: (err: Error) => void;
}

/** A driver error of a thread as an Error again, for sqlite.ts to classify. */
const driverError = ({ message, code }: DriverFailure) =>
  Object.assign(new Error(message), code === undefined ? {} : { code });

export function startReaders(file: string, count: number): SqliteReaders {
  const queue: Pending[] = [];
  let lastError: Error | undefined;
  let closed = false;
  const closedError = () =>
    Object.assign(new Error('the store is closed: no statement is sent after close()'), { code: 'SQLITE_MISUSE' });
  const readers: Reader[] = [];
  const unavailable = () =>
    Object.assign(new Error('no SQLite reader thread is left', { cause: lastError }), { code: READERS_GONE });
  const allGone = () => readers.every((r) => r.gone);
  const drained: (() => void)[] = [];
  const dispatch = () => {
    for (const reader of readers) {
      if (queue.length === 0) break;
      if (!reader.ready || reader.job || reader.gone) continue;
      const pending = queue.shift()!;
      reader.job = pending;
      // a thread with a statement keeps the process alive until it answers; an idle one does not
      reader.worker.ref();
      reader.worker.postMessage(pending.job);
    }
    // no reader left to answer: what waits was never sent, and the main connection takes it (sqlite.ts)
    if (allGone()) for (const pending of queue.splice(0)) pending.reject(unavailable());
    if (queue.length === 0) for (const resolve of drained.splice(0)) resolve();
  };
  const lose = (reader: Reader, err: Error) => {
    if (reader.gone) return;
    reader.gone = err;
    lastError = err;
    reader.job?.reject(err);
    reader.job = undefined;
    dispatch();
  };
  for (let i = 0; i < count; i++) {
    const reader: Reader = { worker: spawn({ file }), ready: false };
    readers.push(reader);
    reader.worker.unref();
    reader.worker.on('message', (reply: ReaderReply) => {
      // its connection closed (close()), the thread is ended: a loader's handle must not keep it
      if ('closed' in reply) return void reader.worker.terminate();
      if ('ready' in reply) reader.ready = true;
      else if ('openFailed' in reply) lose(reader, driverError(reply.openFailed));
      else {
        const pending = reader.job;
        reader.job = undefined;
        reader.worker.unref();
        if ('error' in reply) pending?.reject(driverError(reply.error));
        else pending?.resolve(reply.rows);
      }
      dispatch();
    });
    reader.worker.on('error', (err) => lose(reader, err));
    reader.worker.on('exit', (code) =>
      lose(
        reader,
        Object.assign(new Error(`a SQLite reader thread ended (exit code ${code})`), { code: 'SQLITE_INTERNAL' }),
      ),
    );
  }
  let closing: Promise<void> | undefined;
  const closeAll = async () => {
    closed = true;
    // the statements sent before close still run: the threads answer messages in order, and
    // what waits for a free one is sent first
    while (queue.length > 0 && !allGone()) await new Promise<void>((resolve) => drained.push(resolve));
    await Promise.all(
      readers.map(
        (reader) =>
          new Promise<void>((resolve) => {
            if (reader.gone) return resolve();
            reader.worker.removeAllListeners('exit');
            reader.worker.once('exit', () => resolve());
            reader.worker.ref();
            reader.worker.postMessage('close');
          }),
      ),
    );
  };
  return {
    size: count,
    query: <T>(sql: string, params: readonly unknown[], busyMs: number) =>
      new Promise<T[]>((resolve, reject) => {
        if (closed) return reject(closedError());
        if (allGone()) return reject(unavailable());
        queue.push({
          job: { sql, params: [...params], busyMs },
          resolve: resolve as (rows: unknown[]) => void,
          reject,
        });
        dispatch();
      }),
    close: () => {
      closing ??= closeAll();
      return closing;
    },
  };
}

/**
 * A reader thread. In a checkout the sources are TypeScript run through tsx (bin/subagent-context.mjs,
 * the tests): the thread registers tsx's require hook, then requires its module (tsx's in-thread
 * CommonJS hook: its ESM loader starts a thread of its own, ~100 ms more per reader). The built
 * package runs its JavaScript directly.
 */
function spawn(data: ReaderData): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./sqlite-reader-worker.js', here), { workerData: data });
  const tsx = createRequire(here).resolve('tsx/cjs/api');
  const entry = fileURLToPath(new URL('./sqlite-reader-worker.ts', here));
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`, {
    eval: true,
    workerData: data,
  });
}
