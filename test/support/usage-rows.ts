import type { Queryable } from '../../lib/db/database.js';
import type { RunUsage } from '../../lib/producer/usage/run-usage.js';
import { USAGE_TABLE } from '../../lib/store/usage-table.js';
import { parseRfc3339 } from '../../lib/time.js';

/** The subagent a usage row belongs to (the usage table's key); the execution defaults as subagent-rows.ts's rows do. */
export interface UsageKey {
  task_session_id: string;
  agent_execution_id?: string;
  tool_call_id: string;
}

/** When a test does not say: the instant the usage is as of. */
const DEFAULT_OBSERVED_AT = '2026-08-12T13:00:00.000000Z';

/**
 * Stores one row of task_session_subagent_usage (R6-2) with a plain INSERT, as test data: the
 * fields given (a field left out is NULL: not reported), `complete` as 0/1, `observed_at` in the
 * dialect's own encoding. Not the ingest's writer: tests of the read side need rows of any shape.
 */
export async function insertUsage(
  db: Queryable,
  key: UsageKey,
  fields: Partial<RunUsage & { observed_at: string }>,
): Promise<void> {
  const d = db.dialect;
  const { observed_at = DEFAULT_OBSERVED_AT, complete, ...rest } = fields;
  const observed = parseRfc3339(observed_at);
  if (observed === undefined) throw new Error(`test usage row: bad instant ${observed_at}`);
  const values: [string, unknown][] = [
    ['task_session_id', key.task_session_id],
    ['agent_execution_id', key.agent_execution_id ?? 'e1'],
    ['tool_call_id', key.tool_call_id],
    ...Object.entries(rest).filter(([, v]) => v !== undefined),
    ...(complete === undefined ? [] : [['complete', complete === null ? null : complete ? 1 : 0] as [string, unknown]]),
  ];
  const placeholders = values.map((_, i) => `$${i + 1}`);
  placeholders.push(d.timestampParam(values.length + 1));
  await db.query(
    `INSERT INTO ${USAGE_TABLE} (${[...values.map(([c]) => c), 'observed_at'].join(', ')}) VALUES (${placeholders.join(', ')})`,
    [...values.map(([, v]) => v), d.encodeTimestamp(observed)],
  );
}
