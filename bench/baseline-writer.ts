import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { COLUMNS } from '../lib/columns.js';
import type { Database } from '../lib/db/database.js';
import type { Dialect } from '../lib/db/dialect/dialect.js';
import { parseFrame } from '../lib/frame/parse.js';
import { normalizeFrame } from '../lib/normalize.js';
import type { SubagentWrite } from '../lib/row.js';
import { upsertSqlFrom } from '../lib/store/upsert.js';

/**
 * The obvious design the ingest is compared with, the original in-process writer's: for each
 * frame in arrival order, one `INSERT … VALUES (one row) ON CONFLICT … DO UPDATE` with the same
 * merge rules (the conflict clause of lib/store/upsert.ts). It shares the parser and the
 * normalization with the real handler, so the comparison isolates batching and folding.
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
        const database = db();
        await database.query(singleRowUpsert(database.dialect), bindRow(database.dialect, normalized.row));
      } catch {
        failures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures: failures };
  };
}

const sqlByDialect = new Map<string, string>();

/**
 * The shared upsert with its multi-row source replaced by one VALUES row (`$1…$n`, column order)
 * and its side document (a key's summary beyond the folded row) after it: `{}`, one frame needs none.
 */
function singleRowUpsert(dialect: Dialect): string {
  let sql = sqlByDialect.get(dialect.name);
  if (!sql) {
    sql = upsertSqlFrom(dialect, `VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`, COLUMNS.length + 1);
    sqlByDialect.set(dialect.name, sql);
  }
  return sql;
}

function bindRow(dialect: Dialect, write: SubagentWrite): unknown[] {
  // updated_at is the row's newest observation, as lib/store/write.ts binds it (R3-1).
  const special: Record<string, unknown> = {
    id: randomUUID(),
    updated_at: dialect.encodeTimestamp(write.last_observed_at),
  };
  const row = COLUMNS.map(({ name }) => {
    const value = name in special ? special[name] : write[name as keyof SubagentWrite];
    return typeof value === 'bigint' ? dialect.encodeTimestamp(value) : value;
  });
  return [...row, '{}'];
}
