import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Database, Queryable } from '../../lib/db/database.js';
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
import { emptyIfUnchanged, schemaShape } from './schema-reset.js';

export type TargetName = 'sqlite' | 'pglite' | 'postgres';

/**
 * TEST_TARGETS=pglite,postgres narrows TARGETS: CI's run on Node 22 (Lambda's runtime), where the
 * better-sqlite3 addon built for the project's Node 20 does not load (.ci/run).
 */
const onlyTargets = process.env.TEST_TARGETS?.split(',').map((name) => name.trim());

/**
 * Every database test runs on each of these: SQLite always, embedded PGlite always, and the real
 * PostgreSQL server when TEST_DATABASE_URL is set (CI sets it).
 */
export const TARGETS: TargetName[] = (
  ['sqlite', 'pglite', ...(process.env.TEST_DATABASE_URL ? (['postgres'] as const) : [])] as TargetName[]
).filter((name) => onlyTargets === undefined || onlyTargets.includes(name));

/** The PostgreSQL targets of TARGETS (embedded PGlite and the server): suites of PostgreSQL's own rules. */
export const POSTGRES_TARGETS: TargetName[] = TARGETS.filter((name) => name !== 'sqlite');

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
  connect(options?: { max?: number; statementTimeoutMs?: number; connectTimeoutMs?: number }): Database;
}

interface Backend {
  /**
   * The URL of a database ready for a test whose fixture and options are `setup`: the host tables
   * and ours as `build` creates them, and no rows.
   */
  databaseForTest(setup: string, build: (db: Queryable) => Promise<void>): Promise<string>;
  proxy: WsProxy | undefined;
  stop(): Promise<void>;
}

let sequence = 0;

async function startBackend(name: TargetName): Promise<Backend> {
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'subagent-context-'));
    return {
      proxy: undefined,
      // a new file each test: SQLite's DDL takes a few milliseconds
      async databaseForTest(_setup, build) {
        const url = `sqlite:${join(dir, `t${++sequence}.db`)}`;
        const db = openDatabase(url, { create: true });
        try {
          await build(db);
        } finally {
          await db.close();
        }
        return url;
      },
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
  const schema = await reusedSchema(url.toString());
  return {
    proxy,
    databaseForTest: schema.databaseForTest,
    async stop() {
      await schema.close();
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
let pglite: { started: Promise<StartedPglite>; users: number; stopTimer?: NodeJS.Timeout } | undefined;

interface StartedPglite {
  pg: EmbeddedPostgres;
  schema: ReusedSchema;
}

async function startPglite(): Promise<StartedPglite> {
  const pg = await startEmbeddedPostgres();
  return { pg, schema: await reusedSchema(pg.url) };
}

async function sharedPglite(): Promise<Backend> {
  if (!pglite) pglite = { started: startPglite(), users: 0 };
  const shared = pglite;
  clearTimeout(shared.stopTimer);
  shared.users++;
  const { pg, schema } = await shared.started;
  return {
    proxy: pg.proxy,
    databaseForTest: schema.databaseForTest,
    async stop() {
      if (--shared.users > 0) return;
      shared.stopTimer = setTimeout(() => {
        if (pglite === shared && shared.users === 0) {
          pglite = undefined;
          void schema.close().then(() => pg.stop());
        }
      }, 1_000);
      shared.stopTimer.unref();
    },
  };
}

interface ReusedSchema {
  databaseForTest: Backend['databaseForTest'];
  close(): Promise<void>;
}

/**
 * Tests of one file run one after another; each starts from the `public` schema a DROP SCHEMA and
 * its setup's DDL give. On PostgreSQL that DDL takes 100-470 ms a test (catalog writes on a new
 * backend's cold caches), so when the previous test had the same setup and changed rows only (the
 * schema's digest is the one taken after the DDL and it left no statistics:
 * test/support/schema-reset.ts), its tables are emptied instead. The work runs on a connection of
 * the harness's own, kept for the file and routed around the proxy tests cut (`proxy`).
 */
async function reusedSchema(url: string): Promise<ReusedSchema> {
  const route = await startWsProxy();
  const harness = openDatabase(url, { wsProxy: route.address, max: 1 });
  let last: { setup: string; shape: string } | undefined;
  return {
    async databaseForTest(setup, build) {
      const previous = last;
      last = undefined; // a setup that fails leaves nothing to reuse
      if (previous?.setup === setup && (await emptyIfUnchanged(harness, previous.shape))) {
        last = previous;
        return url;
      }
      await harness.query('DROP SCHEMA IF EXISTS public CASCADE');
      await harness.query('CREATE SCHEMA public');
      await build(harness);
      last = { setup, shape: await schemaShape(harness) };
      return url;
    },
    async close() {
      await harness.close();
      await route.close();
    },
  };
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
  const setup = `${fixture.name}, subagent table: ${options.subagentTable !== false}`;
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
    activeFixture = fixture;
    const url = await backend.databaseForTest(setup, async (db) => {
      await fixture.create(db);
      if (options.subagentTable !== false) await ensureSubagentTable(db);
    });
    const db = openDatabase(url, { wsProxy: backend.proxy?.address });
    opened.push(db);
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
        connectTimeoutMs: connectOptions?.connectTimeoutMs,
      });
      opened.push(db);
      return db;
    },
  };
}
