import { asObject, type RecordSource, recordsOf } from '../producer/usage/records.js';

/*
 * Which agent wrote a file of records (`subagent-context usage FILE` without --format, R6-3): each
 * agent's records have a shape no other agent's have (docs/spend.md).
 */

export const USAGE_FORMATS = ['claude-transcript', 'claude-stream', 'opencode', 'codex'] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];

/** How many records are looked at before giving up: an agent's first record already tells. */
const LOOK_AT = 200;

const CODEX_TYPES = new Set(['session_meta', 'turn_context', 'event_msg', 'response_item', 'compacted']);
const CLAUDE_TRANSCRIPT_TYPES = new Set(['user', 'assistant', 'system', 'summary']);

/** The format one record shows, if it shows one. */
export function formatOf(record: Record<string, unknown>): UsageFormat | undefined {
  if (typeof record.type === 'string' && CODEX_TYPES.has(record.type) && asObject(record.payload) !== undefined)
    return 'codex';
  if (('info' in record && 'parts' in record) || typeof record.messageID === 'string') return 'opencode';
  if ((record.role === 'assistant' || record.role === 'user') && typeof record.sessionID === 'string')
    return 'opencode';
  if ('parent_tool_use_id' in record || (record.type === 'system' && record.subtype === 'init')) return 'claude-stream';
  if (record.type === 'result' && 'session_id' in record) return 'claude-stream';
  if (
    typeof record.type === 'string' &&
    CLAUDE_TRANSCRIPT_TYPES.has(record.type) &&
    ('sessionId' in record || 'isSidechain' in record || 'agentId' in record)
  )
    return 'claude-transcript';
  return undefined;
}

/** The format the first records show (OpenCode's API answer, a JSON array, by its elements), or undefined. */
export async function detectFormat(records: RecordSource): Promise<UsageFormat | undefined> {
  let seen = 0;
  for await (const record of recordsOf(records, { arrays: true })) {
    const format = record === undefined ? undefined : formatOf(record);
    if (format !== undefined) return format;
    if (++seen >= LOOK_AT) return undefined;
  }
  return undefined;
}
