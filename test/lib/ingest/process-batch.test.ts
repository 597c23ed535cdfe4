import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { SQS_MAX_MESSAGE_BYTES } from '../../../lib/ingest/dead-letter.js';
import { createIngestHandler } from '../../../lib/ingest/handler.js';
import { sqsViaSdk } from '../../../lib/queue/sqs-via-sdk.js';
import { readAll, readSession } from '../../../lib/store/read.js';
import { frame, seedSession } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';
import {
  POSTGRES_TARGETS,
  TARGET_FIXTURES,
  TARGETS,
  type TestDatabase,
  useTestDatabase,
} from '../../support/targets.js';
import { captureOutput, handlerDatabase, makeUnavailable, sqsEvent, sqsRecord } from './support.js';

const NOW = 1_786_541_100_000_000n; // 2026-08-12T13:25:00Z

/** A database-side rejection of one tool call id, as a CHECK-like trigger would reject a row. */
async function rejectToolCall(t: TestDatabase, toolCallId: string): Promise<void> {
  if (t.name === 'sqlite') {
    await t.db.query(
      `CREATE TRIGGER reject_poison BEFORE INSERT ON task_session_subagents WHEN NEW.tool_call_id = '${toolCallId}' BEGIN SELECT RAISE(ABORT, 'row rejected'); END`,
    );
    return;
  }
  await t.db.query(
    `CREATE FUNCTION reject_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       IF NEW.tool_call_id = '${toolCallId}' THEN RAISE EXCEPTION 'row rejected' USING ERRCODE = 'check_violation'; END IF;
       RETURN NEW; END $$`,
  );
  await t.db.query(
    'CREATE TRIGGER reject_poison BEFORE INSERT ON task_session_subagents FOR EACH ROW EXECUTE FUNCTION reject_poison()',
  );
}

