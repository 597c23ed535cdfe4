import { describe, expect, it } from 'vitest';
import { ensureSubagentTable } from '../../lib/store/schema.js';
import { HOST_FIXTURES } from '../../local/host-fixtures.js';
import { emptyIfUnchanged, schemaShape } from './schema-reset.js';
import { POSTGRES_TARGETS, TARGET_FIXTURES, useTestDatabase } from './targets.js';

/**
 * The harness empties the previous test's tables instead of building the schema again only when
 * that gives the same database (issue 50: the database targets stay as they are, only faster).
 * Every change a test could make to the schema must send it back to the DDL.
 */
const SCHEMA_CHANGES: readonly [change: string, ...statements: string[]][] = [
  ['a column added', 'ALTER TABLE task_sessions ADD COLUMN extra TEXT'],
  ['a column dropped', 'ALTER TABLE task_session_subagents DROP COLUMN last_observed_at'],
  ['a default changed', "ALTER TABLE task_session_messages ALTER COLUMN type SET DEFAULT 'x'"],
  ['NOT NULL dropped', 'ALTER TABLE task_sessions ALTER COLUMN task_id DROP NOT NULL'],
  ['a column type changed', 'ALTER TABLE task_sessions ALTER COLUMN task_id TYPE VARCHAR(80)'],
  ['an index added', 'CREATE INDEX extra_idx ON task_sessions (task_id)'],
  ['an index dropped', 'DROP INDEX idx_messages_created_at'],
  ['a table added', 'CREATE TABLE extra (id TEXT)'],
  ['a table dropped', 'DROP TABLE kandev_meta'],
  ['a table renamed', 'ALTER TABLE kandev_meta RENAME TO kandev_meta_old'],
  ['a check constraint', 'ALTER TABLE task_sessions ADD CONSTRAINT extra_check CHECK (id <> task_id)'],
  ['a view', 'CREATE VIEW extra_view AS SELECT id FROM task_sessions'],
  [
    'a trigger',
    `CREATE FUNCTION extra_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no'; END $$`,
    'CREATE TRIGGER extra_refuse BEFORE INSERT ON task_sessions FOR EACH ROW EXECUTE FUNCTION extra_refuse()',
  ],
  [
    'a function replaced',
    `CREATE OR REPLACE FUNCTION subagent_context_json(doc text) RETURNS jsonb LANGUAGE sql AS $b$ SELECT NULL::jsonb $b$`,
  ],
  [
    'a grant revoked and given back',
    'REVOKE SELECT ON task_sessions FROM PUBLIC',
    'GRANT SELECT ON task_sessions TO PUBLIC',
  ],
  ['a table grant', 'GRANT SELECT ON task_sessions TO PUBLIC'],
  ['the schema grant', 'REVOKE CREATE ON SCHEMA public FROM PUBLIC'],
  ['row security', 'ALTER TABLE task_sessions ENABLE ROW LEVEL SECURITY'],
  ['a sequence', 'CREATE SEQUENCE extra_seq'],
  ['a storage option', 'ALTER TABLE task_sessions SET (fillfactor = 50)'],
  ['statistics', 'ANALYZE task_sessions'],
];

describe.each(POSTGRES_TARGETS)('reusing the schema between tests on %s', (name) => {
  const t = useTestDatabase(name);

  it('issue 50: rows alone are emptied, and the schema is then the one the DDL gave', async () => {
    const shape = await schemaShape(t.db);
    await HOST_FIXTURES.minimal.addSession(t.db, 's1', 'task-1');
    await HOST_FIXTURES.minimal.addTurn(t.db, 'turn-1', 's1');
    await t.db.query("INSERT INTO kandev_meta (key, value) VALUES ('capture_since', '2026-01-01')");

    expect(await emptyIfUnchanged(t.db, shape)).toBe(true);

    for (const table of ['task_sessions', 'task_session_turns', 'kandev_meta', 'task_session_subagents']) {
      const rows = await t.db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${table}`);
      expect(rows[0]!.n, table).toBe(0);
    }
    expect(await schemaShape(t.db)).toBe(shape);
  });

  it.each(SCHEMA_CHANGES)(
    'issue 50: %s sends the next test back to the DDL, its rows kept',
    async (_change, ...statements) => {
      const shape = await schemaShape(t.db);
      await HOST_FIXTURES.minimal.addSession(t.db, 's1', 'task-1');
      for (const statement of statements) await t.db.query(statement);

      expect(await emptyIfUnchanged(t.db, shape)).toBe(false);
      const rows = await t.db.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM task_sessions');
      expect(rows[0]!.n).toBe(1);
    },
  );

  it('issue 50: an advanced sequence sends the next test back to the DDL', async () => {
    await t.db.query('CREATE SEQUENCE extra_seq');
    const shape = await schemaShape(t.db);
    await t.db.query("SELECT nextval('extra_seq')");

    expect(await emptyIfUnchanged(t.db, shape)).toBe(false);
  });
});

describe.each(TARGET_FIXTURES)('each test starts from an empty store on %s (%s host)', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  let shapeOfFirst: string | undefined;

  // The two tests run in this order in one file: the second sees what the first left.
  it('issue 50: a test writes rows', async () => {
    await HOST_FIXTURES[fixture].addSession(t.db, 's1', 'task-1');
    if (name !== 'sqlite') shapeOfFirst = await schemaShape(t.db);
  });

  it('issue 50: the next test of the same setup sees none of them, in the same schema', async () => {
    const rows = await t.db.query<{ n: number }>('SELECT COUNT(*) AS n FROM task_sessions');
    expect(Number(rows[0]!.n)).toBe(0);
    if (name !== 'sqlite') expect(await schemaShape(t.db)).toBe(shapeOfFirst);
  });
});

describe.each(POSTGRES_TARGETS)('a schema the DDL builds again on %s', (name) => {
  const t = useTestDatabase(name);

  it('issue 50: a test drops our table', async () => {
    await t.db.query('DROP TABLE task_session_subagents');
  });

  it('issue 50: the next test has it again, as the DDL creates it', async () => {
    const shape = await schemaShape(t.db);
    await ensureSubagentTable(t.db);
    expect(await schemaShape(t.db)).toBe(shape);
  });
});
