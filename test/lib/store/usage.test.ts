import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { createIngestHandler } from '../../../lib/ingest/handler.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import type { RunUsage } from '../../../lib/producer/usage/run-usage.js';
import { sqsViaSdk } from '../../../lib/queue/sqs-via-sdk.js';
import { readAll, readSession } from '../../../lib/store/read.js';
import { readSessionUsage } from '../../../lib/store/usage-read.js';
import { USAGE_TABLE } from '../../../lib/store/usage-table.js';
import { writeBatch } from '../../../lib/store/write.js';
import { frame, seedSession, write } from '../../support/frames.js';
import { useSqs } from '../../support/sqs.js';
import { TARGET_FIXTURES, TARGETS, type TestDatabase, useTestDatabase } from '../../support/targets.js';
import { captureOutput, handlerDatabase, sqsEvent, sqsRecord } from '../ingest/support.js';

const at = (second: number) => `2026-08-12T13:24:${String(second).padStart(2, '0')}.000000Z`;

/** A write of subagent c1 observed at `second` carrying `usage` (none when undefined). */
const withUsage = (second: number, usage?: RunUsage | Record<string, unknown>, call = 'c1') =>
  write({ tool_call_id: call, observed_at: at(second), subagent_task: usage === undefined ? {} : { usage } });

const stored = async (t: TestDatabase, call = 'c1') =>
  (await readSessionUsage(t.db, 's1')).find((row) => row.tool_call_id === call);

describe.each(TARGETS)('R6-2: run usage stored beside the row on %s', (name) => {
  const t = useTestDatabase(name);

  it('R6-2: a frame with usage writes the row and its usage, keyed like the row, as of the frame', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(1, { tokens_in: 10, requests: 2, complete: true, model: 'm1' })]);
    expect(await readSession(t.db, 's1')).toHaveLength(1);
    expect(await readSessionUsage(t.db, 's1')).toEqual([
      {
        task_session_id: 's1',
        agent_execution_id: 'e1',
        tool_call_id: 'c1',
        tokens_in: 10,
        tokens_out: null,
        tokens_cached_read: null,
        tokens_cached_write: null,
        tokens_reasoning: null,
        requests: 2,
        cost_subcents: null,
        cost_source: null,
        model: 'm1',
        complete: 1,
        observed_at: '2026-08-12T13:24:01.000000Z',
      },
    ]);
  });

  it('R6-2: no column is added to the host table; a frame without usage writes no usage row', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(1)]);
    expect(Object.keys((await readAll(t.db))[0]!)).not.toContain('tokens_in');
    expect(await readSessionUsage(t.db, 's1')).toEqual([]);
  });

  it('R6-2: the newest usage replaces the stored one as a whole, never field by field', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(1, { tokens_in: 10, tokens_out: 5, model: 'm1' })]);
    await writeBatch(t.db, [withUsage(2, { tokens_in: 30 })]);
    expect(await stored(t)).toMatchObject({ tokens_in: 30, tokens_out: null, model: null });
  });

  it('R6-2: an older usage never regresses the stored one', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(5, { tokens_in: 50 })]);
    await writeBatch(t.db, [withUsage(2, { tokens_in: 20 })]);
    expect(await stored(t)).toMatchObject({ tokens_in: 50, observed_at: at(5) });
  });

  it('R6-2: a newer frame without usage never blanks it', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(1, { tokens_in: 10 })]);
    await writeBatch(t.db, [withUsage(9)]);
    expect(await stored(t)).toMatchObject({ tokens_in: 10, observed_at: at(1) });
  });

  it('R6-2: complete never goes back to false: a newer usage that is not final leaves a final one', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(1, { tokens_in: 10, complete: true })]);
    await writeBatch(t.db, [withUsage(2, { tokens_in: 3, complete: false })]);
    await writeBatch(t.db, [withUsage(3, { tokens_in: 4 })]);
    expect(await stored(t)).toMatchObject({ tokens_in: 10, complete: 1 });
    await writeBatch(t.db, [withUsage(4, { tokens_in: 12, complete: true })]);
    expect(await stored(t)).toMatchObject({ tokens_in: 12, complete: 1 });
  });

  it('R6-2: a batch of one subagent’s frames leaves what they leave one at a time', async () => {
    await seedSession(t.db);
    const frames = [
      withUsage(3, { tokens_in: 3 }),
      withUsage(1, { tokens_in: 1 }),
      withUsage(4),
      withUsage(2, { tokens_in: 2, complete: true }),
      withUsage(5, { tokens_in: 5, complete: true }, 'c2'),
      withUsage(3, { tokens_in: 33 }),
    ];
    await writeBatch(t.db, frames);
    const batched = await readSessionUsage(t.db, 's1');
    await t.db.query(`DELETE FROM ${USAGE_TABLE}`);
    for (const f of frames) await writeBatch(t.db, [f]);
    expect(await readSessionUsage(t.db, 's1')).toEqual(batched);
    expect(batched.map((row) => row.tokens_in)).toEqual([33, 5]);
  });

  it('R6-2: deleting the session deletes its usage (ON DELETE CASCADE)', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [withUsage(1, { tokens_in: 10 })]);
    if (name === 'sqlite') await t.db.query('PRAGMA foreign_keys = ON');
    await t.db.query("DELETE FROM task_session_subagents WHERE task_session_id = 's1'");
    await t.db.query("DELETE FROM task_sessions WHERE id = 's1'");
    expect(await readSessionUsage(t.db, 's1')).toEqual([]);
  });

  it('R6-2: the usage is written in the row’s transaction: a rejected usage row leaves neither', async () => {
    await seedSession(t.db);
    if (name === 'sqlite') {
      await t.db.query(
        `CREATE TRIGGER reject_usage BEFORE INSERT ON ${USAGE_TABLE} BEGIN SELECT RAISE(ABORT, 'usage rejected'); END`,
      );
    } else {
      await t.db.query(
        `CREATE FUNCTION reject_usage() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'usage rejected' USING ERRCODE = 'check_violation'; END $$`,
      );
      await t.db.query(
        `CREATE TRIGGER reject_usage BEFORE INSERT ON ${USAGE_TABLE} FOR EACH ROW EXECUTE FUNCTION reject_usage()`,
      );
    }
    await expect(writeBatch(t.db, [withUsage(1, { tokens_in: 10 })])).rejects.toThrow(/usage rejected/);
    expect(await readAll(t.db)).toEqual([]);
  });
});

