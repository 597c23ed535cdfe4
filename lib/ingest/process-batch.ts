import { processPartialResponseSync, SqsFifoPartialProcessor } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Database } from '../db/database.js';
import { parseFrame } from '../frame/parse.js';
import { normalizeFrame } from '../normalize.js';
import type { SubagentWrite } from '../row.js';
import { nowMicros, type Micros } from '../time.js';
import { parkOnDeadLetter, type Parcel } from './dead-letter.js';
import { emptyCounts, type BatchReport } from './report.js';
import { writeIsolated, type WriteOutcome } from './write-isolated.js';

export interface ProcessDeps {
  db: Database;
  sqs: SQSClient;
  /** the FIFO dead-letter queue invalid frames and permanently rejected writes are parked on */
  dlqUrl: string;
  logger: Logger;
  /** the writer's clock (updated_at); defaults to the process clock */
  clock?: () => Micros;
}

/** What became of one record before the FIFO rule is applied. */
type Status =
  | { kind: 'invalid'; reason: string }
  | { kind: 'skipped' }
  | { kind: 'written'; write: SubagentWrite; anomalous: boolean; unknownExecution: boolean; outcome: WriteOutcome };

/** Records that share no MessageGroupId (not possible on FIFO, but a hand-built event may) are each their own group. */
const groupOf = (record: SQSRecord): string => record.attributes.MessageGroupId ?? `\u0000${record.messageId}`;

/**
 * One SQS batch → rows, SPEC §7: parse and gate every record, write all writable frames in one
 * statement (isolating failing groups only when it fails), park invalid frames and permanently
 * rejected writes on the DLQ, and answer with the FIFO partial-batch response: a failed record
 * fails every later record of its message group (Powertools' SqsFifoPartialProcessor with
 * skipGroupOnError), other groups are acknowledged.
 */
export async function processBatch(event: SQSEvent, deps: ProcessDeps): Promise<{ response: SQSBatchResponse; report: BatchReport }> {
  const { db, logger } = deps;
  const records = event.Records;
  const roundTripsBefore = db.stats.roundTrips;
  const now = (deps.clock ?? nowMicros)();

  const prepared = records.map((record) => ({ record, pre: prepare(record) }));
  const writable = prepared.flatMap(({ record, pre }) => (pre.kind === 'write' ? [{ group: groupOf(record), write: pre.row }] : []));
  const outcomes = await writeIsolated(db, writable, now);
  let next = 0;
  const statuses = new Map<string, Status>();
  for (const { record, pre } of prepared) {
    if (pre.kind === 'write') {
      statuses.set(record.messageId, { kind: 'written', write: pre.row, anomalous: pre.anomalous, unknownExecution: pre.unknownExecution, outcome: outcomes[next++]! });
    } else {
      statuses.set(record.messageId, pre.kind === 'invalid' ? { kind: 'invalid', reason: pre.reason } : { kind: 'skipped' });
    }
  }

  const notParked = await parkOnDeadLetter(deps.sqs, deps.dlqUrl, parcelsToPark(records, statuses));
  const response = fifoResponse(event, (record) => {
    const status = statuses.get(record.messageId)!;
    if (notParked.has(record.messageId)) throw new Error(`not parked on the dead-letter queue: ${notParked.get(record.messageId)}`);
    if (status.kind === 'written' && status.outcome.status === 'transient') throw status.outcome.error;
  });

  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  const report: BatchReport = { counts: emptyCounts(), lagMs: [], roundTrips: 0 };
  for (const record of records) {
    const status = statuses.get(record.messageId)!;
    logOutcome(logger, record, status, notParked.get(record.messageId), failed.has(record.messageId));
    count(report, status, failed.has(record.messageId), now);
  }
  report.roundTrips = db.stats.roundTrips - roundTripsBefore;
  return { response, report };
}

type Prepared = { kind: 'invalid'; reason: string } | ReturnType<typeof normalizeFrame>;

function prepare(record: SQSRecord): Prepared {
  const parsed = parseFrame(record.body);
  if (!parsed.ok) return { kind: 'invalid', reason: parsed.error.reason };
  return normalizeFrame(parsed.frame);
}

