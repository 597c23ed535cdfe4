import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Database } from '../../lib/db/database.js';
import { openDatabase } from '../../lib/db/open.js';
import { startWsProxy, type WsProxy } from '../../lib/db/ws-proxy.js';
import { ensureSubagentTable } from '../../lib/store/schema.js';
import {
  HOST_FIXTURE_NAMES,
  HOST_FIXTURES,
  type HostFixture,
  type HostFixtureName,
} from '../../local/host-fixtures.js';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../local/pglite-server.js';

export type TargetName = 'sqlite' | 'pglite' | 'postgres';

/**
 * Every database test runs on each of these: SQLite always, embedded PGlite always, and the real
 * PostgreSQL server when TEST_DATABASE_URL is set (CI sets it).
 */
export const TARGETS: TargetName[] = [
  'sqlite',
  'pglite',
  ...(process.env.TEST_DATABASE_URL ? (['postgres'] as const) : []),
];

/**
 * The host databases a suite can run on (local/host-fixtures.ts): the appendix's minimal schema
 * and the host's real DDL. Suites that must hold on a real host `describe.each(TARGET_FIXTURES)`.
 */
export const FIXTURES: readonly HostFixtureName[] = HOST_FIXTURE_NAMES;
export const TARGET_FIXTURES: readonly [TargetName, HostFixtureName][] = TARGETS.flatMap((target) =>
  FIXTURES.map((fixture): [TargetName, HostFixtureName] => [target, fixture]),
);

let activeFixture: HostFixture = HOST_FIXTURES.minimal;

/**
 * Whether a message with this `metadata` can exist on `target` with `fixture`'s host schema (the
 * real host refuses documents it cannot parse): for case lists built before any test runs.
 */
export function fixtureHolds(target: TargetName, fixture: HostFixtureName, metadata: string | null): boolean {
  return HOST_FIXTURES[fixture].holdsMetadata(metadata, target === 'sqlite' ? 'sqlite' : 'postgres');
}

/**
 * The host fixture of the test that is running, so helpers that add host rows (sessions, turns,
 * messages) write what that fixture's tables require.
 */
export function currentFixture(): HostFixture {
  return activeFixture;
}

export interface TestDatabase {
  readonly name: TargetName;
  /** the host schema the database was created with */
  readonly fixture: HostFixtureName;
  /** a fresh, isolated database for the current test: host tables (and by default ours) created */
  readonly db: Database;
  /** DATABASE_URL of the current test's database */
  readonly url: string;
  /** DATABASE_WS_PROXY for it (PostgreSQL targets); its interrupt()/setAvailable() cut it off */
  readonly proxy: WsProxy | undefined;
  /** another connection (pool) to the current test's database; closed after the test */
  connect(options?: { max?: number; statementTimeoutMs?: number }): Database;
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
  if (name === 'pglite') return sharedPglite();
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

/**
 * One embedded PostgreSQL per test file, shared by its describe blocks (a file that runs on both
 * host fixtures has two per target): booting PGlite takes seconds, more on a loaded machine. It
 * is stopped a moment after the last block releases it, unless another block takes it first; the
 * timer never keeps the worker alive (an in-memory PGlite needs no cleanup at exit).
 */
let pglite: { started: Promise<EmbeddedPostgres>; users: number; stopTimer?: NodeJS.Timeout } | undefined;

async function sharedPglite(): Promise<Backend> {
  if (!pglite) pglite = { started: startEmbeddedPostgres(), users: 0 };
  const shared = pglite;
  clearTimeout(shared.stopTimer);
  shared.users++;
  const pg = await shared.started;
  return {
    proxy: pg.proxy,
    urlForTest: () => resetPublicSchema(pg.url, pg.wsProxy),
    async stop() {
      if (--shared.users > 0) return;
      shared.stopTimer = setTimeout(() => {
        if (pglite === shared && shared.users === 0) {
          pglite = undefined;
          void pg.stop();
        }
      }, 1_000);
      shared.stopTimer.unref();
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
 * `name` with the host tables of `options.fixture`. Use inside `describe.each(TARGETS)` or
 * `describe.each(TARGET_FIXTURES)`.
 */
export function useTestDatabase(
  name: TargetName,
  options: {
    /** run our migrate's table DDL too (default); on `host` the host's own table exists either way */
    subagentTable?: boolean;
    /** the host schema to create; default `minimal` */
    fixture?: HostFixtureName;
  } = {},
): TestDatabase {
  const fixture = HOST_FIXTURES[options.fixture ?? 'minimal'];
  let backend: Backend;
  let current: { db: Database; url: string } | undefined;
  let opened: Database[] = [];

  beforeAll(async () => {
    backend = await startBackend(name);
  }, 180_000); // booting PGlite takes over a minute on a loaded 2-core machine
  afterAll(async () => {
    await backend?.stop();
  });
  beforeEach(async () => {
    backend.proxy?.setAvailable(true);
    const url = await backend.urlForTest();
    // Each test makes its own SQLite file (a path that does not exist is refused without it).
    const db = openDatabase(url, { wsProxy: backend.proxy?.address, create: true });
    opened.push(db);
    activeFixture = fixture;
    await fixture.create(db);
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
    fixture: fixture.name,
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
      const db = openDatabase(need().url, {
        wsProxy: backend.proxy?.address,
        max: connectOptions?.max,
        statementTimeoutMs: connectOptions?.statementTimeoutMs,
      });
      opened.push(db);
      return db;
    },
  };
}
