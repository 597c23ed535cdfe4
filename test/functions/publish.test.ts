import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { describe, expect, it } from 'vitest';
import { createPublishHandler, PUBLISH_BUCKET_ENV, PUBLISH_PREFIX_ENV } from '../../lib/publish/handler.js';
import { redactError } from '../../lib/redact.js';
import { puts, useS3 } from '../support/s3.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * The scheduled publish's handler (R5-6, docs/publish.md): the run of lib/publish/run.ts with the
 * stack's bucket and prefix, one log line either way, and a failure thrown (Lambda counts it; the
 * publish-errors alarm tells the alarm topic) with latest/ left as it was.
 */

interface Line {
  level: string;
  message: string;
  attributes: LogAttributes;
}

class KeepingFormatter extends LogFormatter {
  constructor(private readonly lines: Line[]) {
    super();
  }
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    this.lines.push({ level: attributes.logLevel, message: attributes.message, attributes: additional });
    return new LogItem({ attributes: { message: attributes.message } });
  }
}

describe.each(TARGETS)('R5-6 the scheduled publish handler on %s', (name) => {
  const t = useTestDatabase(name);
  const s3 = useS3();
  const handler = (env: NodeJS.ProcessEnv) => {
    const lines: Line[] = [];
    const logger = new Logger({ serviceName: 'test', logLevel: 'DEBUG', logFormatter: new KeepingFormatter(lines) });
    return { run: createPublishHandler({ db: () => t.db, env, logger }), lines };
  };

  it('R5-6: publishes to PUBLISH_BUCKET under PUBLISH_PREFIX and logs what it wrote', async () => {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: '2026-08-12T13:00:00Z' },
    ]);
    const { run, lines } = handler({ [PUBLISH_BUCKET_ENV]: s3.bucket, [PUBLISH_PREFIX_ENV]: 'reports' });
    const summary = await run({}, { getRemainingTimeInMillis: () => 60_000 });
    expect(puts(s3.requests).map((k) => k.replace(/\d{4}-\d\d-\d\d\/\d{6}Z/, 'D'))).toEqual([
      'reports/D/report.json',
      'reports/D/index.html',
      'reports/latest/report.json',
      'reports/latest/index.html',
    ]);
    expect(summary.objects).toHaveLength(4);
    expect(lines.map((l) => [l.level, l.message])).toEqual([['INFO', 'report published']]);
    expect(lines[0]!.attributes.completeness).toBe(summary.completeness);
  });

  it('R5-6: a failed run throws, logs the failure and leaves latest/ as it was', async () => {
    const { run: first } = handler({ [PUBLISH_BUCKET_ENV]: s3.bucket, [PUBLISH_PREFIX_ENV]: 'reports' });
    await first();
    const before = (await s3.get('reports/latest/report.json')).body;
    await new Promise((r) => setTimeout(r, 1_100)); // a new dated folder (one per second)
    s3.refuse({
      when: (r) => r.method === 'PUT' && r.key.startsWith('reports/latest/'),
      answer: { status: 403, code: 'AccessDenied', message: 'Access Denied' },
    });
    const { run, lines } = handler({ [PUBLISH_BUCKET_ENV]: s3.bucket, [PUBLISH_PREFIX_ENV]: 'reports' });
    await expect(run()).rejects.toThrow(/^access denied: s3:PutObject of s3:\/\/[^/]+\/reports\/latest\/report\.json/);
    expect(lines.map((l) => [l.level, l.message])).toEqual([['ERROR', 'report publish failed']]);
    expect((await s3.get('reports/latest/report.json')).body).toBe(before);
  });

  it('R5-6 / issue 57 #8: with 4 s left, an S3 endpoint that holds the PUT fails the run within the invocation and logs what to change', async () => {
    s3.refuse({ when: (r) => r.method === 'PUT', answer: 'hang' });
    const { run, lines } = handler({ [PUBLISH_BUCKET_ENV]: s3.bucket, [PUBLISH_PREFIX_ENV]: 'reports' });
    const started = Date.now();
    const failed = (await run({}, { getRemainingTimeInMillis: () => 4_000 }).catch((e: unknown) => e)) as Error;
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(failed.message).toMatch(
      /^the scheduled publish ran out of the invocation's time before s3:PutObject of s3:\/\/[^ ]+\/reports\/\d{4}-\d\d-\d\d\/\d{6}Z\/report\.json was done: raise the publish function's timeout \(serverless\.yml functions\.publish\.timeout, 300 s\)/,
    );
    expect(failed.message).toMatch(/Nothing was written; s3:\/\/[^ ]+\/reports\/latest\/ is as it was$/);
    expect(lines.map((l) => [l.level, l.message])).toEqual([['ERROR', 'report publish failed']]);
  });

  it('R4-2, R4-9 / issue 57 #7: S3’s 2 MB error text is logged cut, once per field, never whole', async () => {
    const body = `refused\nFORGED line ${'x'.repeat(2_000_000)}`;
    s3.refuse({ when: (r) => r.method === 'PUT', answer: { status: 400, code: 'InvalidArgument', message: body } });
    const { run, lines } = handler({ [PUBLISH_BUCKET_ENV]: s3.bucket, [PUBLISH_PREFIX_ENV]: 'reports' });
    const failed = (await run().catch((e: unknown) => e)) as Error;
    expect(failed.message).not.toContain('\n');
    // what the logger serialises: the error, its stack and its cause chain
    const logged = JSON.stringify(redactError(lines[0]!.attributes.error));
    expect(logged.length).toBeLessThan(8_000);
    expect(logged).toContain('(2000020 characters in all)');
  });

  it('R5-6: without PUBLISH_BUCKET it says how the function is deployed', async () => {
    const { run } = handler({});
    await expect(run()).rejects.toThrow('PUBLISH_BUCKET is not set: deploy with serverless.yml (publishEnabled)');
  });
});
