import type { Dialect } from '../db/dialect/dialect.js';

/**
 * The host's subagent messages, read through the malformed-document guard (docs/migrate.md#5-malformed-metadata, docs/health.md): a
 * derived table `m` with every message column plus `doc` (parsed metadata or NULL), `kind` and
 * `meta_tool_call_id`. Both the backfill and the health check read messages only through this.
 */
export function messagesWithMetadata(dialect: Dialect): string {
  const doc = dialect.jsonDocument('msg.metadata');
  return `(SELECT msg.*, ${doc} AS doc FROM task_session_messages msg) parsed`;
}

/** Columns to select from `messagesWithMetadata` (aliased `parsed`). */
export function metadataColumns(dialect: Dialect): string {
  return [
    `${dialect.jsonText('parsed.doc', '$.normalized.kind')} AS kind`,
    `${dialect.jsonText('parsed.doc', '$.tool_call_id')} AS meta_tool_call_id`,
  ].join(', ');
}

/**
 * `SELECT … FROM` every message that describes a subagent invocation (kind = subagent_task),
 * as a derived table `sm` with `kind`, `meta_tool_call_id`, `doc` and the message's own columns.
 * No identity filter: the health check's excess side needs all of them.
 */
export function subagentMessages(dialect: Dialect): string {
  return `(SELECT parsed.*, ${metadataColumns(dialect)} FROM ${messagesWithMetadata(dialect)}) sm_all`;
}

/**
 * The identity filter of docs/migrate.md#3-the-backfill-transaction / AC-21, AC-21a, applied to `subagentMessages` rows (alias
 * `sm_all`): kind is subagent_task and session, task and tool call id are all non-empty.
 */
export const QUALIFYING =
  `sm_all.kind = 'subagent_task' AND sm_all.task_session_id IS NOT NULL AND sm_all.task_session_id <> '' ` +
  `AND sm_all.task_id IS NOT NULL AND sm_all.task_id <> '' ` +
  `AND sm_all.meta_tool_call_id IS NOT NULL AND sm_all.meta_tool_call_id <> ''`;
