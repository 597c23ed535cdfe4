import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../lib/db/database.js';
import { openDatabase } from '../lib/db/open.js';
import { startWsProxy } from '../lib/db/ws-proxy.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../local/pglite-server.js';

export type BenchTargetName = 'postgres' | 'pglite' | 'sqlite';

/** One empty database for one benchmark, reached the way the functions reach it. */
export interface BenchDatabase {
  /** one connection (pool of max 1): "on one connection" */
  readonly db: Database;
  /** another client of the same database: a pool of `max` connections (default 1), the statement cap of `statementTimeoutMs` (PostgreSQL) */
  connect(options?: { max?: number; statementTimeoutMs?: number }): Database;
  /** closes every client and drops the database */
  dispose(): Promise<void>;
  /** PostgreSQL only: the same database's URL for a plain TCP client (`pg`), no driver path in between */
  readonly tcpUrl?: string;
  /** the database's URL as the CLI takes it (`--database-url`), for a benchmark run in another process */
  readonly url: string;
}

export interface BenchTarget {
  readonly name: BenchTargetName;
  /** what the report calls it, with the server version */
  readonly label: string;
  fresh(): Promise<BenchDatabase>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL = the server at TEST_DATABASE_URL when set, else embedded PGlite; both through the
 * real Neon driver and the local ws proxy, as in production. SQLite = a file (WAL), as the host's.
 */
export async function startTargets(): Promise<BenchTarget[]> {
  const url = process.env.TEST_DATABASE_URL;
  const pg = url ? await serverTarget(url) : await pgliteTarget();
  return [pg, await sqliteTarget()];
}

async function serverTarget(adminUrl: string): Promise<BenchTarget> {
  const proxy = await startWsProxy();
  const admin = openDatabase(adminUrl, { wsProxy: proxy.address, max: 1 });
  const [row] = await admin.query<{ server_version: string }>('SHOW server_version');
  let sequence = 0;
  return {
    name: 'postgres',
    label: `PostgreSQL ${row?.server_version ?? ''} (server at TEST_DATABASE_URL)`,
    async fresh() {
      const name = `subagent_bench_${process.pid}_${++sequence}`;
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
      const dbUrl = new URL(adminUrl);
      dbUrl.pathname = `/${name}`;
      return clients(
        (max, statementTimeoutMs) =>
          openDatabase(dbUrl.toString(), { wsProxy: proxy.address, max, statementTimeoutMs }),
        async () => {
          await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        },
        dbUrl.toString(),
        dbUrl.toString(),
      );
    },
    async stop() {
      await admin.close();
      await proxy.close();
    },
  };
}

async function pgliteTarget(): Promise<BenchTarget> {
  const pg: EmbeddedPostgres = await startEmbeddedPostgres();
  const open = (max = 1, statementTimeoutMs?: number) =>
    openDatabase(pg.url, { wsProxy: pg.wsProxy, max, statementTimeoutMs });
  const admin = open();
  const [row] = await admin.query<{ server_version: string }>('SHOW server_version');
  return {
    name: 'pglite',
    label: `PGlite ${row?.server_version ?? ''} (embedded; TEST_DATABASE_URL not set)`,
    async fresh() {
      // PGlite serves one database: start each benchmark from an empty public schema.
      await admin.query('DROP SCHEMA IF EXISTS public CASCADE');
      await admin.query('CREATE SCHEMA public');
      return clients(open, async () => undefined, pg.url, pg.url);
    },
    async stop() {
      await admin.close();
      await pg.stop();
    },
  };
}

async function sqliteTarget(): Promise<BenchTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-'));
  const probe = openDatabase('sqlite::memory:');
  const [row] = await probe.query<{ v: string }>('SELECT sqlite_version() AS v');
  await probe.close();
  let sequence = 0;
  return {
    name: 'sqlite',
    label: `SQLite ${row?.v ?? ''} (better-sqlite3, file in WAL mode)`,
    async fresh() {
      const path = join(dir, `bench-${++sequence}.db`);
      return clients(
        () => openDatabase(`sqlite:${path}`, { create: true }),
        async () => rmSync(path, { force: true }),
        `sqlite:${path}`,
      );
    },
    stop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function clients(
  open: (max: number, statementTimeoutMs?: number) => Database,
  drop: () => Promise<void>,
  url: string,
  tcpUrl?: string,
): BenchDatabase {
  const opened: Database[] = [];
  const connect = (options: { max?: number; statementTimeoutMs?: number } = {}) => {
    const db = open(options.max ?? 1, options.statementTimeoutMs);
    opened.push(db);
    return db;
  };
  const db = connect();
  return {
    db,
    connect,
    url,
    ...(tcpUrl ? { tcpUrl } : {}),
    async dispose() {
      await Promise.allSettled(opened.map((d) => d.close()));
      await drop();
    },
  };
}
