import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { type SendMessageBatchClient, signedSqs } from '../../../lib/aws/sqs.js';
import type { Database } from '../../../lib/db/database.js';
import { DatabaseError } from '../../../lib/db/errors.js';
import { openDatabase } from '../../../lib/db/open.js';
import { startWsProxy } from '../../../lib/db/ws-proxy.js';
import { withinInvocation } from '../../../lib/deadline.js';
import { createIngestHandler } from '../../../lib/ingest/handler.js';
import { MigrationError, runMigration } from '../../../lib/migrate/run-migration.js';
import { sqsViaSdk } from '../../../lib/queue/sqs-via-sdk.js';
import { sqsClientFor } from '../../../local/fauxqs.js';
import { startSilentEndpoint, startSqsFaultProxy } from '../../../local/sqs-faults.js';
import { frame, seedSession } from '../../support/frames.js';
import { takeAll, useSqs } from '../../support/sqs.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { captureOutput, makeUnavailable, sqsEvent, sqsRecord } from './support.js';

// R2-5 with real silent endpoints: a WebSocket server and a TCP listener that accept and never
// answer (the database), and an HTTP server that never answers (the DLQ). Each test measures the
// milliseconds to failure and asserts it stays inside the budget the Lambda context gives.

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** The ingest function's deadline (lib/ingest/handler.ts sets the same owner). */
const INGEST = { caller: 'function', work: 'ingest' } as const;

/** A Lambda context with `ms` left. */
const contextWith = (ms: number) => {
  const end = Date.now() + ms;
  return { getRemainingTimeInMillis: () => end - Date.now() } as never;
};

async function silentWebSocket(): Promise<string> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  cleanups.push(async () => {
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as { port: number };
  return `127.0.0.1:${port}`;
}

/** A database whose every connection reaches a peer that accepts and never answers. */
async function silentDatabase(kind: 'websocket' | 'tcp'): Promise<Database> {
  if (kind === 'websocket') {
    const db = openDatabase('postgres://app:s3cret-pw@127.0.0.1:5432/app', { wsProxy: await silentWebSocket() });
    cleanups.push(async () => void db.close().catch(() => undefined)); // a hung pool ends on its own connect timeout
    return db;
  }
  const listener = await startSilentEndpoint();
  const proxy = await startWsProxy();
  const db = openDatabase(`postgres://app:s3cret-pw@${new URL(listener.endpoint).host}/app`, {
    wsProxy: proxy.address,
  });
  cleanups.push(
    () => listener.close(),
    () => proxy.close(),
    async () => void db.close().catch(() => undefined),
  );
  return db;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - started) };
}

describe.each(['websocket', 'tcp'] as const)('R2-5: a database peer (%s) that accepts and never answers', (kind) => {
  it('R2-5: a statement fails as a system error at the deadline, not at the function timeout', async () => {
    const db = await silentDatabase(kind);
    db.setDeadline(Date.now() + 400, INGEST);
    const { value: error, ms } = await timed(() => db.query('SELECT 1').catch((err: unknown) => err));
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({ kind: 'system', sqlstate: undefined, driverCode: 'ETIMEDOUT' });
    expect(String((error as Error).message)).not.toContain('s3cret-pw');
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(1000);
  });
});

describe('R2-5: the ingest handler inside the Lambda budget', () => {
  const q = useSqs();

  it('R2-5: a silent database ends the invocation in time with every valid record as a batch item failure; the invalid frame is parked', async () => {
    const db = await silentDatabase('websocket');
    const handler = createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: q.dlqUrl,
      logger: new Logger({ serviceName: 'subagent-context' }),
    });
    const valid = [sqsRecord(frame({ tool_call_id: 'c1' }), 's1'), sqsRecord(frame({ task_session_id: 's2' }), 's2')];
    const invalid = sqsRecord('{"version":2}', 's3');
    const budget = 3000;
    const { value, ms } = await timed(() =>
      captureOutput(() => handler(sqsEvent([...valid, invalid]), contextWith(budget))),
    );
    expect(value.result.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(valid.map((r) => r.messageId));
    expect(ms).toBeLessThan(budget - 500); // the 1 s response margin, and the DLQ's share, are kept
    expect((await takeAll(q.sqs, q.dlqUrl)).map((m) => m.Body)).toEqual([invalid.body]);
    expect(value.lines.find((l) => '_aws' in l)).toMatchObject({ failed: 2, system_error: 2, invalid: 1 });
    expect(value.lines.find((l) => l.level === 'ERROR')).toMatchObject({
      failure_kind: 'system',
      driver_code: 'ETIMEDOUT',
    });
  });

  it.each(['signed fetch (deployed)', 'SDK client (local)'] as const)(
    'R2-5: a DLQ endpoint that never answers (%s): the invalid frame is a batch item failure before the Lambda times out',
    async (client) => {
      const proxy = await startSqsFaultProxy(q.endpoint, () => ({ call: 'stall' }));
      cleanups.push(() => proxy.close());
      let sqs: SendMessageBatchClient;
      if (client === 'SDK client (local)') {
        const sdk = sqsClientFor(proxy.endpoint);
        cleanups.push(async () => sdk.destroy());
        sqs = sqsViaSdk(sdk);
      } else {
        const saved = { ...process.env };
        Object.assign(process.env, {
          AWS_ENDPOINT_URL_SQS: proxy.endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
        });
        cleanups.push(async () => {
          for (const key of ['AWS_ENDPOINT_URL_SQS', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) {
            if (saved[key] === undefined) delete process.env[key];
            else process.env[key] = saved[key];
          }
        });
        sqs = signedSqs;
      }
      const db = openDatabase('sqlite::memory:');
      cleanups.push(() => db.close());
      const handler = createIngestHandler({
        db: () => db,
        sqs,
        dlqUrl: q.dlqUrl,
        logger: new Logger({ logLevel: 'CRITICAL' }),
      });
      const invalid = sqsRecord('not json', 's1');
      const budget = 2000;
      const { value: response, ms } = await timed(() => handler(sqsEvent([invalid]), contextWith(budget)));
      expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual([invalid.messageId]);
      expect(ms).toBeGreaterThanOrEqual(budget - 1000 - 100);
      expect(ms).toBeLessThan(budget - 500);
      expect(proxy.calls).toHaveLength(1);
    },
  );
});

