import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../lib/db/database.js';
import type { StoredWrite, SubagentWrite } from '../../lib/row.js';
import type { Micros } from '../../lib/time.js';
import { hostDriverInstant } from '../../local/host-fixtures.js';

/**
 * The host's own live upsert, verbatim but for placeholders (kandev's upsertSubagentContextSQL in
 * task/repository/sqlite/subagent_context.go): last write wins, fill-forward, `updated_at` from its
 * clock at its write; it knows nothing of `last_observed_at` (NULL on the rows it creates).
 */
export const HOST_UPSERT = `INSERT INTO task_session_subagents (
  id, task_session_id, task_id, turn_id, tool_call_id, agent_execution_id, parent_tool_call_id,
  subagent_type, description, agent_id, child_session_id, model,
  agent_status, tool_status, is_async, total_tokens, tool_use_count,
  duration_ms, source, observed_at, settled_at, updated_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
ON CONFLICT (task_session_id, agent_execution_id, tool_call_id) DO UPDATE SET
  turn_id = COALESCE(task_session_subagents.turn_id, excluded.turn_id),
  parent_tool_call_id = COALESCE(excluded.parent_tool_call_id, task_session_subagents.parent_tool_call_id),
  subagent_type = COALESCE(excluded.subagent_type, task_session_subagents.subagent_type),
  description = COALESCE(excluded.description, task_session_subagents.description),
  agent_id = COALESCE(excluded.agent_id, task_session_subagents.agent_id),
  child_session_id = COALESCE(excluded.child_session_id, task_session_subagents.child_session_id),
  model = COALESCE(excluded.model, task_session_subagents.model),
  agent_status = COALESCE(excluded.agent_status, task_session_subagents.agent_status),
  tool_status = CASE
    WHEN task_session_subagents.settled_at IS NOT NULL THEN task_session_subagents.tool_status
    ELSE COALESCE(excluded.tool_status, task_session_subagents.tool_status)
  END,
  is_async = CASE WHEN excluded.is_async = 1 THEN 1 ELSE task_session_subagents.is_async END,
  total_tokens = COALESCE(excluded.total_tokens, task_session_subagents.total_tokens),
  tool_use_count = COALESCE(excluded.tool_use_count, task_session_subagents.tool_use_count),
  duration_ms = COALESCE(excluded.duration_ms, task_session_subagents.duration_ms),
  settled_at = COALESCE(task_session_subagents.settled_at, excluded.settled_at),
  updated_at = excluded.updated_at`;

/**
 * One frame written the way the host's orchestrator writes it (UpsertSubagentContext). The host
 * stamps observed_at, settled_at and updated_at from its clock at the write, so `w.observed_at` is
 * that instant here (its observation is its write). A text instant is stored verbatim (say, with
 * the host's nanosecond digits on SQLite; on PostgreSQL as the host's pgx driver stores it, the
 * digits beyond the microsecond truncated: local/host-fixtures.ts hostDriverInstant); `updatedAt`
 * defaults to the observation.
 */
export async function hostUpsert(
  db: Queryable,
  w: SubagentWrite,
  instants: { observedAt?: string; updatedAt?: Micros } = {},
): Promise<void> {
  const at = (us: bigint | null) => (us === null ? null : db.dialect.encodeTimestamp(us));
  const hostText =
    instants.observedAt === undefined ? undefined : hostDriverInstant(db.dialect.name, instants.observedAt);
  const observedAt = hostText ?? at(w.observed_at);
  await db.query(HOST_UPSERT, [
    randomUUID(),
    w.task_session_id,
    w.task_id,
    w.turn_id,
    w.tool_call_id,
    w.agent_execution_id,
    w.parent_tool_call_id,
    w.subagent_type,
    w.description,
    w.agent_id,
    w.child_session_id,
    w.model,
    w.agent_status,
    w.tool_status,
    w.is_async,
    w.total_tokens,
    w.tool_use_count,
    w.duration_ms,
    w.source,
    observedAt,
    w.settled_at === null ? null : (hostText ?? at(w.settled_at)),
    hostText ?? at(instants.updatedAt ?? w.observed_at),
  ]);
}

const REPLACED_BY_HOST = [
  'parent_tool_call_id',
  'subagent_type',
  'description',
  'agent_id',
  'child_session_id',
  'model',
  'agent_status',
  'total_tokens',
  'tool_use_count',
  'duration_ms',
] as const;

/**
 * What HOST_UPSERT leaves when the host's write `w` (at its instant `w.observed_at`) lands on
 * `stored` (undefined: no row yet): the host's rules in memory, a model for property tests.
 */
export function hostMerge(stored: StoredWrite | undefined, w: SubagentWrite): StoredWrite {
  if (!stored) return { ...w, last_observed_at: null, updated_at: w.observed_at };
  const merged: StoredWrite = { ...stored, updated_at: w.observed_at };
  for (const name of REPLACED_BY_HOST) (merged as Record<string, unknown>)[name] = w[name] ?? stored[name];
  merged.turn_id = stored.turn_id ?? w.turn_id;
  merged.tool_status = stored.settled_at !== null ? stored.tool_status : (w.tool_status ?? stored.tool_status);
  merged.is_async = w.is_async === 1 ? 1 : stored.is_async;
  merged.settled_at = stored.settled_at ?? w.settled_at;
  return merged;
}
