import { describe, expect, it } from 'vitest';
import { ReportStoreError, readStoreCatalog } from '../../../lib/report/catalog.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * What the report reads of the store's schema (docs/report.md#the-store, R3-3, R3-7, R4-12): each
 * flag on the appendix's minimal schema and on the host's real DDL, each as the catalog changes,
 * and the refusals of a store that is not a host's or was never migrated, written out.
 */

describe.each(TARGETS)('R3-3 the store catalog on %s', (target) => {
  // issue 57 #19: a SQLite value has its own type, so any SQLite cost may be a fraction
  const fractions = target === 'sqlite';
  describe('minimal host schema', () => {
    const t = useTestDatabase(target);

    it('R3-3: the minimal schema has no titles, no session start, no cost ledger, turns without started_at, no session/created index', async () => {
      expect(await readStoreCatalog(t.db)).toEqual({
        taskTitle: false,
        sessionStartedAt: false,
        costEvents: undefined,
        turns: { startedAt: false },
        sessionCreatedIndex: false,
        usage: true,
      });
    });

    it('R3-3, R3-7, R4-12: each flag follows its column or index (a ledger needs every column R3-7 reads; turn_id is its own)', async () => {
      await t.db.query('CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT)');
      await t.db.query('ALTER TABLE task_sessions ADD COLUMN started_at TEXT');
      await t.db.query(
        'CREATE TABLE office_cost_events (id TEXT PRIMARY KEY, session_id TEXT, task_id TEXT, cost_subcents INTEGER, estimated INTEGER)',
      );
      expect(await readStoreCatalog(t.db)).toEqual({
        taskTitle: true,
        sessionStartedAt: true,
        costEvents: undefined,
        turns: { startedAt: false },
        sessionCreatedIndex: false,
        usage: true,
      });
      await t.db.query('ALTER TABLE office_cost_events ADD COLUMN occurred_at TEXT');
      expect((await readStoreCatalog(t.db)).costEvents).toEqual({ turnId: false, costSource: false, fractions });
      await t.db.query('ALTER TABLE office_cost_events ADD COLUMN turn_id TEXT');
      expect((await readStoreCatalog(t.db)).costEvents).toEqual({ turnId: true, costSource: false, fractions });
      // R5-1: cost contract v3's cost_source is its own flag
      await t.db.query('ALTER TABLE office_cost_events ADD COLUMN cost_source TEXT');
      expect((await readStoreCatalog(t.db)).costEvents).toEqual({ turnId: true, costSource: true, fractions });
      // R5-3: the turns' window reads task_session_turns.started_at
      await t.db.query('ALTER TABLE task_session_turns ADD COLUMN started_at TEXT');
      expect((await readStoreCatalog(t.db)).turns).toEqual({ startedAt: true });
      // an index whose first two columns are not (task_session_id, created_at) is not it
      await t.db.query('CREATE INDEX other_order ON task_session_messages (created_at, task_session_id)');
      await t.db.query('CREATE INDEX one_column ON task_session_messages (task_session_id)');
      expect((await readStoreCatalog(t.db)).sessionCreatedIndex).toBe(false);
      // a partial one is not it either
      await t.db.query(
        "CREATE INDEX partial_one ON task_session_messages (task_session_id, created_at) WHERE type = 'message'",
      );
      expect((await readStoreCatalog(t.db)).sessionCreatedIndex).toBe(false);
      await t.db.query('CREATE INDEX by_session ON task_session_messages (task_session_id, created_at, id)');
      expect((await readStoreCatalog(t.db)).sessionCreatedIndex).toBe(true);
    });

    it('R3-7, R5-3: turns are read only from a task_session_turns with both id and task_session_id', async () => {
      // renamed, not dropped: other host tables reference it on PostgreSQL
      await t.db.query('ALTER TABLE task_session_turns RENAME TO host_turns');
      expect((await readStoreCatalog(t.db)).turns).toBeUndefined();
      await t.db.query('CREATE TABLE task_session_turns (id TEXT PRIMARY KEY, started_at TEXT)');
      expect((await readStoreCatalog(t.db)).turns).toBeUndefined();
      await t.db.query('DROP TABLE task_session_turns');
      await t.db.query('CREATE TABLE task_session_turns (task_session_id TEXT, started_at TEXT)');
      expect((await readStoreCatalog(t.db)).turns).toBeUndefined();
      await t.db.query('ALTER TABLE task_session_turns ADD COLUMN id TEXT');
      expect((await readStoreCatalog(t.db)).turns).toEqual({ startedAt: true });
    });

    it('R3-3: a store without kandev_meta or without our table was never migrated: the error says to run migrate', async () => {
      await t.db.query('DROP TABLE kandev_meta');
      const missingMeta = (await readStoreCatalog(t.db).catch((e: unknown) => e)) as ReportStoreError;
      expect(missingMeta).toBeInstanceOf(ReportStoreError);
      expect(missingMeta.message).toBe(
        'the store has no kandev_meta table: run `subagent-context migrate` against it first (it creates the table and backfills the history)',
      );
      expect(missingMeta.object).toBe('kandev_meta');
      expect(missingMeta.name).toBe('ReportStoreError');
    });

    it('R3-3: a store without task_sessions is not a host store: the error says where to point', async () => {
      // our table's foreign key names task_sessions: PostgreSQL drops it with the table only by CASCADE
      const cascade = t.db.dialect.name === 'postgres' ? ' CASCADE' : '';
      await t.db.query('DROP TABLE task_session_messages');
      await t.db.query('DROP TABLE task_session_turns');
      await t.db.query(`DROP TABLE task_sessions${cascade}`);
      const error = (await readStoreCatalog(t.db).catch((e: unknown) => e)) as ReportStoreError;
      expect(error).toBeInstanceOf(ReportStoreError);
      expect(error.message).toBe(
        'the store has no task_sessions table: this is not a host store; point --database-url (or DATABASE_URL) at the host database',
      );
      expect(error.object).toBe('task_sessions');
    });
  });

  describe('minimal host schema, not migrated', () => {
    const t = useTestDatabase(target, { subagentTable: false });

    it('R3-3: without task_session_subagents the error names it and says to run migrate', async () => {
      const error = (await readStoreCatalog(t.db).catch((e: unknown) => e)) as ReportStoreError;
      expect(error.message).toBe(
        'the store has no task_session_subagents table: run `subagent-context migrate` against it first (it creates the table and backfills the history)',
      );
      expect(error.object).toBe('task_session_subagents');
    });
  });

  describe("the host's real DDL", () => {
    const t = useTestDatabase(target, { fixture: 'host', subagentTable: false });

    it("R3-3, R3-7, R4-12: the host's schema has titles, session starts, the ledger with turn_id and cost_source, turns with started_at and idx_messages_session_created", async () => {
      expect(await readStoreCatalog(t.db)).toEqual({
        taskTitle: true,
        sessionStartedAt: true,
        costEvents: { turnId: true, costSource: true, fractions },
        turns: { startedAt: true },
        sessionCreatedIndex: true,
        // no table of ours here (subagentTable: false), so no usage table either (R6-5)
        usage: false,
      });
    });

    it.runIf(target !== 'sqlite')(
      'issue 57 #19: a cost column of numeric, real or double precision is read with fractions (rounded per event); one of another type is refused, named',
      async () => {
        for (const type of ['numeric', 'real', 'double precision']) {
          await t.db.query(`ALTER TABLE office_cost_events ALTER COLUMN cost_subcents TYPE ${type}`);
          expect((await readStoreCatalog(t.db)).costEvents).toEqual({
            turnId: true,
            costSource: true,
            fractions: true,
          });
        }
        await t.db.query('ALTER TABLE office_cost_events ALTER COLUMN cost_subcents TYPE bigint');
        expect((await readStoreCatalog(t.db)).costEvents).toEqual({ turnId: true, costSource: true, fractions: false });
        await t.db.query('ALTER TABLE office_cost_events ALTER COLUMN cost_subcents TYPE text');
        const error = (await readStoreCatalog(t.db).catch((e: unknown) => e)) as ReportStoreError;
        expect(error).toBeInstanceOf(ReportStoreError);
        expect(error.message).toMatch(/^office_cost_events\.cost_subcents is of type text on this store: /);
        expect(error.object).toBe('office_cost_events.cost_subcents');
      },
    );
  });
});
