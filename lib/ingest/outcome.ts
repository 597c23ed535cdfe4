import type { SQSRecord } from 'aws-lambda';
import type { DatabaseError } from '../db/errors.js';
import type { SubagentWrite } from '../row.js';
import type { Micros } from '../time.js';
import { failedUnderFifo } from './fifo.js';
import { type BatchReport, emptyCounts } from './report.js';

/**
 * What the pipeline decided for one record on its own, before the FIFO rule (docs/ingest.md):
 * - `invalid`: the frame can never be written → parked with its reason;
 * - `skipped`: valid, no identity (AC-2) → acknowledged;
 * - `persisted`: written;
 * - `orphaned`: its session was deleted (FK on task_session_id) → acknowledged, counted;
 * - `rejected`: the database rejected this row → parked with the error;
 * - `retry`: the write failed for a reason that is not the row's (contention, or a system error:
 *   R2-4) → stays on the queue.
 */
export type Verdict =
  | { kind: 'invalid'; reason: string }
  | { kind: 'skipped' }
  | { kind: 'persisted'; write: SubagentWrite; anomalous: boolean; unknownExecution: boolean }
  | { kind: 'orphaned'; write: SubagentWrite; error: DatabaseError }
  | { kind: 'rejected'; write: SubagentWrite; error: DatabaseError }
  | { kind: 'retry'; write: SubagentWrite; error: DatabaseError };

/** A verdict on a record whose group is in order: what is done with it. */
export interface Judged {
  readonly record: SQSRecord;
  /** fifo.ts `groupOf(record)` */
  readonly group: string;
  readonly verdict: Verdict;
}

/** What finally became of a record: `redelivered` = reported as a batch item failure. */
export type Fate = 'acknowledged' | 'parked' | 'redelivered';

export interface RecordOutcome extends Judged {
  readonly fate: Fate;
  /** why it could not be parked (then it is redelivered) */
  readonly parkError?: string;
}

/** The verdicts that go to the dead-letter queue (when their group is not held back). */
export function parksOnItsOwn(verdict: Verdict): verdict is Extract<Verdict, { kind: 'invalid' | 'rejected' }> {
  return verdict.kind === 'invalid' || verdict.kind === 'rejected';
}

/**
 * The records to park now: invalid frames and rejected rows, except those behind a record that
 * stays on the queue in their group — they are redelivered with it and parked then.
 */
export function toPark<T extends Judged>(judged: readonly T[]): T[] {
  const held = failedUnderFifo(
    judged,
    (j) => j.group,
    (j) => j.verdict.kind === 'retry',
  );
  return judged.filter((j) => !held.has(j) && parksOnItsOwn(j.verdict));
}

/**
 * Each record's fate, given which records could not be parked: a record fails on its own when
 * its write must be retried or its parking failed; the FIFO rule adds every later record of its
 * group. A record parked after a later record of its group was written is only ever replayed:
 * applying a suffix of a group's frames again leaves the table unchanged (docs/merge.md).
 */
export function settle(judged: readonly Judged[], notParked: ReadonlyMap<string, string>): RecordOutcome[] {
  const failsOnItsOwn = (j: Judged) => j.verdict.kind === 'retry' || notParked.has(j.record.messageId);
  const redelivered = failedUnderFifo(judged, (j) => j.group, failsOnItsOwn);
  return judged.map((j) => {
    const parkError = notParked.get(j.record.messageId);
    const fate: Fate = redelivered.has(j) ? 'redelivered' : parksOnItsOwn(j.verdict) ? 'parked' : 'acknowledged';
    return parkError === undefined ? { ...j, fate } : { ...j, fate, parkError };
  });
}

/**
 * The invocation's counts (docs/ingest.md "Metrics"): every valid frame is exactly one of
 * skipped_no_identity, persisted or failed; invalid frames are not attempted. Pure.
 */
export function countOutcomes(outcomes: readonly RecordOutcome[], now: Micros): Omit<BatchReport, 'roundTrips'> {
  const counts = emptyCounts();
  const lagMs: number[] = [];
  for (const { verdict, fate } of outcomes) {
    if (verdict.kind === 'invalid') {
      counts.invalid += 1;
      continue;
    }
    counts.attempted += 1;
    if (fate === 'redelivered') {
      counts.failed += 1;
      if (verdict.kind === 'retry' && verdict.error.kind === 'system') counts.system_error += 1;
      continue;
    }
    switch (verdict.kind) {
      case 'skipped':
        counts.skipped_no_identity += 1;
        break;
      case 'persisted':
        counts.persisted += 1;
        if (verdict.anomalous) counts.anomalous_value += 1;
        if (verdict.unknownExecution) counts.unknown_execution += 1;
        lagMs.push(Number(now - verdict.write.observed_at) / 1000);
        break;
      case 'orphaned':
        counts.failed += 1;
        counts.orphaned += 1;
        break;
      default:
        counts.failed += 1;
    }
  }
  return { counts, lagMs };
}

/** The partial batch response: every redelivered record, in arrival order. */
export function batchItemFailures(outcomes: readonly RecordOutcome[]): { itemIdentifier: string }[] {
  return outcomes.filter((o) => o.fate === 'redelivered').map((o) => ({ itemIdentifier: o.record.messageId }));
}
