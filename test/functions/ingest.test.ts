import type { SQSBatchResponse } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeDatabaseFromEnv } from '../../lib/db/from-env.js';
import { readSession } from '../../lib/store/read.js';
import { sqsEvent, sqsRecord } from '../lib/ingest/support.js';
import { frame, seedSession } from '../support/frames.js';
import { takeAll, useSqs } from '../support/sqs.js';
import { TARGET_FIXTURES, useTestDatabase } from '../support/targets.js';

const ENV = [
  'DATABASE_URL',
  'DATABASE_WS_PROXY',
  'DLQ_URL',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
] as const;

describe.each(TARGET_FIXTURES)('functions/ingest handler on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  const q = useSqs();
  const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));

  afterEach(async () => {
    await closeDatabaseFromEnv();
    for (const k of ENV)
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
  });

  it('docs/ingest.md: the deployed handler is configured from DATABASE_URL and DLQ_URL alone', async () => {
    await seedSession(t.db);
    Object.assign(process.env, {
      DATABASE_URL: t.url,
      DATABASE_WS_PROXY: t.proxy?.address ?? '',
      DLQ_URL: q.dlqUrl,
      AWS_ENDPOINT_URL_SQS: q.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    vi.resetModules();
    const { handler } = await import('../../functions/ingest.js');
    const response = (await handler(
      sqsEvent([sqsRecord(frame(), 's1'), sqsRecord('nope', 's1')]),
      {} as never,
    )) as SQSBatchResponse;
    expect(response.batchItemFailures).toEqual([]);
    expect(await readSession(t.db, 's1')).toHaveLength(1);
    expect((await takeAll(q.sqs, q.dlqUrl)).map((m) => m.Body)).toEqual(['nope']);
  });
});