describe.each(TARGETS)('R2-5 on %s', (name) => {
  const t = useTestDatabase(name);
  const q = useSqs();

  it('R2-5: a database that hangs (held lock / cut proxy) ends the batch within the budget with batch item failures', async () => {
    await seedSession(t.db);
    const db = t.connect();
    const handler = createIngestHandler({
      db: () => db,
      sqs: sqsViaSdk(q.sqs),
      dlqUrl: q.dlqUrl,
      logger: new Logger({ logLevel: 'CRITICAL' }),
    });
    const records = [sqsRecord(frame({ tool_call_id: 'c1' }), 's1'), sqsRecord(frame({ tool_call_id: 'c2' }), 's1')];
    const restore = await makeUnavailable(t);
    try {
      const budget = 2500;
      const { value: response, ms } = await timed(() => handler(sqsEvent(records), contextWith(budget)));
      expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(records.map((r) => r.messageId));
      expect(ms).toBeLessThan(budget - 500);
    } finally {
      await restore();
    }
  });

  // PGlite runs in this process: its pg_sleep blocks the event loop, so only the server can show it.
  it.skipIf(name !== 'postgres')(
    'R2-5: a long statement inside a transaction is cancelled by the server at the deadline (SET LOCAL statement_timeout)',
    async () => {
      const db = t.connect();
      db.setDeadline(Date.now() + 400, INGEST);
      const { value: error, ms } = await timed(() =>
        db.transaction((tx) => tx.query('SELECT pg_sleep(5)')).catch((err: unknown) => err),
      );
      expect(error).toBeInstanceOf(DatabaseError);
      expect((error as DatabaseError).kind).toBe('system');
      expect(ms).toBeLessThan(1200);
    },
  );

  it.skipIf(name !== 'postgres')(
    'R2-5: a batch sent as one pipeline (BEGIN, SET LOCAL statement_timeout, the rounds, COMMIT) ends at the deadline',
    async () => {
      const db = t.connect();
      db.setDeadline(Date.now() + 400, INGEST);
      const { value: error, ms } = await timed(() =>
        db.batch([{ sql: 'SELECT pg_sleep(5)' }, { sql: 'SELECT 1' }]).catch((err: unknown) => err),
      );
      expect(error).toBeInstanceOf(DatabaseError);
      expect((error as DatabaseError).kind).toBe('system');
      expect(ms).toBeLessThan(1200);
      db.setDeadline(undefined);
      expect(await db.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
      // The pipeline's statements run under the invocation's timeout, not the connection's 25 s
      // (a division by zero otherwise), and the next statement under the connection's again.
      const bounded = "SELECT 1 / (current_setting('statement_timeout') <> '25s')::int";
      db.setDeadline(Date.now() + 10_000, INGEST);
      await db.batch([{ sql: bounded }, { sql: bounded }]);
      db.setDeadline(undefined);
      expect(await db.query('SHOW statement_timeout')).toEqual([{ statement_timeout: '25s' }]);
    },
  );

  it('R2-5: migrate on a database that stops answering fails in time and names the step', async () => {
    const db = await silentDatabase('websocket');
    const { value: error, ms } = await timed(() =>
      withinInvocation(db, contextWith(1800), (d) => runMigration(d)).catch((err: unknown) => err),
    );
    expect(error).toBeInstanceOf(MigrationError);
    expect(error).toMatchObject({ step: 'schema', failureClass: 'system' });
    expect(ms).toBeLessThan(1500);
  });
});
