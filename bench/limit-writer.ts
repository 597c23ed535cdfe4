import type { SQSEvent } from 'aws-lambda';
import type { Database } from '../lib/db/database.js';
import { parseFrame } from '../lib/frame/parse.js';
import { normalizeFrame } from '../lib/normalize.js';
import type { SubagentWrite } from '../lib/row.js';
import { type PreparedStatement, prepareBatch } from '../lib/store/write.js';

/**
 * The database's own limit for the handler's work: the same rows (parsed, normalized, folded to
 * one row per conflict key with the key's summary, ids bound: lib/store/write.ts prepareBatch, the
 * handler's own statement) prepared before timing, so only the one `INSERT … SELECT … ON CONFLICT`
 * statement per batch is timed, issued straight through the same driver and connection. Whatever
 * the handler spends above this is its own work (JSON.parse, the frame's schema, normalizing,
 * folding, binding, metrics).
 */
export function prepareLimitBatch(db: Database, event: SQSEvent): PreparedStatement[] {
  const writes: SubagentWrite[] = [];
  for (const record of event.Records) {
    const parsed = parseFrame(record.body);
    if (!parsed.ok) continue;
    const normalized = normalizeFrame(parsed.frame);
    if (normalized.kind === 'write') writes.push(normalized.row);
  }
  return writes.length === 0 ? [] : prepareBatch(db.dialect, writes);
}
