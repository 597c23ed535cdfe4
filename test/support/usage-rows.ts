import type { Queryable } from '../../lib/db/database.js';
import { USAGE_TABLE } from '../../lib/store/usage-table.js';
import { parseRfc3339 } from '../../lib/time.js';

/** A subagent row's key: the usage row joins it on these (task_session_subagents' UNIQUE key). */
export interface UsageKey {
  task_session_id?: string;
  agent_execution_id?: string;
  tool_call_id: string;
}

/**
 * A value as the store holds it: a number, text or NULL bound as a parameter, or `{ sql }`, an SQL
 * literal written as is (a hostile store's values a parameter cannot carry exactly: 2^53 + 1, a
 * REAL in an INTEGER column, text where the dialect's type allows it).
 */
export type StoredValue = number | string | null | { sql: string };

export type UsageFields = Partial<
  Record<
    | 'tokens_in'
    | 'tokens_out'
    | 'tokens_cached_read'
    | 'tokens_cached_write'
    | 'tokens_reasoning'
    | 'requests'
    | 'cost_subcents'
    | 'cost_source'
    | 'model'
    | 'complete',
    StoredValue
  >
> & { observed_at?: string };

/**
 * R6-2's usage row for a subagent row already stored (insertRows; session s1 and execution e1 by
 * default, as there): a plain INSERT into task_session_subagent_usage, as the table holds it
 * whoever wrote it (ingest is one writer; a hostile store is another). Fields not given are NULL.
 */
export async function insertUsage(db: Queryable, key: UsageKey, fields: UsageFields = {}): Promise<void> {
  const d = db.dialect;
  const { observed_at = '2026-08-12T13:00:00.000001Z', ...rest } = fields;
  const us = parseRfc3339(observed_at);
  if (us === undefined) throw new Error(`insertUsage: bad instant ${observed_at}`);
  const columns = ['task_session_id', 'agent_execution_id', 'tool_call_id', ...Object.keys(rest), 'observed_at'];
  const params: unknown[] = [];
  const bind = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const values = [
    bind(key.task_session_id ?? 's1'),
    bind(key.agent_execution_id ?? 'e1'),
    bind(key.tool_call_id),
    ...Object.values(rest).map((v) => (v !== null && typeof v === 'object' ? v.sql : bind(v))),
  ];
  params.push(d.encodeTimestamp(us));
  values.push(d.timestampParam(params.length));
  await db.query(`INSERT INTO ${USAGE_TABLE} (${columns.join(', ')}) VALUES (${values.join(', ')})`, params);
}
