import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { buildReport } from '../../../lib/report/build.js';
import { runCliCaptured } from '../../support/cli-run.js';
import { buildReportStore } from '../../support/report-store.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/** The whole database: its schema objects and every row of every table, in a stable order. */
async function dump(db: Queryable): Promise<Record<string, unknown>> {
  const sqlite = db.dialect.name === 'sqlite';
  const schema = sqlite
    ? await db.query('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name')
    : await db.query(
        `SELECT 'column' AS kind, table_name AS name, column_name || ' ' || data_type || ' ' || COALESCE(column_default, '') AS def
         FROM information_schema.columns WHERE table_schema = current_schema()
         UNION ALL SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
         UNION ALL SELECT 'function', p.proname, pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()
         ORDER BY 1, 2, 3`,
      );
  const tables = sqlite
    ? await db.query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    : await db.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
      );
  const rows: Record<string, string[]> = {};
  for (const { name } of tables) {
    rows[name] = (await db.query(`SELECT * FROM ${name}`)).map((r) => JSON.stringify(r)).sort();
  }
  return { schema, rows };
}

describe.each(TARGET_FIXTURES)('report is read-only on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  it('R3-5, R3-8: every output of report leaves the whole database as it was (schema and rows)', async () => {
    await buildReportStore(t.db, fixture);
    const before = await dump(t.db);
    expect(Object.keys(before.rows as object)).toContain('task_session_subagents');
    const env = t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {};
    for (const flags of [
      [],
      ['--json', '--trees', '5'],
      ['--csv', '--by', 'task'],
      ['--by', 'day', '--since', '2026-07-01T00:00:00Z'],
    ]) {
      const run = await runCliCaptured(['report', '--database-url', t.url, ...flags], env);
      expect(run.code, run.stderr).toBe(0);
    }
    for (const by of ['task', 'session', 'turn', 'type', 'model', 'day'] as const) {
      await buildReport(t.db, { by, pageData: true, trees: 2, graceSeconds: 0 });
    }
    expect(await dump(t.db)).toEqual(before);
  }, 120_000);
});
