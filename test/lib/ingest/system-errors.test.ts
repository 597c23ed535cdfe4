import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_URL_PARAMETER_ENV, loadDatabaseUrl } from '../../../lib/config/database-url.js';
import type { Database } from '../../../lib/db/database.js';
import { closeDatabaseFromEnv, databaseFromEnv } from '../../../lib/db/from-env.js';
import { openDatabase } from '../../../lib/db/open.js';
import { createIngestHandler } from '../../../lib/ingest/handler.js';
import { sqsViaSdk } from '../../../lib/queue/sqs-via-sdk.js';
import { readAll } from '../../../lib/store/read.js';
import { frame, seedSession } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';
import { POSTGRES_TARGETS, TARGETS, type TestDatabase, useTestDatabase } from '../../support/targets.js';
import { captureOutput, sqsEvent, sqsRecord } from './support.js';

// R2-4 with real faults: a broken database never parks a valid frame; the records stay on the
// queue, the EMF document counts system_error, and an ERROR line names the SQLSTATE.

const failedIds = (response: { batchItemFailures: { itemIdentifier: string }[] }) =>
  response.batchItemFailures.map((f) => f.itemIdentifier);
const emfOf = (lines: Record<string, unknown>[]) => lines.find((l) => '_aws' in l)!;

/** A batch over three sessions: two valid frames of s1, an invalid frame alone in s2, one valid frame of s3. */
function mixedBatch() {
  const valid = [
    sqsRecord(frame({ tool_call_id: 'a1' }), 's1'),
    sqsRecord(frame({ tool_call_id: 'a2' }), 's1'),
    sqsRecord(frame({ task_session_id: 's3', tool_call_id: 'c1' }), 's3'),
  ];
  const invalid = sqsRecord('{"version":2}', 's2');
  return { valid, invalid, records: [valid[0]!, invalid, valid[1]!, valid[2]!] };
}

let roleSequence = 0;

/**
 * A connection as a role that may read but not INSERT into the table (SQLSTATE 42501). On the
 * PostgreSQL server: a login role (trust auth) without the grant. On PGlite every connection shares
 * one backend, so the session itself switches to such a role until `restore()`.
 */
async function withoutInsertGrant(t: TestDatabase): Promise<{ db: Database; restore: () => Promise<void> }> {
  const role = `no_insert_${process.pid}_${++roleSequence}`;
  await t.db.query(`CREATE ROLE ${role} ${t.name === 'postgres' ? 'LOGIN' : ''}`);
  await t.db.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
  await t.db.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
  const dropRole = async () => {
    await t.db.query(`DROP OWNED BY ${role}`);
    await t.db.query(`DROP ROLE ${role}`);
  };
  if (t.name === 'postgres') {
    const url = new URL(t.url);
    url.username = role;
    url.password = '';
    const db = openDatabase(url.toString(), { wsProxy: t.proxy?.address });
    return {
      db,
      restore: async () => {
        await db.close();
        await dropRole();
      },
    };
  }
  await t.db.query(`SET ROLE ${role}`);
  return {
    db: t.connect(),
    restore: async () => {
      await t.db.query('RESET ROLE');
      await dropRole();
    },
  };
}

