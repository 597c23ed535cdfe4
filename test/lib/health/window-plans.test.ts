import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { windowCollisionsSql, windowExcessSql, windowShortfallSql } from '../../../lib/health/queries.js';
import { formatCanonical } from '../../../lib/time.js';
import { seedSession } from '../../support/frames.js';
import { POSTGRES_TARGETS, useTestDatabase } from '../../support/targets.js';
import { at } from './seed.js';

/*
 * Issue 26: the scheduled window's probes stay per-row index probes after a fresh ANALYZE that
 * knows the recent traffic (autovacuum's), on the host's real schema. Before the fence PostgreSQL
 * planned them as hash semi/anti joins over every row since capture_since.
 */
describe.each(POSTGRES_TARGETS)('the window statements after a fresh ANALYZE on %s', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });

  it('issue 26: excess, collisions and shortfall probe per row (SubPlan), never a hash join over the history', async () => {
    await seedSession(t.db);
    // 20,000 rows observed over the window, in one statement.
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, observed_at, updated_at, last_observed_at)
       SELECT 'r' || g, 's1', 't1', 'c' || (g % 15000), 'e' || (g / 15000), TIMESTAMP '2026-08-12 12:00:00' + g * INTERVAL '100 ms',
         TIMESTAMP '2026-08-12 12:00:00', NULL FROM generate_series(1, 20000) g`,
    );
    await t.db.query('ANALYZE');
    const params = [at('2026-08-12T12:00:00Z'), at('2026-08-12T12:00:00Z'), at('2026-08-12T13:00:00Z')].map(
      formatCanonical,
    );
    for (const sql of [
      windowCollisionsSql(t.db.dialect),
      windowExcessSql(t.db.dialect),
      windowShortfallSql(t.db.dialect),
    ]) {
      const plan = (await t.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params))
        .map((row) => row['QUERY PLAN'])
        .join('\n');
      expect(plan).not.toMatch(/Hash (Semi|Anti|Right Semi|Right Anti) Join|Merge (Semi|Anti) Join/);
      expect(plan).toMatch(/SubPlan/);
    }
  });
});
