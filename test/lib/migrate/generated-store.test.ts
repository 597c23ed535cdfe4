import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { formatKey } from '../../../lib/time.js';
import { generateHostStore } from '../../../local/generate-host-store.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

describe.each(TARGET_FIXTURES)('backfill of a generated host store on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture, subagentTable: false });

  it('AC-21, AC-21a, AC-21b, AC-23b: one row per qualifying key, whatever the store holds', async () => {
    const summary = await generateHostStore(t.db, { messages: 4_000, seed: 7, fixture });
    // the generator's own promises, so the comparison below means something
    expect(summary.messages).toBe(4_000);
    expect(summary.supersededMessages).toBeGreaterThan(0);
    expect(summary.identityless).toBeGreaterThan(0);
    expect(summary.malformedTotal).toBeGreaterThanOrEqual(7);
    expect(summary.nested).toBe(1);
    // the real host's store cannot hold a document that is not JSON, so none is generated there
    if (fixture === 'host') expect(summary.malformed).toMatchObject({ empty: 0, invalid_json: 0 });

    const report = await runMigration(t.db);
    expect(report).toMatchObject({
      backfill: 'completed',
      inserted: summary.qualifyingKeys,
      matched: summary.qualifyingMessages,
      backfillThrough: formatKey(summary.newestQualifyingCreatedAt!),
    });
    const byStatus = await t.db.query<{ agent_status: string | null; n: number | string }>(
      `SELECT agent_status, COUNT(*) AS n FROM ${TABLE} GROUP BY agent_status`,
    );
    expect(Object.fromEntries(byStatus.map((r) => [r.agent_status ?? '(absent)', Number(r.n)]))).toEqual(
      summary.byStatus,
    );
    const [nested] = await t.db.query<{ n: number | string }>(`SELECT COUNT(parent_tool_call_id) AS n FROM ${TABLE}`);
    expect(Number(nested?.n)).toBe(summary.nested);
  });

  it('AC-7: no async_launched row of a generated store stores a metric', async () => {
    await generateHostStore(t.db, { messages: 2_000, seed: 3, fixture });
    await runMigration(t.db);
    const [launched] = await t.db.query<{ rows: number | string; metrics: number | string }>(
      `SELECT COUNT(*) AS rows, COUNT(total_tokens) + COUNT(duration_ms) + COUNT(tool_use_count) AS metrics FROM ${TABLE} WHERE agent_status = 'async_launched'`,
    );
    expect(Number(launched?.rows)).toBeGreaterThan(100);
    expect(Number(launched?.metrics)).toBe(0);
  });
});