describe.each(TARGET_FIXTURES)('ingest handler on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  const q = useSqs();

  const handlerFor = async (options: { dlqUrl?: string } = {}) => {
    const db = await handlerDatabase(t);
    const handler = createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: options.dlqUrl ?? q.dlqUrl,
      clock: () => NOW,
      logger: new Logger({ serviceName: 'subagent-context' }),
    });
    return { db, handler };
  };
  const failedIds = (response: { batchItemFailures: { itemIdentifier: string }[] }) =>
    response.batchItemFailures.map((f) => f.itemIdentifier);

  it('docs/ingest.md: writes a batch of 10 frames of 3 sessions in one database round trip', async () => {
    for (const s of ['s1', 's2', 's3']) await seedSession(t.db, s);
    const { db, handler } = await handlerFor();
    const records = Array.from({ length: 10 }, (_, i) =>
      sqsRecord(frame({ task_session_id: `s${(i % 3) + 1}`, tool_call_id: `c${i % 4}` }), `s${(i % 3) + 1}`),
    );
    const before = db.stats.roundTrips;
    const response = await handler(sqsEvent(records));
    expect(response.batchItemFailures).toEqual([]);
    expect(db.stats.roundTrips - before).toBe(1);
    expect(await readAll(t.db)).toHaveLength(10);
  });

  it('docs/ingest.md: parks an invalid frame on the DLQ with its reason, body and group, and the rest of its group still lands', async () => {
    await seedSession(t.db);
    const { handler } = await handlerFor();
    const bad = sqsRecord({ ...frame(), version: 2 }, 's1');
    const records = [
      sqsRecord(frame({ tool_call_id: 'c1' }), 's1'),
      bad,
      sqsRecord(frame({ tool_call_id: 'c2' }), 's1'),
    ];
    const response = await handler(sqsEvent(records));
    expect(response.batchItemFailures).toEqual([]);
    expect((await readSession(t.db, 's1')).map((r) => r.tool_call_id)).toEqual(['c1', 'c2']);
    const [parked, ...more] = await takeAll(q.sqs, q.dlqUrl);
    expect(more).toEqual([]);
    expect(parked?.Body).toBe(bad.body);
    expect(parked?.Attributes?.MessageGroupId).toBe('s1');
    expect(parked?.MessageAttributes?.reason?.StringValue).toMatch(/version must be 1/);
    expect(parked?.MessageAttributes?.failure?.StringValue).toBe('invalid_frame');
  });

  it('docs/ingest.md FIFO rule: a record that could not be parked fails with every later record of its group; other groups are acknowledged', async () => {
    for (const s of ['s1', 's2']) await seedSession(t.db, s);
    const { handler } = await handlerFor({ dlqUrl: q.missingQueueUrl });
    const a1 = sqsRecord(frame({ tool_call_id: 'a1' }), 's1');
    const a2 = sqsRecord('not json', 's1');
    const a3 = sqsRecord(frame({ tool_call_id: 'a3' }), 's1');
    const b1 = sqsRecord(frame({ task_session_id: 's2', tool_call_id: 'b1' }), 's2');
    const response = await handler(sqsEvent([a1, a2, b1, a3]));
    expect(failedIds(response)).toEqual([a2.messageId, a3.messageId]);
    expect((await readAll(t.db)).map((r) => r.tool_call_id).sort()).toEqual(['a1', 'a3', 'b1']);
  });

  it('docs/ingest.md: a deleted session in a multi-group batch is acknowledged as orphaned and the healthy group commits', async () => {
    await seedSession(t.db, 's2');
    const { handler } = await handlerFor();
    const orphan = sqsRecord(frame({ task_session_id: 'gone', tool_call_id: 'x1' }), 'gone');
    const healthy = sqsRecord(frame({ task_session_id: 's2', tool_call_id: 'y1' }), 's2');
    const { result: response, lines } = await captureOutput(() => handler(sqsEvent([orphan, healthy])));
    expect(response.batchItemFailures).toEqual([]);
    expect((await readAll(t.db)).map((r) => r.tool_call_id)).toEqual(['y1']);
    expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);
    const emf = lines.find((l) => '_aws' in l)!;
    expect(emf).toMatchObject({ orphaned: 1, persisted: 1, failed: 1, attempted: 2 });
    expect(lines.find((l) => l.level === 'WARN')).toMatchObject({
      task_session_id: 'gone',
      tool_call_id: 'x1',
      sqlstate: '23503',
    });
  });

  it('docs/ingest.md: a permanently rejected write is parked on the DLQ with the error and acknowledged; the rest of its group lands', async () => {
    await seedSession(t.db);
    await rejectToolCall(t, 'poison');
    const { handler } = await handlerFor();
    const poison = sqsRecord(frame({ tool_call_id: 'poison' }), 's1');
    const records = [
      sqsRecord(frame({ tool_call_id: 'c1' }), 's1'),
      poison,
      sqsRecord(frame({ tool_call_id: 'c2' }), 's1'),
    ];
    const response = await handler(sqsEvent(records));
    expect(response.batchItemFailures).toEqual([]);
    expect((await readSession(t.db, 's1')).map((r) => r.tool_call_id)).toEqual(['c1', 'c2']);
    const parked = await takeAll(q.sqs, q.dlqUrl);
    expect(parked.map((m) => m.Body)).toEqual([poison.body]);
    expect(parked[0]?.MessageAttributes?.failure?.StringValue).toBe('permanent_write_error');
    expect(parked[0]?.MessageAttributes?.reason?.StringValue).toMatch(/row rejected/);
  });

  it('docs/ingest.md: the database unavailable fails every valid record for redelivery and parks nothing', async () => {
    await seedSession(t.db);
    const { handler } = await handlerFor();
    const records = [
      sqsRecord(frame({ tool_call_id: 'c1' }), 's1'),
      sqsRecord(frame({ tool_call_id: 'c2' }), 's1'),
      sqsRecord(frame({ task_session_id: 's9' }), 's9'),
    ];
    const restore = await makeUnavailable(t);
    try {
      const { result: response, lines } = await captureOutput(() => handler(sqsEvent(records)));
      expect(failedIds(response)).toEqual(records.map((r) => r.messageId));
      expect(lines.find((l) => '_aws' in l)).toMatchObject({ attempted: 3, failed: 3, persisted: 0 });
    } finally {
      await restore();
    }
    expect(await readAll(t.db)).toEqual([]);
    expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);
  });

  it('docs/ingest.md metrics: attempted = skipped_no_identity + persisted + failed, with qualifiers, invalid, lag and the namespace', async () => {
    await seedSession(t.db);
    const { handler } = await handlerFor();
    const records = [
      sqsRecord(frame({ tool_call_id: 'c1', execution_id: '' }), 's1'), // AC-31: unknown_execution
      sqsRecord(frame({ tool_call_id: 'c2', subagent_task: { total_tokens: -5 } }), 's1'), // AC-9: anomalous_value
      sqsRecord(frame({ tool_call_id: '' }), 's1'), // AC-2: skipped
      sqsRecord(frame({ task_session_id: 'gone' }), 'gone'), // orphaned → failed
      sqsRecord('{"version":1}', 's1'), // invalid
    ];
    const { lines } = await captureOutput(() => handler(sqsEvent(records)));
    const emf = lines.find((l) => '_aws' in l) as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Namespace: string }[] };
    };
    expect(emf).toMatchObject({
      attempted: 4,
      persisted: 2,
      skipped_no_identity: 1,
      failed: 1,
      orphaned: 1,
      anomalous_value: 1,
      unknown_execution: 1,
      invalid: 1,
    });
    expect(Number(emf.attempted)).toBe(Number(emf.skipped_no_identity) + Number(emf.persisted) + Number(emf.failed));
    expect(emf.lag).toEqual([1876.544, 1876.544]);
    expect(emf._aws.CloudWatchMetrics[0]!.Namespace).toBe(
      process.env.POWERTOOLS_METRICS_NAMESPACE || 'SubagentContext',
    );
  });

  it("R2-10: a metric above 2^31-1 is stored as NULL and counted anomalous, never parked (the host's column is 32-bit)", async () => {
    await seedSession(t.db);
    const { handler } = await handlerFor();
    const records = [
      sqsRecord(
        frame({
          tool_call_id: 'big',
          subagent_task: { total_tokens: 3_000_000_000, duration_ms: 2_147_483_647, tool_use_count: 4 },
        }),
        's1',
      ),
    ];
    const { result: response, lines } = await captureOutput(() => handler(sqsEvent(records)));
    expect(response.batchItemFailures).toEqual([]);
    expect(lines.find((l) => '_aws' in l)).toMatchObject({ persisted: 1, failed: 0, anomalous_value: 1 });
    expect(await readAll(t.db)).toMatchObject([
      { tool_call_id: 'big', total_tokens: null, duration_ms: 2_147_483_647, tool_use_count: 4 },
    ]);
    expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);
  });

  it('R2-3 (D11): an invalid frame at or near the 256 KiB message limit is parked at once, body unchanged, with failure and reason', async () => {
    const { handler } = await handlerFor();
    const sized = (bytes: number) => {
      const shape = (n: number) =>
        JSON.stringify({ ...frame({ subagent_task: { prompt: 'p'.repeat(n) } }), version: 2 });
      return shape(bytes - shape(0).length);
    };
    const near = sqsRecord(sized(SQS_MAX_MESSAGE_BYTES - 150), 's1');
    const full = sqsRecord(sized(SQS_MAX_MESSAGE_BYTES), 's2');
    const { result: response, lines } = await captureOutput(() => handler(sqsEvent([near, full])));
    expect(response.batchItemFailures).toEqual([]);
    const parked = await takeAll(q.sqs, q.dlqUrl);
    expect(parked.map((m) => m.Body?.length)).toEqual([SQS_MAX_MESSAGE_BYTES - 150, SQS_MAX_MESSAGE_BYTES]);
    expect(parked.map((m) => m.Body)).toEqual([near.body, full.body]);
    // D11: the frame of exactly 256 KiB says why too (the DLQ takes 1 MiB)
    for (const message of parked) {
      expect(message.MessageAttributes?.failure?.StringValue).toBe('invalid_frame');
      expect(message.MessageAttributes?.reason?.StringValue).toMatch(/version/);
    }
    expect(lines.filter((l) => l.level === 'WARN').map((l) => l.reason)).toEqual([
      expect.stringMatching(/version/),
      expect.stringMatching(/version/),
    ]);
  });

  it('R2-3: a record without attributes or messageAttributes is handled on its own and never fails its batch', async () => {
    for (const s of ['s1', 's2']) await seedSession(t.db, s);
    const { handler } = await handlerFor();
    const bare = (body: unknown, group: string) => {
      const { attributes: _a, messageAttributes: _m, ...rest } = sqsRecord(body, group);
      return rest as unknown as SQSRecord;
    };
    const lone = bare(frame({ tool_call_id: 'lone' }), 's1');
    const loneInvalid = bare('not json', 's1');
    const records = [
      sqsRecord(frame({ tool_call_id: 'c1' }), 's1'),
      loneInvalid,
      lone,
      sqsRecord(frame({ task_session_id: 's2', tool_call_id: 'b1' }), 's2'),
    ];
    const response = await handler(sqsEvent(records));
    expect(response.batchItemFailures).toEqual([]);
    expect((await readAll(t.db)).map((r) => r.tool_call_id).sort()).toEqual(['b1', 'c1', 'lone']);
    const parked = await takeAll(q.sqs, q.dlqUrl);
    expect(parked.map((m) => [m.Body, m.Attributes?.MessageGroupId])).toEqual([
      ['not json', `ungrouped:${loneInvalid.messageId}`],
    ]);
  });

  it('R2-3: a record without attributes that cannot be parked fails alone; the rest of the batch is acknowledged', async () => {
    await seedSession(t.db);
    const { handler } = await handlerFor({ dlqUrl: q.missingQueueUrl });
    const { attributes: _a, messageAttributes: _m, ...rest } = sqsRecord('not json', 's1');
    const loneInvalid = rest as unknown as SQSRecord;
    const records = [loneInvalid, sqsRecord(frame({ tool_call_id: 'c1' }), 's1')];
    const response = await handler(sqsEvent(records));
    expect(failedIds(response)).toEqual([loneInvalid.messageId]);
    expect((await readAll(t.db)).map((r) => r.tool_call_id)).toEqual(['c1']);
  });

  it('AC-27: never logs prompt or result text, even for frames that fail', async () => {
    const secret = 'TOP-SECRET-PROMPT';
    const { handler } = await handlerFor({ dlqUrl: q.missingQueueUrl });
    const records = [
      sqsRecord(frame({ task_session_id: 'gone', subagent_task: { prompt: secret, result_text: secret } }), 'gone'),
      sqsRecord({ ...frame({ subagent_task: { prompt: secret } }), observed_at: 'yesterday' }, 's1'),
    ];
    const { lines } = await captureOutput(() => handler(sqsEvent(records)));
    expect(lines.filter((l) => l.level === 'WARN')).toHaveLength(2);
    expect(JSON.stringify(lines)).not.toContain(secret);
  });
});

