import type { Dialect } from '../db/dialect/dialect.js';
import { cleanJsonText, identityOkSql, position } from '../text.js';

/**
 * The text without which no value read matters: a subagent message's kind spells `subagent_task`,
 * unless one of its letters is escaped (`\u00…`, never written by the Go host). Elsewhere a
 * repeated key changes nothing read, so it is not looked for (SQLite's test costs).
 */
/**
 * (R2-1 parity: a repeated key reads as its last value on both dialects, as JSON.parse, the ingest
 * path's reading, reads it.)
 */
const mayBeSubagent = (d: Dialect, text: string) =>
  `(${position(d, text, "'subagent_task'")} > 0 OR ${position(d, text, "'\\u00'")} > 0)`;

/**
 * The host's subagent messages, read through the malformed-document guard (docs/migrate.md#5-malformed-metadata, docs/health.md): a
 * derived table `m` with every message column plus `doc` (parsed metadata or NULL), `kind` and
 * `meta_tool_call_id`. Both the backfill and the health check read messages only through this.
 */
export function messagesWithMetadata(dialect: Dialect, read: MessageRead = {}): string {
  // R2-1: `\u0000` and unpaired surrogate escapes cleaned first, so PostgreSQL's jsonb does not
  // reject (and drop) the message, and SQLite reads no text that is not UTF-8.
  const document = (text: string) => dialect.jsonDocument(text, { relevant: mayBeSubagent(dialect, text) });
  const cleaned = cleanJsonText(dialect, 'msg.metadata');
  if (!read.fenced) {
    return `(SELECT msg.*, ${document(cleaned)} AS doc FROM task_session_messages msg) parsed`;
  }
  const where = read.where === undefined ? '' : ` WHERE ${read.where}`;
  // The cleaned text once per message (behind its own fence), then the document from that column.
  const texts = `(SELECT msg.*, ${cleaned} AS clean_metadata FROM task_session_messages msg${where} ${dialect.fence}) msg`;
  return `(SELECT msg.*, ${document('msg.clean_metadata')} AS doc FROM ${texts} ${dialect.fence}) parsed`;
}

export interface MessageRead {
  /**
   * For a statement that reads most messages (the backfill, the full audit): parse each document
   * once, behind the dialect's fence, instead of once per reference to it (each identity check of
   * R2-1 is one; a 1M-message backfill took twice as long). A condition of the outer query no
   * longer reaches the messages through the fence, so one on `msg` that an index should serve goes
   * in `where`. Not where a condition correlated with an outer query must reach the messages'
   * index (the health window's excess probe).
   */
  fenced?: boolean;
  /** fenced: a condition on the message row `msg`, applied before parsing */
  where?: string;
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
export function subagentMessages(dialect: Dialect, read: MessageRead = {}): string {
  return `(SELECT identified.*, ${identityOk(dialect)} AS identity_ok FROM (SELECT parsed.*, ${metadataColumns(dialect)} FROM ${messagesWithMetadata(dialect, read)}) identified) sm_all`;
}

/**
 * 1 when every identity value the message would give its row passes R2-1 (lib/text.ts), else 0:
 * the frame for it would be invalid, so the backfill skips it and the health check expects no row.
 */
function identityOk(d: Dialect): string {
  const parent = d.jsonString('identified.doc', '$.parent_tool_call_id');
  const ids = [
    'identified.meta_tool_call_id',
    parent,
    'identified.task_session_id',
    'identified.task_id',
    'identified.turn_id',
  ];
  return `CASE WHEN ${ids.map((id) => identityOkSql(d, id)).join(' AND ')} THEN 1 ELSE 0 END`;
}

/**
 * The identity filter of docs/migrate.md#3-the-backfill-transaction / AC-21, AC-21a, applied to `subagentMessages` rows (alias
 * `sm_all`): kind is subagent_task, session, task and tool call id are all non-empty, and every
 * identity value passes R2-1 (docs/frame.md).
 */
export const QUALIFYING =
  `sm_all.kind = 'subagent_task' AND sm_all.task_session_id IS NOT NULL AND sm_all.task_session_id <> '' ` +
  `AND sm_all.task_id IS NOT NULL AND sm_all.task_id <> '' ` +
  `AND sm_all.meta_tool_call_id IS NOT NULL AND sm_all.meta_tool_call_id <> '' AND sm_all.identity_ok = 1`;
