import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/database.js';
import { clearsByItself, provesDatabaseUnusable } from '../../../lib/db/errors.js';
import { createIngestHandler } from '../../../lib/ingest/handler.js';
import { sqsViaSdk } from '../../../lib/queue/sqs-via-sdk.js';
import { readAll } from '../../../lib/store/read.js';
import type { Micros } from '../../../lib/time.js';
import { frame, seedSession } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';
import { POSTGRES_TARGETS, TARGETS, type TestDatabase, useTestDatabase } from '../../support/targets.js';
import { captureOutput, sqsEvent, sqsRecord } from './support.js';

// docs/ingest.md#write-failures "a failure in one message group never delays another group's records", R2-4 by evidence
// (issue 20 D3): real faults — a host trigger that refuses one frame with any SQLSTATE, a
// row-level-security policy that refuses one row — never send other sessions' frames back to the
// queue; the refused frame is parked with its SQLSTATE.

const SESSIONS = ['s1', 's2', 's3', 's4', 's5'];
const NOW = 1_786_541_098_123_456n as Micros;
const POISON = 'poison';
/** rows without their generated `id` (a new UUID each time a row is first written) */
const withoutIds = (rows: readonly Record<string, unknown>[]) => rows.map(({ id: _id, ...row }) => row);
const failedIds = (response: { batchItemFailures: { itemIdentifier: string }[] }) =>
  response.batchItemFailures.map((f) => f.itemIdentifier);

/** A trigger refusing the frame whose tool_call_id is 'poison' with `sqlstate` (SQLite: RAISE(ABORT), its only way). */
async function poisonTrigger(t: TestDatabase, sqlstate: string): Promise<void> {
  if (t.name === 'sqlite') {
    await t.db.query('DROP TRIGGER IF EXISTS poison');
    await t.db.query(
      `CREATE TRIGGER poison BEFORE INSERT ON task_session_subagents WHEN NEW.tool_call_id = '${POISON}' BEGIN SELECT RAISE(ABORT, 'the host refuses this frame'); END`,
    );
    return;
  }
  await t.db.query(
    `CREATE OR REPLACE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the host refuses this frame' USING ERRCODE = '${sqlstate}'; END $$`,
  );
  await t.db.query('DROP TRIGGER IF EXISTS poison ON task_session_subagents');
  await t.db.query(
    `CREATE TRIGGER poison BEFORE INSERT OR UPDATE ON task_session_subagents FOR EACH ROW WHEN (NEW.tool_call_id = '${POISON}') EXECUTE FUNCTION poison()`,
  );
}

/** s1's poisoned frame first, then one healthy frame of each of s2…s5 (the defect's batch). */
function defectBatch(): { poisoned: SQSRecord; healthy: SQSRecord[]; records: SQSRecord[] } {
  const poisoned = sqsRecord(frame({ task_session_id: 's1', tool_call_id: POISON }), 's1');
  const healthy = SESSIONS.slice(1).map((s) => sqsRecord(frame({ task_session_id: s, tool_call_id: `c-${s}` }), s));
  return { poisoned, healthy, records: [poisoned, ...healthy] };
}

/**
 * A connection for the handler. PGlite's socket server multiplexes every connection onto one
 * backend message by message, so two concurrent pipelined transactions interleave there (one's
 * statements run inside the other's transaction and roll back with it, "portal "" cannot be run"):
 * on PGlite the handler gets one connection; on SQLite and PostgreSQL the pool as deployed.
 */
const connectionFor = (t: TestDatabase) => t.connect(t.name === 'pglite' ? { max: 1 } : {});

function handlerFor(db: Database, q: ReturnType<typeof useSqs>) {
  return createIngestHandler({
    db: () => db,
    sqs: sqsViaSdk(q.sqs),
    dlqUrl: q.dlqUrl,
    logger: new Logger({ serviceName: 'subagent-context', logLevel: 'SILENT' }),
    clock: () => NOW,
  });
}

