import type { Database } from '../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../lib/health/checkpoint.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { CAPTURE_SINCE_KEY } from '../../lib/store/meta.js';
import { writeBatch } from '../../lib/store/write.js';
import { parseRfc3339 } from '../../lib/time.js';
import { generateHostStore, type HostStoreSummary } from '../../local/generate-host-store.js';
import type { HostFixtureName } from '../../local/host-fixtures.js';
import { addCostEvent } from './cost-events.js';
import { write } from './frames.js';
import { hostUpsert } from './host-writer.js';
import { insertRows } from './subagent-rows.js';
import { insertUsage } from './usage-rows.js';

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

/** Issue 58 #17: ids longer than any terminal column, so a narrow table must break them. */
export const LONG_TASK = `task-${'0123456789abcdef'.repeat(5)}-end`;
export const LONG_SESSION = `session-${'fedcba9876543210'.repeat(4)}-end`;

/**
 * `buildReportStore` with what makes a terminal table wide (issue 58 #17): a task and a session
 * whose ids are longer than a terminal, a long title with CJK in it, a long model name, figures in
 * the billions (tokens, duration, tool uses, cost) and usage rows, so every section of the table
 * (completeness, totals with spend, the fan-out cost with its spend columns, the groups with their
 * title and spend columns) has something in it.
 */
export async function buildWideReportStore(db: Database): Promise<HostStoreSummary> {
  const store = await buildReportStore(db, 'minimal');
  await db.query('UPDATE tasks SET title = $1 WHERE id = $2', [
    `A very long task title that goes on and on 中文の題名も長い ${'and on '.repeat(6)}until the end`,
    'g1-task-00000000',
  ]);
  const row = (tool: string, minute: number) => ({
    task_session_id: LONG_SESSION,
    task_id: LONG_TASK,
    turn_id: `${LONG_SESSION}-turn`,
    tool_call_id: `${tool}-${'c'.repeat(40)}`,
    model: `claude-opus-5-${'x'.repeat(30)}[1m]`,
    total_tokens: 2_000_000_000,
    duration_ms: 1_987_654_321,
    tool_use_count: 1_234_567,
    settled_at: `2026-07-21T12:${String(minute).padStart(2, '0')}:00.000001Z`,
    observed_at: `2026-07-21T12:${String(minute).padStart(2, '0')}:00.000001Z`,
  });
  await insertRows(db, [row('wide-a', 1), row('wide-b', 2)]);
  for (const [tool, cost] of [
    ['wide-a', 123_456_789_012],
    ['wide-b', 98_765_432_109],
  ] as const)
    await insertUsage(
      db,
      { task_session_id: LONG_SESSION, agent_execution_id: 'e1', tool_call_id: `${tool}-${'c'.repeat(40)}` },
      {
        tokens_in: 8_765_432_109,
        tokens_out: 7_654_321_098,
        tokens_cached_read: 6_543_210_987,
        tokens_cached_write: 5_432_109_876,
        tokens_reasoning: 4_321_098_765,
        requests: 3_210_987,
        cost_subcents: cost,
        cost_source: 'provider_reported',
        complete: 1,
        observed_at: '2026-07-21T12:03:00.000001Z',
      },
    );
  await addCostEvent(db, {
    id: `cost-${LONG_SESSION}`,
    session: LONG_SESSION,
    task: LONG_TASK,
    turn: `${LONG_SESSION}-turn`,
    subcents: 2_100_000_000,
    source: 'provider_reported',
    at: '2026-07-21T12:01:30.000001Z',
  });
  return store;
}
