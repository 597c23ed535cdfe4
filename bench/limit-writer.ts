import type { SQSEvent } from 'aws-lambda';
import type { Database } from '../lib/db/database.js';
import { parseFrame } from '../lib/frame/parse.js';
import { normalizeFrame } from '../lib/normalize.js';
import type { SubagentWrite } from '../lib/row.js';
import { type PreparedStatement, prepareBatch } from '../lib/store/write.js';

/**
 * The database's own limit for the handler's work: the same rows (parsed, normalized, in rounds by
 * conflict key, ids and updated_at bound: lib/store/write.ts prepareBatch, the handler's own
 * statements) prepared before timing, so only the `INSERT … SELECT FROM unnest(…) ON CONFLICT`
 * statements are timed (one per round; when there are several, in one transaction sent as one
 * pipeline on PostgreSQL, lib/store/write.ts runPrepared, as the handler does), issued straight
 * through the same driver and connection. Since R2-7 the handler cannot fold a key's frames into
 * one row (an older frame only fills NULLs, which depends on the stored row), so the limit is not
 * pre-folded either: it does exactly the database work the handler does. Whatever the handler
 * spends above this is its own work.
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
