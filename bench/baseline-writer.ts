import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Database } from '../lib/db/database.js';
import { parseFrame } from '../lib/frame/parse.js';
import { normalizeFrame } from '../lib/normalize.js';
import { writeBatch } from '../lib/store/write.js';

/**
 * The obvious design the ingest is compared with: the original in-process writer's shape, one
 * upsert statement per frame, in arrival order. It shares the parser, the normalization and the
 * upsert (same merge rules) with the real handler, so the comparison isolates the batching.
 */
export function createBaselineWriter(db: () => Database): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      const parsed = parseFrame(record.body);
      if (!parsed.ok) {
        failures.push({ itemIdentifier: record.messageId });
        continue;
      }
      const normalized = normalizeFrame(parsed.frame);
      if (normalized.kind !== 'write') continue;
      try {
        await writeBatch(db(), [normalized.row]);
      } catch {
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };
}
