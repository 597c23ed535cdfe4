import { TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { QUALIFYING, subagentMessages } from '../store/messages.js';
import { MISSING_SAMPLE_SIZE } from './report.js';

/*
 * The health statements (docs/health.md). Each anti-join is one EXCEPT over distinct
 * (task_session_id, tool_call_id) keys: EXCEPT is directed and distinct by definition, and both
 * dialects run it as one hash/sort pass instead of a correlated probe per key (the host has no
 * index on the metadata's tool_call_id).
 */

/**
 * Qualifying message keys created in [$1 capture_since, $2 cutoff) with no row observed at or
 * after $1 (any execution). Returns up to MISSING_SAMPLE_SIZE keys, each carrying the total count.
 */
export function shortfallSql(dialect: Dialect): string {
  const since = dialect.timestampParam(1);
  const cutoff = dialect.timestampParam(2);
  const created = dialect.comparable('sm_all.created_at');
  return `SELECT task_session_id, tool_call_id, COUNT(*) OVER () AS total FROM (
  SELECT sm_all.task_session_id, sm_all.meta_tool_call_id AS tool_call_id FROM ${subagentMessages(dialect)}
  WHERE ${QUALIFYING} AND ${created} >= ${since} AND ${created} < ${cutoff}
  EXCEPT
  SELECT task_session_id, tool_call_id FROM ${TABLE} WHERE ${dialect.comparable('observed_at')} >= ${since}
) missing
ORDER BY task_session_id, tool_call_id
LIMIT ${MISSING_SAMPLE_SIZE}`;
}

/** Row keys with no subagent message at all (kind only, no identity filter on the message side). */
export function excessSql(dialect: Dialect): string {
  return `SELECT COUNT(*) AS excess FROM (
  SELECT task_session_id, tool_call_id FROM ${TABLE}
  EXCEPT
  SELECT sm_all.task_session_id, sm_all.meta_tool_call_id FROM ${subagentMessages(dialect)}
  WHERE sm_all.kind = 'subagent_task'
) unexplained`;
}

/** Collisions (rows − distinct keys) and MAX(observed_at) scoped to $1 capture_since, together. */
export function rowFactsSql(dialect: Dialect): string {
  const observed = dialect.comparable('observed_at');
  return `SELECT
  (SELECT COUNT(*) FROM ${TABLE}) AS row_count,
  (SELECT COUNT(*) FROM (SELECT DISTINCT task_session_id, tool_call_id FROM ${TABLE}) k) AS key_count,
  (SELECT MAX(${observed}) FROM ${TABLE} WHERE ${observed} >= ${dialect.timestampParam(1)}) AS last_observed`;
}