describe.each(TARGET_FIXTURES)('R6-1: usage through the ingest handler on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  const q = useSqs();

  it('R6-1: a malformed usage field is not reported and counts the frame anomalous_value; the rest lands', async () => {
    await seedSession(t.db);
    const db = await handlerDatabase(t);
    const handler = createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: q.dlqUrl,
      logger: new Logger({ serviceName: 'subagent-context' }),
    });
    const records = [
      sqsRecord(frame({ subagent_task: { usage: { tokens_in: -4, tokens_out: 7, cost_source: 'free' } } }), 's1'),
      sqsRecord(frame({ tool_call_id: 'c2', subagent_task: { usage: 'all of it' } }), 's1'),
    ];
    const { result, lines } = await captureOutput(() => handler(sqsEvent(records)));
    expect(result.batchItemFailures).toEqual([]);
    expect(await readAll(t.db)).toHaveLength(2);
    expect(await readSessionUsage(t.db, 's1')).toMatchObject([
      { tool_call_id: 'c1', tokens_in: null, tokens_out: 7, cost_source: null },
    ]);
    const summary = lines.find((line) => 'anomalous_value' in line || line.message === 'batch processed');
    expect(JSON.stringify(lines)).toContain('"anomalous_value":2');
    expect(summary).toBeDefined();
  });

  it('R6-2: on a store migrated before the usage table, a batch with usage stays on the queue (a problem of the system) until migrate adds it', async () => {
    await seedSession(t.db);
    await t.db.query(`DROP TABLE ${USAGE_TABLE}`);
    const db = await handlerDatabase(t);
    const handler = createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: q.dlqUrl,
      logger: new Logger({ serviceName: 'subagent-context', logLevel: 'CRITICAL' }),
    });
    const withUsage = sqsRecord(frame({ subagent_task: { usage: { tokens_in: 4 } } }), 's1');
    const plain = sqsRecord(frame({ task_session_id: 's2', tool_call_id: 'c2' }), 's2');
    await seedSession(t.db, 's2');
    const response = await handler(sqsEvent([withUsage, plain]));
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([withUsage.messageId, plain.messageId]);
    expect(await readAll(t.db)).toEqual([]);
    await runMigration(t.db);
    expect((await handler(sqsEvent([withUsage, plain]))).batchItemFailures).toEqual([]);
    expect(await readSessionUsage(t.db, 's1')).toMatchObject([{ tokens_in: 4 }]);
  });
});