describe.each(TARGETS)(
  'R2-4 by evidence, one group never delays another (docs/ingest.md#write-failures): one refused frame on %s',
  (name) => {
    const t = useTestDatabase(name);
    const q = useSqs();

    it("R2-4: a host trigger refusing s1's frame lets s2…s5 land and parks s1's frame with its SQLSTATE", async () => {
      for (const s of SESSIONS) await seedSession(t.db, s);
      await poisonTrigger(t, 'P0001');
      const { poisoned, healthy, records } = defectBatch();
      const { result: response } = await captureOutput(() => handlerFor(connectionFor(t), q)(sqsEvent(records)));
      expect(failedIds(response)).toEqual([]);
      expect((await readAll(t.db)).map((r) => r.tool_call_id).sort()).toEqual(healthy.map((_, i) => `c-s${i + 2}`));
      const parked = await takeAll(q.sqs, q.dlqUrl);
      expect(parked.map((m) => m.Body)).toEqual([poisoned.body]);
      expect(parked[0]?.MessageAttributes?.failure?.StringValue).toBe('permanent_write_error');
      expect(parked[0]?.MessageAttributes?.reason?.StringValue).toMatch(name === 'sqlite' ? /23514/ : /P0001/);
    });
  },
);

describe.each(POSTGRES_TARGETS)(
  'R2-4 by evidence, one group never delays another (docs/ingest.md#write-failures): any SQLSTATE a trigger raises on %s',
  (name) => {
    const t = useTestDatabase(name);
    const q = useSqs();

    it.each(['P0001', '42501', 'XX000', '25006', 'HV000', '2F003', '23514', '22023'])(
      'R2-4: a trigger raising %s for one frame: the other sessions land, the frame is parked with it',
      async (sqlstate) => {
        for (const s of SESSIONS) await seedSession(t.db, s);
        await poisonTrigger(t, sqlstate);
        const { poisoned, healthy, records } = defectBatch();
        const { result: response } = await captureOutput(() => handlerFor(connectionFor(t), q)(sqsEvent(records)));
        expect(failedIds(response)).toEqual([]);
        expect(await readAll(t.db)).toHaveLength(healthy.length);
        const parked = await takeAll(q.sqs, q.dlqUrl);
        expect(parked.map((m) => m.Body)).toEqual([poisoned.body]);
        expect(parked[0]?.MessageAttributes?.reason?.StringValue).toContain(`SQLSTATE ${sqlstate}`);
      },
    );

    it.each(['57014', '40001'])(
      'R2-4: a trigger raising %s (time or contention: it clears by itself) keeps only that frame on the queue; the other sessions land',
      async (sqlstate) => {
        for (const s of SESSIONS) await seedSession(t.db, s);
        await poisonTrigger(t, sqlstate);
        const { poisoned, healthy, records } = defectBatch();
        const { result: response } = await captureOutput(() => handlerFor(connectionFor(t), q)(sqsEvent(records)));
        expect(failedIds(response)).toEqual([poisoned.messageId]);
        expect(await readAll(t.db)).toHaveLength(healthy.length);
        expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);
      },
    );

    it('R2-4: a row-level security policy refusing one row (42501) parks that frame; the others land', async () => {
      for (const s of SESSIONS) await seedSession(t.db, s);
      const role = `rls_writer_${process.pid}_${Date.now() % 100000}`;
      await t.db.query(`CREATE ROLE ${role} ${name === 'postgres' ? 'LOGIN' : ''}`);
      await t.db.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await t.db.query(`GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await t.db.query('ALTER TABLE task_session_subagents ENABLE ROW LEVEL SECURITY');
      await t.db.query(
        `CREATE POLICY not_poison ON task_session_subagents TO ${role} USING (true) WITH CHECK (tool_call_id <> '${POISON}')`,
      );
      let db: Database;
      if (name === 'postgres') {
        const url = new URL(t.url);
        url.username = role;
        url.password = '';
        const { openDatabase } = await import('../../../lib/db/open.js');
        db = openDatabase(url.toString(), { wsProxy: t.proxy?.address });
      } else {
        await t.db.query(`SET ROLE ${role}`); // PGlite: one backend shared by every connection
        db = connectionFor(t);
      }
      const { poisoned, healthy, records } = defectBatch();
      try {
        const { result: response } = await captureOutput(() => handlerFor(db, q)(sqsEvent(records)));
        expect(failedIds(response)).toEqual([]);
      } finally {
        if (name === 'postgres') await db.close();
        else await t.db.query('RESET ROLE');
        await t.db.query('DROP POLICY not_poison ON task_session_subagents');
        await t.db.query(`DROP OWNED BY ${role}`);
        await t.db.query(`DROP ROLE ${role}`);
      }
      expect(await readAll(t.db)).toHaveLength(healthy.length);
      const parked = await takeAll(q.sqs, q.dlqUrl);
      expect(parked.map((m) => m.Body)).toEqual([poisoned.body]);
      expect(parked[0]?.MessageAttributes?.reason?.StringValue).toMatch(/42501/);
    });

    /** SQLSTATE classes PostgreSQL's errcodes list under which an error can be raised (not 00/01/02: no error). */
    const ERROR_CLASSES = [
      '0A',
      '0B',
      '0F',
      '0L',
      '0P',
      '0Z',
      '20',
      '21',
      '22',
      '23',
      '24',
      '25',
      '26',
      '27',
      '2B',
      '2D',
      '2F',
      '34',
      '38',
      '39',
      '3B',
      '3F',
      '40',
      '42',
      '44',
      '54',
      '55',
      '57',
      '72',
      'F0',
      'HV',
      'P0',
      'XX',
    ];
    const anyRaisable = fc
      .tuple(fc.constantFrom(...ERROR_CLASSES), fc.stringMatching(/^[0-9A-Z]{3}$/))
      .map(([cls, rest]) => cls + rest)
      .filter((code) => !provesDatabaseUnusable(code)); // those keep every frame on the queue by design (R2-4)

    it('R2-4 property: for any batch with one poisoned frame (any SQLSTATE a trigger can raise), every other frame lands exactly as without it', async () => {
      for (const s of SESSIONS.slice(0, 3)) await seedSession(t.db, s);
      const db = connectionFor(t);
      const handler = handlerFor(db, q);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ session: fc.constantFrom('s1', 's2', 's3'), call: fc.constantFrom('a', 'b', 'c') }), {
            minLength: 1,
            maxLength: 6,
          }),
          fc.nat(),
          fc.constantFrom('s1', 's2', 's3'),
          anyRaisable,
          async (frames, at, poisonSession, sqlstate) => {
            const records = frames.map((f, i) =>
              sqsRecord(
                frame({
                  task_session_id: f.session,
                  tool_call_id: `${f.session}-${f.call}`,
                  observed_at: `2026-08-12T13:24:${String(10 + i).padStart(2, '0')}.000000Z`,
                  subagent_task: { description: `step ${i}` },
                }),
                f.session,
              ),
            );
            const poisoned = sqsRecord(frame({ task_session_id: poisonSession, tool_call_id: POISON }), poisonSession);
            const index = at % (records.length + 1);
            const withPoison = [...records.slice(0, index), poisoned, ...records.slice(index)];
            // frames behind a poison that clears by itself stay on the queue with it (the FIFO rule)
            const expectedLanding = clearsByItself(sqlstate)
              ? withPoison.filter(
                  (r, i) => r !== poisoned && !(i > index && r.attributes.MessageGroupId === poisonSession),
                )
              : records;

            await t.db.query('DELETE FROM task_session_subagents');
            await handler(sqsEvent(expectedLanding));
            const reference = withoutIds(await readAll(t.db));

            await t.db.query('DELETE FROM task_session_subagents');
            await poisonTrigger(t, sqlstate);
            try {
              await captureOutput(() => handler(sqsEvent(withPoison)));
            } finally {
              await t.db.query('DROP TRIGGER IF EXISTS poison ON task_session_subagents');
            }
            expect(withoutIds(await readAll(t.db))).toEqual(reference);
            await takeAll(q.sqs, q.dlqUrl);
          },
        ),
        { numRuns: 25 },
      );
    }, 120_000);
  },
);
