import type { Database } from '../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../lib/health/checkpoint.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { CAPTURE_SINCE_KEY } from '../../lib/store/meta.js';
import { writeBatch } from '../../lib/store/write.js';
import { parseRfc3339 } from '../../lib/time.js';
import { generateHostStore, type HostStoreSummary } from '../../local/generate-host-store.js';
import type { HostFixtureName } from '../../local/host-fixtures.js';
import { write } from './frames.js';
import { hostUpsert } from './host-writer.js';

/**
 * A store the report reads the same way on every dialect (R3-5): the generated host store with
 * its cost ledger, backfilled by our migrate, fixed activation keys and checkpoint, and live rows
 * written by our writer and by the host's own upsert (R3-1) — nothing that depends on the clock
 * of the run, so two targets hold the same data.
 */
export async function buildReportStore(db: Database, fixture: HostFixtureName): Promise<HostStoreSummary> {
  const store = await generateHostStore(db, { messages: 2_000, fixture, costs: true });
  await runMigration(db);
  await db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [
    '2026-07-20T00:00:00.000000000Z',
    CAPTURE_SINCE_KEY,
  ]);
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [
    CHECKPOINT_KEY,
    '2026-07-25T00:00:00.000000000Z',
  ]);
  const session = { task_session_id: 'g1-ses-00000001', task_id: 'g1-task-00000000', turn_id: 'g1-turn-00000007' };
  const at = (minute: number) => `2026-07-21T10:${String(minute).padStart(2, '0')}:00.123456Z`;
  await writeBatch(
    db,
    [
      write({
        ...session,
        tool_call_id: 'live-a',
        execution_id: 'e-1',
        observed_at: at(1),
        subagent_task: { model: 'claude-opus-5[1m]', total_tokens: 1234, duration_ms: 5_000, tool_use_count: 0 },
      }),
      write({
        ...session,
        tool_call_id: 'live-b',
        execution_id: 'e-1',
        parent_tool_call_id: 'live-a',
        observed_at: at(2),
        tool_status: 'failed',
      }),
      write({
        ...session,
        tool_call_id: 'live-c',
        execution_id: '',
        observed_at: at(3),
        subagent_task: { is_async: true, status: 'async_launched' },
      }),
    ],
    parseRfc3339('2026-07-21T11:00:00Z')!,
  );
  await hostUpsert(
    db,
    write({
      ...session,
      tool_call_id: 'host-a',
      execution_id: 'e-2',
      observed_at: at(4),
      tool_status: 'completed',
      subagent_task: { total_tokens: 99, duration_ms: 61_000, model: 'gpt-5-codex' },
    }),
  );
  await hostUpsert(
    db,
    write({
      ...session,
      tool_call_id: 'host-a',
      execution_id: 'e-2',
      observed_at: at(5),
      subagent_task: { tool_use_count: 3 },
    }),
  );
  return store;
}
