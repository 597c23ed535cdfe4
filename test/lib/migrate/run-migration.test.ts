import { afterEach, describe, expect, it, vi } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import {
  MIGRATION_NAME,
  MigrationError,
  type MigrationStep,
  runMigration,
} from '../../../lib/migrate/run-migration.js';
import { logger } from '../../../lib/observability.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY, readMetaKeys } from '../../../lib/store/meta.js';
import { readAll } from '../../../lib/store/read.js';
import { CREATE_TABLE } from '../../../lib/store/schema.js';
import { type Micros, nowMicros, parseStoredTimestamp } from '../../../lib/time.js';
import { TARGET_FIXTURES, type TestDatabase, useTestDatabase } from '../../support/targets.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

const KEY_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}000Z$/;

async function seedMessages(t: TestDatabase, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await insertHostMessage(t.db, {
      id: `m${i}`,
      metadata: subagentDoc({ top: { tool_call_id: `c${i}` } }),
      createdAt: `2026-08-12T13:24:5${i}.12345${i}Z`,
    });
  }
  await insertHostMessage(t.db, { id: 'plain', metadata: '{}' });
}

async function setKey(t: TestDatabase, key: string, value: string): Promise<void> {
  await t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);
}

const snapshot = async (t: TestDatabase) => ({
  rows: await t.db.query(`SELECT * FROM ${TABLE} ORDER BY tool_call_id`),
  keys: await readMetaKeys(t.db),
});

