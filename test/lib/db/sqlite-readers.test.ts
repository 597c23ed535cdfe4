import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/database.js';
import { DatabaseError } from '../../../lib/db/errors.js';
import { openDatabase } from '../../../lib/db/open.js';
import { buildReport } from '../../../lib/report/build.js';
import { ensureSubagentTable } from '../../../lib/store/schema.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { HOST_FIXTURES } from '../../../local/host-fixtures.js';
import { buildReportStore } from '../../support/report-store.js';

/*
 * Issue 59 (R4-12): a read-only SQLite store's statements run on reader threads, each with its own
 * read-only connection (lib/db/sqlite-readers.ts), side by side as PostgreSQL's pool runs them.
 * What must hold: the same rows and the same report as one connection, the dialect's functions on
 * every thread, the driver's errors classified as the main connection's, and no thread left behind.
 */

const work = mkdtempSync(join(tmpdir(), 'sqlite-readers-'));
const path = join(work, 'store.db');
const url = `sqlite:${path}`;
const cores = availableParallelism();
const withCores = it.skipIf(cores < 2);
const opened: Database[] = [];
const open = (readers?: number) => {
  const db = openDatabase(url, { readonly: true, readers });
  opened.push(db);
  return db;
};

beforeAll(async () => {
  const db = openDatabase(url, { create: true });
  await HOST_FIXTURES.host.create(db);
  await ensureSubagentTable(db);
  await buildReportStore(db, 'host');
  await db.close();
}, 120_000);

afterAll(async () => {
  await Promise.all(opened.map((db) => db.close().catch(() => undefined)));
  rmSync(work, { recursive: true, force: true });
});

/** A statement that keeps its connection busy for a while: SQLite counts to `n`. */
const busy = (n: number) =>
  `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n}) SELECT MAX(i) AS n FROM c`;

describe('issue 59: SQLite reader threads (R4-12)', () => {
  withCores(
    'a read-only store with readers runs as many statements at once as it has readers, at most one a core',
    async () => {
      expect(open(2).connections).toBe(2);
      expect(open(64).connections).toBe(Math.min(64, cores));
    },
  );

  it('a store without readers, or opened for writing, or in memory, is one connection', () => {
    expect(open().connections).toBeUndefined();
    expect(open(1).connections).toBeUndefined();
    const writing = openDatabase(url, { readers: 4 });
    opened.push(writing);
    expect(writing.connections).toBeUndefined();
    const memory = openDatabase('sqlite::memory:', { readonly: false, readers: 4 });
    opened.push(memory);
    expect(memory.connections).toBeUndefined();
  });

  withCores('a short statement sent after a long one is answered first: they run side by side', async () => {
    const db = open(2);
    const done: string[] = [];
    await Promise.all([
      db.query(busy(3_000_000)).then(() => done.push('long')),
      db.query('SELECT 1 AS one').then(() => done.push('short')),
    ]);
    expect(done).toEqual(['short', 'long']);
  });

  withCores('every reader answers with the dialect functions and aggregates, as the main connection does', async () => {
    const one = open();
    const many = open(2);
    const sql =
      "SELECT subagent_context_instant($1) AS instant, subagent_context_exact_instant($1) AS exact, (SELECT subagent_context_nearest_ranks(duration_ms, '50,95') FROM task_session_subagents) AS ranks";
    const expected = await one.query(sql, ['2026-07-21T10:01:00.123456789+02:00']);
    // side by side, so both threads answer
    const answers = await Promise.all([1, 2, 3, 4].map(() => many.query(sql, ['2026-07-21T10:01:00.123456789+02:00'])));
    for (const rows of answers) expect(rows).toEqual(expected);
    expect(expected[0]!.instant).toBe('2026-07-21 08:01:00.123456');
  });

  withCores(
    'the report over reader threads is the report over one connection, page data and trees included',
    async () => {
      const options = { now: parseRfc3339('2026-08-01T00:00:00Z')!, graceSeconds: 0, pageData: true, trees: 5 };
      const [alone, threaded] = await Promise.all([buildReport(open(), options), buildReport(open(2), options)]);
      expect(threaded).toEqual(alone);
      const byTask = { now: options.now, graceSeconds: 0, by: 'task' as const };
      expect(await buildReport(open(2), byTask)).toEqual(await buildReport(open(), byTask));
    },
  );

  withCores("a reader's driver error is classified as the main connection's: SQLSTATE, code and hint", async () => {
    const sql = 'SELECT missing_column FROM task_session_subagents';
    const main = await open()
      .query(sql)
      .catch((err: unknown) => err);
    const threaded = await open(2)
      .query(sql)
      .catch((err: unknown) => err);
    expect(threaded).toBeInstanceOf(DatabaseError);
    expect(main).toBeInstanceOf(DatabaseError);
    const fields = (e: unknown) => {
      const d = e as DatabaseError;
      return { message: d.message, sqlstate: d.sqlstate, driverCode: d.driverCode, kind: d.kind };
    };
    expect(fields(threaded)).toEqual(fields(main));
    expect((threaded as DatabaseError).sqlstate).toBe('42000');
  });

  withCores('a failed statement costs that statement only: the reader answers the next one', async () => {
    const db = open(2);
    const results = await Promise.allSettled([
      db.query('SELECT nope FROM nowhere'),
      db.query('SELECT COUNT(*) AS n FROM task_session_subagents'),
      db.query('SELECT nope FROM nowhere'),
      db.query('SELECT 2 AS two'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(await db.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
  });

  withCores(
    'close waits for the statement in flight, then ends every thread; a closed store refuses more',
    async () => {
      const db = open(2);
      const inFlight = db.query(busy(1_000_000));
      await db.close();
      expect(await inFlight).toEqual([{ n: 1_000_000 }]);
      await expect(db.query('SELECT 1')).rejects.toThrow(/closed/);
    },
  );

  withCores(
    'threads that cannot open the store leave its statements to the main connection: the same report',
    async () => {
      // a rollback-journal copy, opened, then removed: the main connection keeps reading its open
      // file, the threads (opening theirs after open() returns) find none
      const gone = join(work, 'removed.db');
      copyFileSync(path, gone);
      const writer = new BetterSqlite3(gone);
      writer.pragma('journal_mode = DELETE');
      writer.close();
      const db = openDatabase(`sqlite:${gone}`, { readonly: true, readers: 2 });
      opened.push(db);
      rmSync(gone);
      expect(db.connections).toBe(2);
      const options = { now: parseRfc3339('2026-08-01T00:00:00Z')!, graceSeconds: 0, pageData: true, trees: 5 };
      expect(await buildReport(db, options)).toEqual(await buildReport(open(), options));
    },
  );

  withCores(
    'a deadline already past fails a reader statement before it is sent, as on the main connection',
    async () => {
      const db = open(2);
      db.setDeadline(Date.now() - 1, { caller: 'cli', work: 'other' });
      await expect(db.query('SELECT 1')).rejects.toThrow(/deadline/);
      db.setDeadline(undefined);
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    },
  );
});
