import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { readAll } from '../../../lib/store/read.js';
import { ensureSubagentTable } from '../../../lib/store/schema.js';
import { writeBatch } from '../../../lib/store/write.js';
import { KANDEV_SUBAGENT_INDEXES, KANDEV_SUBAGENT_TABLE } from '../../../local/kandev-schema.js';
import { indexNames, tableShape } from '../../support/catalog.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/** The table as version 0.1 of this project created it: BIGINT metrics, a CHECK, other index names. */
const V01_TABLE = `CREATE TABLE IF NOT EXISTS task_session_subagents (
  id TEXT NOT NULL PRIMARY KEY,
  task_session_id TEXT NOT NULL REFERENCES task_sessions(id) ON DELETE CASCADE,
  task_id TEXT NOT NULL,
  turn_id TEXT,
  tool_call_id TEXT NOT NULL,
  agent_execution_id TEXT NOT NULL,
  parent_tool_call_id TEXT,
  subagent_type TEXT,
  description TEXT,
  agent_id TEXT,
  child_session_id TEXT,
  model TEXT,
  agent_status TEXT,
  tool_status TEXT,
  is_async INTEGER NOT NULL DEFAULT 0,
  total_tokens BIGINT,
  tool_use_count BIGINT,
  duration_ms BIGINT,
  source TEXT NOT NULL DEFAULT 'live' CHECK (source IN ('live', 'backfill')),
  observed_at TIMESTAMP NOT NULL,
  settled_at TIMESTAMP,
  updated_at TIMESTAMP NOT NULL,
  UNIQUE (task_session_id, agent_execution_id, tool_call_id)
)`;
const V01_INDEXES = ['task_session_id', 'task_id', 'turn_id'].map(
  (column) => `CREATE INDEX IF NOT EXISTS idx_${TABLE}_${column} ON ${TABLE} (${column})`,
);
const HOST_INDEXES = ['idx_subagents_session_id', 'idx_subagents_task_id', 'idx_subagents_turn_id'];

/** The nullable column R2-7 adds on top of the host's shape (docs/merge.md). */
const OURS_ONLY = ['last_observed_at'];
/** The index on observed_at the scheduled health window reads rows through (docs/health.md): ours only. */
const OUR_INDEXES = ['idx_subagents_observed_at'];
const shapeOpts = { ignoreColumns: OURS_ONLY, ignoreIndexes: OUR_INDEXES };

const withoutDefaults = (columns: unknown[]) =>
  columns.map((c) =>
    Object.fromEntries(Object.entries(c as object).filter(([k]) => k !== 'column_default' && k !== 'dflt_value')),
  );
const withoutOurs = (row: object) => Object.fromEntries(Object.entries(row).filter(([k]) => !OURS_ONLY.includes(k)));

async function runAll(db: { query(sql: string): Promise<unknown> }, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await db.query(statement);
}

describe.each(TARGETS)('the table and the host on %s (R2-10)', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  const hostShape = async () => {
    await runAll(t.db, [KANDEV_SUBAGENT_TABLE, ...KANDEV_SUBAGENT_INDEXES]);
    const shape = await tableShape(t.db, TABLE);
    await t.db.query(`DROP TABLE ${TABLE}`);
    return shape;
  };

  it("R2-10: migrate creates exactly the host's table: columns, types, NULLs, DEFAULTs, keys and indexes", async () => {
    const host = await hostShape();
    await ensureSubagentTable(t.db);
    expect(await tableShape(t.db, TABLE, shapeOpts)).toEqual(host);
  });

  it("R2-10: host first — migrate on the host's table adds no index and changes no column", async () => {
    await runAll(t.db, [KANDEV_SUBAGENT_TABLE, ...KANDEV_SUBAGENT_INDEXES]);
    const before = await tableShape(t.db, TABLE);
    await runMigration(t.db);
    await runMigration(t.db);
    expect(await tableShape(t.db, TABLE, shapeOpts)).toEqual(before);
    expect(await indexNames(t.db, TABLE, OUR_INDEXES)).toEqual(HOST_INDEXES);
  });

  it("R2-10: us first — the host's own DDL afterwards finds everything it would create", async () => {
    await runMigration(t.db);
    const ours = await tableShape(t.db, TABLE);
    await runAll(t.db, [KANDEV_SUBAGENT_TABLE, ...KANDEV_SUBAGENT_INDEXES]);
    expect(await tableShape(t.db, TABLE)).toEqual(ours);
    expect(await indexNames(t.db, TABLE, OUR_INDEXES)).toEqual(HOST_INDEXES);
  });

  it('R2-10: a table from version 0.1 keeps its rows and columns, gets the host index names, never two indexes per column', async () => {
    await runAll(t.db, [V01_TABLE, ...V01_INDEXES]);
    await seedSession(t.db);
    // Rows as version 0.1 wrote them (it had no last_observed_at; R2-7's schema step adds it).
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, subagent_type, total_tokens, observed_at, updated_at)
       VALUES ('r1', 's1', 't1', 'c1', 'e1', 'security-reviewer', 91234, '2026-08-12 13:24:58.123456', '2026-08-12 13:24:59'),
              ('r2', 's1', 't1', 'c2', 'e1', 'security-reviewer', NULL, '2026-08-12 13:24:58.123456', '2026-08-12 13:24:59')`,
    );
    const stored = () => t.db.query(`SELECT * FROM ${TABLE} ORDER BY id`);
    const rows = await stored();
    const columnsBefore = (await tableShape(t.db, TABLE)).columns;

    await runMigration(t.db);
    await runMigration(t.db);
    // The host's own boot afterwards: its CREATE INDEX IF NOT EXISTS now finds its names.
    await runAll(t.db, [KANDEV_SUBAGENT_TABLE, ...KANDEV_SUBAGENT_INDEXES]);

    expect(await indexNames(t.db, TABLE, OUR_INDEXES)).toEqual(HOST_INDEXES);
    // Types and NULLs unchanged (no rebuild); only a missing DEFAULT may have been added (below).
    expect(withoutDefaults((await tableShape(t.db, TABLE, shapeOpts)).columns)).toEqual(withoutDefaults(columnsBefore));
    expect((await stored()).map(withoutOurs)).toEqual(rows.map(withoutOurs));
    // PostgreSQL gains the host's DEFAULT 'unknown' (catalog only), so the host's own style of insert
    // works there too; SQLite can add a DEFAULT only by rebuilding the table, which migrate never does.
    const hostStyle = t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, observed_at, updated_at)
       VALUES ('h1', 's1', 't1', 'h1', '2026-08-12 13:24:58', '2026-08-12 13:24:58')`,
    );
    if (name === 'sqlite') await expect(hostStyle).rejects.toThrow(/agent_execution_id/);
    else await hostStyle;
    // Still writable through the normal path, BIGINT columns and all.
    await writeBatch(t.db, [write({ tool_call_id: 'c3', subagent_task: { total_tokens: 2_147_483_647 } })]);
    expect((await readAll(t.db)).find((r) => r.tool_call_id === 'c3')?.total_tokens).toBe(2_147_483_647);
  });

  it('R2-10: an index an operator already put on a column is reused, not doubled', async () => {
    await runAll(t.db, [KANDEV_SUBAGENT_TABLE, `CREATE INDEX ops_turns ON ${TABLE} (turn_id)`]);
    await runMigration(t.db);
    expect(await indexNames(t.db, TABLE, OUR_INDEXES)).toEqual([
      'idx_subagents_session_id',
      'idx_subagents_task_id',
      'ops_turns',
    ]);
  });
});
