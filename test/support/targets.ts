import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createHostSchema } from '../../local/host-schema.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../local/pglite-server.js';
import type { Database } from '../../lib/db/database.js';
import { openDatabase } from '../../lib/db/open.js';
import { startWsProxy, type WsProxy } from '../../lib/db/ws-proxy.js';
import { ensureSubagentTable } from '../../lib/store/schema.js';

export type TargetName = 'sqlite' | 'pglite' | 'postgres';

/**
 * Every database test runs on each of these: SQLite always, embedded PGlite always, and the real
 * PostgreSQL server when TEST_DATABASE_URL is set (CI sets it).
 */
export const TARGETS: TargetName[] = ['sqlite', 'pglite', ...(process.env.TEST_DATABASE_URL ? (['postgres'] as const) : [])];

export interface TestDatabase {
  readonly name: TargetName;
  /** a fresh, isolated database for the current test: host tables (and by default ours) created */
  readonly db: Database;
  /** DATABASE_URL of the current test's database */
  readonly url: string;
  /** DATABASE_WS_PROXY for it (PostgreSQL targets); its interrupt()/setAvailable() cut it off */
  readonly proxy: WsProxy | undefined;
  /** another connection (pool) to the current test's database; closed after the test */
  connect(options?: { max?: number }): Database;
}

interface Backend {
  urlForTest(): Promise<string>;
  proxy: WsProxy | undefined;
  stop(): Promise<void>;
}

let sequence = 0;

async function startBackend(name: TargetName): Promise<Backend> {
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'subagent-context-'));
    return {
      proxy: undefined,
      urlForTest: async () => `sqlite:${join(dir, `t${++sequence}.db`)}`,
      stop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (name === 'pglite') {
    const pg: EmbeddedPostgres = await startEmbeddedPostgres();
    return { proxy: pg.proxy, urlForTest: () => resetPublicSchema(pg.url, pg.wsProxy), stop: () => pg.stop() };
  }
  // A database of its own per test file, so parallel workers and reruns never meet.
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const proxy = await startWsProxy();
  const dbName = `subagent_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = openDatabase(adminUrl, { wsProxy: proxy.address, max: 1 });
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  return {
    proxy,
    urlForTest: () => resetPublicSchema(url.toString(), proxy.address),
    async stop() {
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.close();
      await proxy.close();
    },
  };
}

/** Tests of one file run one after another; each starts from an empty `public` schema. */
async function resetPublicSchema(url: string, wsProxy: string): Promise<string> {
  const db = openDatabase(url, { wsProxy, max: 1 });
  try {
    await db.query('DROP SCHEMA IF EXISTS public CASCADE');
    await db.query('CREATE SCHEMA public');
  } finally {
    await db.close();
  }
  return url;
}

/**
 * Registers the hooks that give each test of the enclosing `describe` a fresh database on
 * `name`. Use inside `describe.each(TARGETS)`.
 */
export function useTestDatabase(name: TargetName, options: { subagentTable?: boolean } = {}): TestDatabase {
  let backend: Backend;
  let current: { db: Database; url: string } | undefined;
  let opened: Database[] = [];

  beforeAll(async () => {
    backend = await startBackend(name);
  }, 60_000);
  afterAll(async () => {
    await backend?.stop();
  });
  beforeEach(async () => {
    backend.proxy?.setAvailable(true);
    const url = await backend.urlForTest();
    const db = openDatabase(url, { wsProxy: backend.proxy?.address });
    opened.push(db);
    await createHostSchema(db);
    if (options.subagentTable !== false) await ensureSubagentTable(db);
    current = { db, url };
  }, 30_000);
  afterEach(async () => {
    backend.proxy?.setAvailable(true);
    await Promise.allSettled(opened.map((db) => db.close()));
    opened = [];
    current = undefined;
  });

  const need = () => {
    if (!current) throw new Error('the test database exists only inside a test');
    return current;
  };
  return {
    name,
    get db() {
      return need().db;
    },
    get url() {
      return need().url;
    },
    get proxy() {
      return backend.proxy;
    },
    connect(connectOptions) {
      const db = openDatabase(need().url, { wsProxy: backend.proxy?.address, max: connectOptions?.max });
      opened.push(db);
      return db;
    },
  };
}