describe.each(POSTGRES_TARGETS)('ingest handler connections on %s', (name) => {
  // SQLite is an in-process file: it has no connection that can die while a Lambda is frozen.
  const t = useTestDatabase(name);
  const q = useSqs();

  it('docs/ingest.md: a pooled connection that died between invocations is detected and the batch succeeds on a fresh one', async () => {
    await seedSession(t.db);
    const db = t.connect();
    const handler = createIngestHandler({ db: () => db, sqs: sqsViaSdk(q.sqs), dlqUrl: q.dlqUrl });
    await handler(sqsEvent([sqsRecord(frame({ tool_call_id: 'c1' }), 's1')]));
    t.proxy!.interrupt(); // the sockets die as they do while a Lambda is frozen; the pool has not noticed
    const before = db.stats.roundTrips;
    const response = await handler(sqsEvent([sqsRecord(frame({ tool_call_id: 'c2' }), 's1')]));
    expect(response.batchItemFailures).toEqual([]);
    expect(db.stats.roundTrips - before).toBe(2); // the statement on the dead connection, then its retry
    expect((await readSession(t.db, 's1')).map((r) => r.tool_call_id)).toEqual(['c1', 'c2']);
  });
});

describe.each(TARGETS.filter((n) => n === 'postgres'))('ingest handler group isolation on %s', (name) => {
  // A transient failure confined to one session needs real row locks between connections: PGlite
  // runs every connection on one backend, and SQLite locks the whole database.
  const t = useTestDatabase(name);
  const q = useSqs();

  it('docs/ingest.md: a lock timeout on one session fails that group from its first frame on while the other group commits', async () => {
    for (const s of ['s1', 's2']) await seedSession(t.db, s);
    await t.db.query(
      `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET lock_timeout = %L', current_database(), '200ms'); END $$`,
    );
    const db = t.connect();
    const handler = createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: q.dlqUrl,
      logger: new Logger({ logLevel: 'CRITICAL' }),
    });
    const locker = t.connect({ max: 1 });
    let release!: () => void;
    let held!: Promise<void>;
    await new Promise<void>((locked) => {
      held = locker.transaction(async (tx) => {
        await tx.query(`SELECT id FROM task_sessions WHERE id = 's1' FOR UPDATE`); // blocks the FK check's KEY SHARE
        locked();
        await new Promise<void>((resolve) => (release = resolve));
      });
    });
    const a0 = sqsRecord('not json', 's1');
    const a1 = sqsRecord(frame({ tool_call_id: 'a1' }), 's1');
    const b1 = sqsRecord(frame({ task_session_id: 's2', tool_call_id: 'b1' }), 's2');
    const a2 = sqsRecord(frame({ tool_call_id: 'a2' }), 's1');
    try {
      const response = await handler(sqsEvent([a0, a1, b1, a2]));
      expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([a1.messageId, a2.messageId]);
    } finally {
      release();
      await held;
    }
    expect((await readAll(t.db)).map((r) => r.tool_call_id)).toEqual(['b1']);
    expect((await takeAll(q.sqs, q.dlqUrl)).map((m) => m.Body)).toEqual([a0.body]);
  });
});
