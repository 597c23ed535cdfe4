import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { DatabaseError } from '../../../lib/db/errors.js';
import { groupOf } from '../../../lib/ingest/fifo.js';
import {
  batchItemFailures,
  countOutcomes,
  type Judged,
  settle,
  toPark,
  type Verdict,
} from '../../../lib/ingest/outcome.js';
import { write } from '../../support/frames.js';

// Pure unit tests with small factories (Powertools' prepare / act / assess), no SQS, no database.
const NOW = 1_786_541_100_000_000n;
let n = 0;
const record = (group: string | undefined): SQSRecord =>
  ({
    messageId: `m${++n}`,
    body: '{}',
    attributes: group === undefined ? undefined : { MessageGroupId: group },
  }) as unknown as SQSRecord;
const judged = (group: string | undefined, verdict: Verdict): Judged => {
  const r = record(group);
  return { record: r, group: groupOf(r), verdict };
};
const dbError = (kind: 'transient' | 'foreign_key' | 'row' | 'system') =>
  new DatabaseError(kind, kind, undefined, undefined);
const persisted = (group: string, extra: { anomalous?: boolean; unknownExecution?: boolean } = {}) =>
  judged(group, {
    kind: 'persisted',
    write: write(),
    anomalous: extra.anomalous ?? false,
    unknownExecution: extra.unknownExecution ?? false,
  });
const invalid = (group: string | undefined) => judged(group, { kind: 'invalid', reason: 'version must be 1' });
const retry = (group: string) => judged(group, { kind: 'retry', write: write(), error: dbError('transient') });
const rejected = (group: string) => judged(group, { kind: 'rejected', write: write(), error: dbError('row') });
const orphaned = (group: string) => judged(group, { kind: 'orphaned', write: write(), error: dbError('foreign_key') });
const skipped = (group: string) => judged(group, { kind: 'skipped' });
const idsOf = (items: readonly Judged[]) => items.map((j) => j.record.messageId);

describe('outcome.ts: one outcome per record', () => {
  it('docs/ingest.md: invalid frames and rejected rows are parked, except behind a retry in their group', () => {
    // Prepare
    const a = [invalid('a'), retry('a'), invalid('a'), rejected('a')];
    const b = [rejected('b'), invalid('b')];
    // Act
    const parked = toPark([a[0]!, b[0]!, a[1]!, a[2]!, b[1]!, a[3]!]);
    // Assess
    expect(idsOf(parked)).toEqual(idsOf([a[0]!, b[0]!, b[1]!]));
  });

  it('docs/ingest.md FIFO rule: settle redelivers a retry and the rest of its group, whatever their own verdict', () => {
    const batch = [persisted('a'), retry('a'), persisted('a'), invalid('a'), persisted('b'), invalid('b')];
    const outcomes = settle(batch, new Map());
    expect(outcomes.map((o) => o.fate)).toEqual([
      'acknowledged',
      'redelivered',
      'redelivered',
      'redelivered',
      'acknowledged',
      'parked',
    ]);
    expect(batchItemFailures(outcomes).map((f) => f.itemIdentifier)).toEqual(idsOf(batch.slice(1, 4)));
  });

  it('docs/ingest.md: a record that could not be parked is redelivered with the rest of its group, and says why', () => {
    const batch = [invalid('a'), persisted('a'), persisted('b')];
    const outcomes = settle(batch, new Map([[batch[0]!.record.messageId, 'queue does not exist']]));
    expect(outcomes.map((o) => o.fate)).toEqual(['redelivered', 'redelivered', 'acknowledged']);
    expect(outcomes[0]!.parkError).toBe('queue does not exist');
    expect(outcomes[1]!.parkError).toBeUndefined();
  });

  it('R2-3: a record without attributes is settled on its own and never fails another record', () => {
    const batch = [invalid(undefined), persisted('a'), invalid(undefined)];
    const outcomes = settle(batch, new Map([[batch[0]!.record.messageId, 'throttled']]));
    expect(outcomes.map((o) => o.fate)).toEqual(['redelivered', 'acknowledged', 'parked']);
  });

  it('R2-4: a system error keeps the record on the queue and is counted as system_error, not parked', () => {
    const down = judged('a', { kind: 'retry', write: write(), error: dbError('system') });
    const batch = [down, invalid('a'), retry('b')];
    const outcomes = settle(batch, new Map());
    expect(toPark(batch)).toEqual([]);
    expect(outcomes.map((o) => o.fate)).toEqual(['redelivered', 'redelivered', 'redelivered']);
    expect(countOutcomes(outcomes, NOW).counts).toMatchObject({ attempted: 2, failed: 2, system_error: 1, invalid: 1 });
  });

  it('docs/ingest.md metrics: counting is a pure function of the outcomes: attempted = skipped_no_identity + persisted + failed', () => {
    // Prepare
    const batch = [
      persisted('a', { anomalous: true }),
      persisted('a', { unknownExecution: true }),
      skipped('a'),
      orphaned('b'),
      rejected('c'),
      invalid('c'),
      retry('d'),
      persisted('d'), // behind the retry: failed, not persisted
    ];
    // Act
    const { counts, lagMs } = countOutcomes(settle(batch, new Map()), NOW);
    // Assess
    expect(counts).toEqual({
      attempted: 7,
      persisted: 2,
      skipped_no_identity: 1,
      failed: 4,
      anomalous_value: 1,
      unknown_execution: 1,
      invalid: 1,
      orphaned: 1,
      system_error: 0,
    });
    expect(counts.attempted).toBe(counts.skipped_no_identity + counts.persisted + counts.failed);
    expect(lagMs).toEqual([1876.544, 1876.544]);
  });
});