describe.each(TARGETS)('R2-4 system errors on %s', (name) => {
  const t = useTestDatabase(name);
  const q = useSqs();
  const handlerFor = (db: Database, onCredentialsRejected?: () => void) =>
    createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: q.dlqUrl,
      logger: new Logger({ serviceName: 'subagent-context' }),
      onCredentialsRejected,
    });

  it('R2-4: a dropped table keeps every valid record on the queue, parks only the invalid frame, counts system_error and logs ERROR', async () => {
    for (const s of ['s1', 's3']) await seedSession(t.db, s);
    await t.db.query('DROP TABLE task_session_subagents');
    const db = t.connect();
    const { valid, invalid, records } = mixedBatch();
    const before = db.stats.roundTrips;
    const { result: response, lines } = await captureOutput(() => handlerFor(db)(sqsEvent(records)));
    expect(failedIds(response)).toEqual(valid.map((r) => r.messageId));
    expect(db.stats.roundTrips - before).toBe(1); // no per-group retries of a broken schema
    expect((await takeAll(q.sqs, q.dlqUrl)).map((m) => m.Body)).toEqual([invalid.body]);
    expect(emfOf(lines)).toMatchObject({ attempted: 3, failed: 3, system_error: 3, persisted: 0, invalid: 1 });
    const errors = lines.filter((l) => l.level === 'ERROR');
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatchObject({ failure_kind: 'system', sqlstate: name === 'sqlite' ? '42000' : '42P01' });
  });

  it('R2-4: a row error is still parked with its SQLSTATE and counted failed, not system_error', async () => {
    await seedSession(t.db);
    if (name === 'sqlite') {
      await t.db.query(
        `CREATE TRIGGER refuse BEFORE INSERT ON task_session_subagents WHEN NEW.tool_call_id = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
      );
    } else {
      await t.db.query(`ALTER TABLE task_session_subagents ADD CONSTRAINT refuse CHECK (tool_call_id <> 'bad')`);
    }
    const db = t.connect();
    const bad = sqsRecord(frame({ tool_call_id: 'bad' }), 's1');
    const { result: response, lines } = await captureOutput(() =>
      handlerFor(db)(sqsEvent([bad, sqsRecord(frame({ tool_call_id: 'ok' }), 's1')])),
    );
    expect(response.batchItemFailures).toEqual([]);
    const parked = await takeAll(q.sqs, q.dlqUrl);
    expect(parked.map((m) => m.MessageAttributes?.failure?.StringValue)).toEqual(['permanent_write_error']);
    expect(parked[0]?.MessageAttributes?.reason?.StringValue).toMatch(/23514/);
    expect(emfOf(lines)).toMatchObject({ persisted: 1, failed: 1, system_error: 0 });
  });
});

describe.each(POSTGRES_TARGETS)('R2-4 privileges on %s', (name) => {
  const t = useTestDatabase(name);
  const q = useSqs();

  it('R2-4: a revoked INSERT grant (42501) keeps every valid record on the queue and parks none', async () => {
    for (const s of ['s1', 's3']) await seedSession(t.db, s);
    const { db, restore } = await withoutInsertGrant(t);
    const { valid, invalid, records } = mixedBatch();
    try {
      const handler = createIngestHandler({
        db: () => db,
        sqs: sqsViaSdk(q.sqs),
        dlqUrl: q.dlqUrl,
        logger: new Logger({ serviceName: 'subagent-context' }),
      });
      const { result: response, lines } = await captureOutput(() => handler(sqsEvent(records)));
      expect(failedIds(response)).toEqual(valid.map((r) => r.messageId));
      expect(emfOf(lines)).toMatchObject({ failed: 3, system_error: 3 });
      expect(lines.find((l) => l.level === 'ERROR')).toMatchObject({ sqlstate: '42501', failure_kind: 'system' });
    } finally {
      await restore();
    }
    expect((await takeAll(q.sqs, q.dlqUrl)).map((m) => m.Body)).toEqual([invalid.body]);
    expect(await readAll(t.db)).toEqual([]);
  });
});

describe.each(TARGETS.filter((n) => n === 'postgres'))('R2-4 authentication on %s', (name) => {
  // The test server trusts 127.0.0.1 (pg_hba), so a wrong password cannot be rejected there; a role
  // that may not log in (28000) and a missing database (3D000) are the real rejections available.
  const t = useTestDatabase(name);
  const q = useSqs();
  const saved = {
    url: process.env.DATABASE_URL,
    parameter: process.env[DATABASE_URL_PARAMETER_ENV],
    proxy: process.env.DATABASE_WS_PROXY,
  };
  afterEach(async () => {
    await closeDatabaseFromEnv();
    await t.db.query(`DROP ROLE IF EXISTS no_login_${process.pid}`);
    for (const [key, value] of [
      ['DATABASE_URL', saved.url],
      [DATABASE_URL_PARAMETER_ENV, saved.parameter],
      ['DATABASE_WS_PROXY', saved.proxy],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it.each([
    [
      '28000',
      'a role that may not log in',
      async (url: URL) => {
        const role = `no_login_${process.pid}`;
        await t.db.query(
          `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} NOLOGIN PASSWORD 'right-password'; END IF; END $$`,
        );
        url.username = role;
        url.password = 'wrong-password';
      },
    ],
    [
      '3D000',
      'a database that does not exist',
      async (url: URL) => {
        url.pathname = '/no_such_database_here';
      },
    ],
  ] as const)(
    'R2-4: %s (%s) keeps the batch on the queue, then the secret is read again from SSM and the next batch lands',
    async (sqlstate, _what, breakUrl) => {
      await seedSession(t.db);
      const broken = new URL(t.url);
      await breakUrl(broken);
      // The "SSM parameter": first the broken URL, then (after rotation) the right one.
      const served = [broken.toString(), t.url];
      const reads: string[] = [];
      const readParameter = async (parameterName: string) => {
        reads.push(parameterName);
        return served[Math.min(reads.length - 1, served.length - 1)]!;
      };
      delete process.env.DATABASE_URL;
      process.env[DATABASE_URL_PARAMETER_ENV] = '/subagent-context/test/database-url';
      process.env.DATABASE_WS_PROXY = t.proxy!.address;
      const handler = createIngestHandler({
        db: databaseFromEnv,
        sqs: sqsViaSdk(q.sqs),
        dlqUrl: q.dlqUrl,
        logger: new Logger({ serviceName: 'subagent-context' }),
      });

      await loadDatabaseUrl({ readParameter });
      const first = sqsRecord(frame({ tool_call_id: 'c1' }), 's1');
      const { result: response, lines } = await captureOutput(() => handler(sqsEvent([first])));
      expect(failedIds(response)).toEqual([first.messageId]);
      expect(emfOf(lines)).toMatchObject({ failed: 1, system_error: 1 });
      expect(lines.find((l) => l.level === 'ERROR')).toMatchObject({ sqlstate, failure_kind: 'system' });
      expect(JSON.stringify(lines)).not.toContain('wrong-password');
      expect(await takeAll(q.sqs, q.dlqUrl)).toEqual([]);

      await loadDatabaseUrl({ readParameter });
      const second = await handler(sqsEvent([first]));
      expect(second.batchItemFailures).toEqual([]);
      expect(reads).toHaveLength(2);
      expect((await readAll(t.db)).map((r) => r.tool_call_id)).toEqual(['c1']);
    },
  );
});