describe.each(TARGET_FIXTURES)('migration on %s, %s host schema (fresh host database)', (name, fixture) => {
  const t = useTestDatabase(name, { fixture, subagentTable: false });
  afterEach(() => vi.restoreAllMocks());

  it('AC-17: creates kandev_meta, the table and both keys on a database that has none of them', async () => {
    await t.db.query('DROP TABLE kandev_meta');
    const report = await runMigration(t.db);
    expect(report).toMatchObject({ backfill: 'completed', inserted: 0, matched: 0, backfillThrough: '' });
    expect(report.captureSince).toMatch(KEY_FORM);
    expect(await readMetaKeys(t.db)).toEqual({ captureSince: report.captureSince, backfillThrough: '' });
    expect(await readAll(t.db)).toEqual([]);
  });

  it('AC-18: backfills a host database that predates the feature and leaves its messages untouched', async () => {
    await seedMessages(t, 3);
    const messages = await t.db.query('SELECT * FROM task_session_messages ORDER BY id');
    const report = await runMigration(t.db);
    expect(report).toMatchObject({
      backfill: 'completed',
      inserted: 3,
      matched: 3,
      backfillThrough: '2026-08-12T13:24:52.123452000Z',
    });
    expect((await readAll(t.db)).map((r) => r.tool_call_id)).toEqual(['c0', 'c1', 'c2']);
    expect(await t.db.query('SELECT * FROM task_session_messages ORDER BY id')).toEqual(messages);
  });

  it('AC-17, AC-18: a second run in a row skips and leaves rows and keys byte-identical', async () => {
    await seedMessages(t, 2);
    await runMigration(t.db);
    const first = await snapshot(t);
    const second = await runMigration(t.db);
    expect(second).toMatchObject({
      backfill: 'skipped',
      inserted: 0,
      matched: 0,
      captureSince: first.keys.captureSince,
      backfillThrough: first.keys.backfillThrough,
    });
    expect(await snapshot(t)).toEqual(first);
  });

  it('AC-24f: both keys are RFC 3339 UTC with a nanosecond-width fraction', async () => {
    await seedMessages(t, 1);
    const report = await runMigration(t.db);
    expect(report.captureSince).toMatch(KEY_FORM);
    expect(report.backfillThrough).toMatch(KEY_FORM);
  });

  it('docs/migrate.md#3-the-backfill-transaction (c): capture_since is sampled after the insert, not at transaction start', async () => {
    await seedMessages(t, 2);
    let insertEnded: Micros | undefined;
    const report = await runMigration(t.db, {
      beforeStep: (step) => {
        if (step === 'capture_since_key') insertEnded = nowMicros();
      },
    });
    expect(insertEnded).toBeDefined();
    expect(parseStoredTimestamp(report.captureSince!)! >= insertEnded!).toBe(true);
  });

  it('docs/migrate.md#6-the-keys: legacy second-precision keys already present are never rewritten and the backfill is skipped', async () => {
    await setKey(t, CAPTURE_SINCE_KEY, '2026-07-01T00:00:00Z');
    await setKey(t, BACKFILL_THROUGH_KEY, '2026-06-30T23:59:59Z');
    await seedMessages(t, 2);
    const report = await runMigration(t.db);
    expect(report).toMatchObject({
      backfill: 'skipped',
      captureSince: '2026-07-01T00:00:00Z',
      backfillThrough: '2026-06-30T23:59:59Z',
    });
    expect(await readAll(t.db)).toEqual([]);
  });

  it.each([
    { present: CAPTURE_SINCE_KEY, missing: BACKFILL_THROUGH_KEY, value: '2026-07-01T00:00:00Z' },
    { present: BACKFILL_THROUGH_KEY, missing: CAPTURE_SINCE_KEY, value: '2026-07-01T00:00:00Z' },
    { present: BACKFILL_THROUGH_KEY, missing: CAPTURE_SINCE_KEY, value: '' },
  ])(
    'AC-24d: with only $present present ("$value") the backfill runs, keeps it byte-identical and writes $missing',
    async ({ present, missing, value }) => {
      await setKey(t, present, value);
      await seedMessages(t, 2);
      const report = await runMigration(t.db);
      expect(report).toMatchObject({ backfill: 'completed', inserted: 2 });
      const [kept] = await t.db.query<{ value: string }>('SELECT value FROM kandev_meta WHERE key = $1', [present]);
      const [written] = await t.db.query<{ value: string }>('SELECT value FROM kandev_meta WHERE key = $1', [missing]);
      expect(kept?.value).toBe(value);
      expect(written?.value).toMatch(KEY_FORM);
      expect((await runMigration(t.db)).backfill).toBe('skipped');
    },
  );

  /** Asserts the failure contract of AC-20: clear rejection, WARN with the name, no key, no row. */
  async function expectRolledBack(run: Promise<unknown>, step: MigrationStep): Promise<void> {
    const warn = vi.spyOn(logger, 'warn');
    const error = await run.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).step).toBe(step);
    expect((error as Error).message).toContain(MIGRATION_NAME);
    expect((error as Error).message).toContain('invoke the migrate function again');
    expect(warn).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ migration: MIGRATION_NAME, step }));
    expect(await readMetaKeys(t.db)).toEqual({ captureSince: undefined, backfillThrough: undefined });
  }

  it('AC-20, AC-24a: a failing insert rolls back, writes no key, and the next run completes', async () => {
    // The table exists with a constraint the backfill violates: a real failure of the INSERT.
    await t.db.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await t.db.query(
      CREATE_TABLE.replace(
        "source TEXT NOT NULL DEFAULT 'live'",
        "source TEXT NOT NULL DEFAULT 'live' CHECK (source IN ('live'))",
      ),
    );
    await seedMessages(t, 2);
    await expectRolledBack(runMigration(t.db, { logger }), 'insert');
    expect(await readAll(t.db)).toEqual([]);
    await t.db.query(`DROP TABLE ${TABLE}`);
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'completed', inserted: 2 });
  });

  it('AC-20, AC-24a: a failing second key write rolls back the first key and the rows; the next run completes', async () => {
    // The host's kandev_meta refuses the second key: a real failure after capture_since was written.
    await t.db.query('DROP TABLE kandev_meta');
    await t.db.query(
      `CREATE TABLE kandev_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT '' CHECK (key <> '${BACKFILL_THROUGH_KEY}'))`,
    );
    await seedMessages(t, 2);
    await expectRolledBack(runMigration(t.db, { logger }), 'backfill_through_key');
    expect(await readAll(t.db)).toEqual([]);
    await t.db.query('DROP TABLE kandev_meta');
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'completed', inserted: 2 });
  });

  it('AC-20, AC-24a: a failure after both keys are written, before commit, leaves nothing; the next run completes', async () => {
    await seedMessages(t, 2);
    const failCommit = runMigration(t.db, {
      logger,
      beforeStep: (step) => {
        if (step === 'commit') throw new Error('forced failure before commit');
      },
    });
    await expectRolledBack(failCommit, 'commit');
    expect(await readAll(t.db)).toEqual([]);
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'completed', inserted: 2 });
  });
});

