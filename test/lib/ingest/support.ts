import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { Database } from '../../../lib/db/database.js';
import type { TestDatabase } from '../../support/targets.js';

let sequence = 0;

/** A Lambda-shaped SQS record; `body` objects are JSON-encoded, strings sent as they are. */
export function sqsRecord(body: unknown, group: string): SQSRecord {
  const id = `msg-${++sequence}`;
  return {
    messageId: id,
    receiptHandle: `rh-${id}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: '0',
      MessageGroupId: group,
      MessageDeduplicationId: id,
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:frames.fifo',
    awsRegion: 'us-east-1',
  };
}

export function sqsEvent(records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

/** Everything written to stdout and stderr while `fn` runs (Powertools logs and EMF), as parsed JSON lines. */
export async function captureOutput<T>(fn: () => Promise<T>): Promise<{ result: T; lines: Record<string, unknown>[] }> {
  const chunks: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  for (const stream of streams) {
    stream.write = ((chunk: string | Uint8Array) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    }) as typeof stream.write;
  }
  try {
    const result = await fn();
    const lines = chunks
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { result, lines };
  } finally {
    for (const [i, stream] of streams.entries()) stream.write = originals[i]!;
  }
}

/**
 * A database connection for the handler that fails fast while the database is unavailable:
 * on SQLite a 20 ms busy timeout (instead of 5 s), elsewhere the connection itself fails.
 */
export async function handlerDatabase(t: TestDatabase): Promise<Database> {
  const db = t.connect();
  if (t.name === 'sqlite') await db.query('PRAGMA busy_timeout = 20');
  return db;
}

/**
 * Makes the database unreachable for writers until the returned function is called:
 * PostgreSQL targets stop the ws proxy (connections dropped and refused); SQLite holds a write
 * lock from another connection, so writes fail with SQLITE_BUSY, the honest local equivalent.
 */
export async function makeUnavailable(t: TestDatabase): Promise<() => Promise<void>> {
  if (t.proxy) {
    t.proxy.setAvailable(false);
    return async () => t.proxy!.setAvailable(true);
  }
  const locker = t.connect();
  let release!: () => void;
  let held!: Promise<void>;
  await new Promise<void>((acquired) => {
    held = locker.transaction(async () => {
      acquired();
      await new Promise<void>((resolve) => (release = resolve));
    });
  });
  return async () => {
    release();
    await held;
  };
}