/**
 * Invalid frames and permanently rejected writes go to the DLQ — except those behind a transient
 * failure in their group: they are redelivered with it, and parked then.
 */
function parcelsToPark(records: readonly SQSRecord[], statuses: ReadonlyMap<string, Status>): Parcel[] {
  const failedGroups = new Set<string>();
  const parcels: Parcel[] = [];
  for (const record of records) {
    const group = groupOf(record);
    if (failedGroups.has(group)) continue;
    const status = statuses.get(record.messageId)!;
    if (status.kind === 'invalid') parcels.push({ record, kind: 'invalid_frame', reason: status.reason });
    if (status.kind !== 'written') continue;
    if (status.outcome.status === 'transient') failedGroups.add(group);
    if (status.outcome.status === 'permanent') parcels.push({ record, kind: 'permanent_write_error', reason: status.outcome.error.message });
  }
  return parcels;
}

/**
 * The FIFO rule via Powertools: `fails` throws for a record that must be redelivered, and the
 * processor fails it and every later record of its group. A batch where everything failed is
 * returned as such (not thrown) so the caller's counts and logs still happen.
 * A record parked after a later record of its group was already written is only ever replayed:
 * applying a suffix of a group's frames again leaves the table unchanged (SPEC §6 rules are idempotent).
 */
function fifoResponse(event: SQSEvent, fails: (record: SQSRecord) => void): SQSBatchResponse {
  return processPartialResponseSync(event, fails, new SqsFifoPartialProcessor(), {
    skipGroupOnError: true,
    throwOnFullBatchFailure: false,
  });
}

function count(report: BatchReport, status: Status, failed: boolean, now: Micros): void {
  const { counts } = report;
  if (status.kind === 'invalid') {
    counts.invalid += 1;
    return;
  }
  counts.attempted += 1;
  if (failed) {
    counts.failed += 1;
    return;
  }
  if (status.kind === 'skipped') {
    counts.skipped_no_identity += 1;
    return;
  }
  switch (status.outcome.status) {
    case 'persisted':
      counts.persisted += 1;
      if (status.anomalous) counts.anomalous_value += 1;
      if (status.unknownExecution) counts.unknown_execution += 1;
      report.lagMs.push(Number(now - status.write.observed_at) / 1000);
      return;
    case 'foreign_key':
      counts.failed += 1;
      counts.orphaned += 1;
      return;
    default:
      counts.failed += 1;
  }
}

/** WARN for everything that did not simply land; never the body (it may carry prompt or result text). */
function logOutcome(logger: Logger, record: SQSRecord, status: Status, parkError: string | undefined, failed: boolean): void {
  const base = { message_id: record.messageId, message_group_id: record.attributes.MessageGroupId };
  if (status.kind === 'invalid') {
    logger.warn(parkError ? 'invalid frame could not be parked on the dead-letter queue; it will be redelivered' : 'invalid frame parked on the dead-letter queue', {
      ...base,
      reason: status.reason,
      ...(parkError ? { park_error: parkError } : {}),
    });
    return;
  }
  if (status.kind !== 'written' || status.outcome.status === 'persisted') {
    if (failed) logger.debug('record redelivered behind an earlier failure in its message group', base);
    return;
  }
  const { error } = status.outcome;
  const context = {
    ...base,
    task_session_id: status.write.task_session_id,
    tool_call_id: status.write.tool_call_id,
    agent_execution_id: status.write.agent_execution_id,
    sqlstate: error.sqlstate,
    driver_code: error.driverCode,
    failure_kind: error.kind,
    error: error.message,
  };
  const what = {
    transient: 'write failed transiently; the frame and the rest of its message group will be redelivered',
    foreign_key: 'session no longer exists (deleted); frame acknowledged as orphaned',
    permanent: parkError ? 'write rejected and the frame could not be parked; it will be redelivered' : 'write rejected; frame parked on the dead-letter queue',
  }[error.kind];
  logger.warn(what, parkError ? { ...context, park_error: parkError } : context);
}
