import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { SendMessageBatchClient } from '../aws/sqs.js';
import type { Database } from '../db/database.js';
import { urlMayBeStale } from '../db/errors.js';
import { parseFrame } from '../frame/parse.js';
import { normalizeFrame } from '../normalize.js';
import { type Micros, nowMicros } from '../time.js';
import { type Parcel, parkOnDeadLetter } from './dead-letter.js';
import { groupOf } from './fifo.js';
import { logOutcome } from './log-outcome.js';
import { batchItemFailures, countOutcomes, type Judged, settle, toPark, type Verdict } from './outcome.js';
import type { BatchReport } from './report.js';
import { type GroupedWrite, type WriteResult, writeIsolated } from './write-isolated.js';

export interface ProcessDeps {
  db: Database;
  /** SendMessageBatch on the DLQ: lib/aws/sqs.ts `signedSqs` deployed, `sqsViaSdk(client)` elsewhere */
  sqs: SendMessageBatchClient;
  /** the FIFO dead-letter queue invalid frames and permanently rejected writes are parked on */
  dlqUrl: string;
  logger: Logger;
  /** the writer's clock (updated_at); defaults to the process clock */
  clock?: () => Micros;
  /** epoch ms by which every SQS call must be done (R2-5); the database has its own (setDeadline) */
  deadline?: number;
}

/**
 * One SQS batch → rows (docs/ingest.md): parse and gate every record, write all writable frames in
 * one statement (isolating failing groups only when it fails), park invalid frames and rejected
 * writes on the DLQ, and answer with the FIFO partial-batch response (fifo.ts: a failed record
 * fails every later record of its message group; other groups are acknowledged).
 */
export async function processBatch(
  event: SQSEvent,
  deps: ProcessDeps,
): Promise<{ response: SQSBatchResponse; report: BatchReport; credentialsRejected: boolean }> {
  const { db, logger } = deps;
  const roundTripsBefore = db.stats.roundTrips;
  const now = (deps.clock ?? nowMicros)();

  const prepared = event.Records.map((record) => {
    const pre = prepare(record);
    return { record, group: groupOf(record), pre, write: pre.kind === 'write' ? pre.row : undefined };
  });
  const written = await writeIsolated(
    db,
    prepared.filter((p): p is typeof p & GroupedWrite => p.write !== undefined),
    now,
  );
  const judged: Judged[] = prepared.map((p) => ({
    record: p.record,
    group: p.group,
    verdict: verdictOf(p.pre, written.get(p as typeof p & GroupedWrite)),
  }));

  const parcels = toPark(judged).map(parcelOf);
  const outcomes = settle(judged, await parkOnDeadLetter(deps.sqs, deps.dlqUrl, parcels, deps.deadline));
  for (const outcome of outcomes) logOutcome(logger, outcome);
  const report: BatchReport = { ...countOutcomes(outcomes, now), roundTrips: db.stats.roundTrips - roundTripsBefore };
  const credentialsRejected = judged.some((j) => j.verdict.kind === 'retry' && urlMayBeStale(j.verdict.error));
  return { response: { batchItemFailures: batchItemFailures(outcomes) }, report, credentialsRejected };
}

type Prepared = { kind: 'invalid'; reason: string } | ReturnType<typeof normalizeFrame>;

function prepare(record: SQSRecord): Prepared {
  const parsed = parseFrame(record.body);
  if (!parsed.ok) return { kind: 'invalid', reason: parsed.error.reason };
  return normalizeFrame(parsed.frame);
}

function verdictOf(pre: Prepared, result: WriteResult | undefined): Verdict {
  if (pre.kind === 'invalid') return pre;
  if (pre.kind === 'skip') return { kind: 'skipped' };
  const write = pre.row;
  if (!result || result.status === 'persisted')
    return { kind: 'persisted', write, anomalous: pre.anomalous, unknownExecution: pre.unknownExecution };
  const { error } = result;
  switch (result.status) {
    case 'foreign_key':
      return { kind: 'orphaned', write, error };
    case 'row':
      return { kind: 'rejected', write, error };
    default:
      return { kind: 'retry', write, error };
  }
}

function parcelOf({ record, group, verdict }: Judged): Parcel {
  if (verdict.kind === 'invalid') return { record, group, kind: 'invalid_frame', reason: verdict.reason };
  if (verdict.kind === 'rejected')
    return { record, group, kind: 'permanent_write_error', reason: verdict.error.message };
  throw new Error(`a ${verdict.kind} record is never parked`);
}