describe.each(TARGET_FIXTURES)('a failed schema step leaves nothing on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture, subagentTable: false });

  /** Which of our objects exist (and, on the host's own table, our column). */
  async function ours(): Promise<Record<string, boolean>> {
    const postgres = name !== 'sqlite';
    const exists = async (sql: string, params: unknown[]) =>
      Number((await t.db.query<{ n: number }>(sql, params))[0]?.n) > 0;
    const relation = (relname: string) =>
      exists(
        postgres
          ? 'SELECT COUNT(*) AS n FROM pg_class WHERE relname = $1'
          : 'SELECT COUNT(*) AS n FROM sqlite_master WHERE name = $1',
        [relname],
      );
    const table = await relation(TABLE);
    return {
      kandev_meta: await relation('kandev_meta'),
      table,
      last_observed_at:
        table &&
        (await exists(
          postgres
            ? 'SELECT COUNT(*) AS n FROM information_schema.columns WHERE table_name = $1 AND column_name = $2'
            : 'SELECT COUNT(*) AS n FROM pragma_table_info($1) WHERE name = $2',
          [TABLE, 'last_observed_at'],
        )),
      idx_subagents_observed_at: await relation('idx_subagents_observed_at'),
      function: postgres
        ? await exists(`SELECT COUNT(*) AS n FROM pg_proc WHERE proname = 'subagent_context_json'`, [])
        : false,
    };
  }

  it('AC-20: a failure in the schema step rolls all of it back: no kandev_meta, table, column, index or function', async () => {
    await t.db.query('DROP TABLE kandev_meta');
    const before = await ours();
    const failing = runMigration(t.db, {
      beforeStep: (step) => {
        if (step === 'schema') throw new Error('forced failure after the DDL');
      },
    });
    await expect(failing).rejects.toMatchObject({ name: 'MigrationError', step: 'schema' });
    expect(await ours()).toEqual(before);
    expect(before.kandev_meta).toBe(false);
    // The host's fixture has the host's own table; the minimal one has none of ours.
    expect(before.table).toBe(fixture === 'host');
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'completed' });
    expect(await ours()).toMatchObject({ kandev_meta: true, table: true, last_observed_at: true });
  });

  it('issue 51: host tables without a column the backfill reads: migrate names it and creates nothing', async () => {
    await t.db.query('DROP TABLE kandev_meta');
    await t.db.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await t.db.query('DROP TABLE task_session_messages');
    // the host's tables of another version: the messages without their metadata column
    await t.db.query(
      'CREATE TABLE task_session_messages (id TEXT PRIMARY KEY, task_session_id TEXT NOT NULL, task_id TEXT, turn_id TEXT, created_at TIMESTAMP, updated_at TIMESTAMP)',
    );
    const error = await runMigration(t.db).catch((err: unknown) => err);
    expect(error).toMatchObject({ name: 'MigrationError', step: 'schema', sqlstate: '42703' });
    expect((error as Error).message).toMatch(/no task_session_messages\.metadata column.*migrate created nothing/);
    expect(await ours()).toEqual({
      kandev_meta: false,
      table: false,
      last_observed_at: false,
      idx_subagents_observed_at: false,
      function: false,
    });
  });

  it("AC-20: a database without the host's tables is not the host's store: migrate creates nothing and says so", async () => {
    await t.db.query('DROP TABLE kandev_meta');
    await t.db.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await t.db.query('DROP TABLE task_session_messages');
    const error = await runMigration(t.db).catch((err: unknown) => err);
    expect(error).toMatchObject({ name: 'MigrationError', step: 'schema' });
    expect((error as Error).message).toMatch(/no task_sessions \/ task_session_messages .*not the host's store/);
    expect(await ours()).toEqual({
      kandev_meta: false,
      table: false,
      last_observed_at: false,
      idx_subagents_observed_at: false,
      function: false,
    });
  });
});
