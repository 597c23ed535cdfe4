import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { CONTENT_TYPES, DATED_TAG, publishReport } from '../../../lib/publish/run.js';
import { createS3Client, PublishError, s3Writer } from '../../../lib/publish/s3.js';
import { foldersFor, type PublishTarget } from '../../../lib/publish/target.js';
import type { ReportDocument } from '../../../lib/report/document.js';
import { CONTENT_SECURITY_POLICY } from '../../../lib/report/render/style.js';
import { puts, useS3 } from '../../support/s3.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R5-6 (docs/publish.md): one publish run against fauxqs' real S3 through the SDK, on every
 * database target. The proxy in front of fauxqs (test/support/s3.ts) sees each request as sent and
 * refuses the ones a test names, as S3 would: the faults are real responses on the real path.
 */

const T1 = new Date('2026-08-12T13:04:05.678Z');
const T2 = new Date('2026-08-12T14:00:09.000Z');

async function seed(db: Queryable): Promise<void> {
  await insertRows(db, [
    {
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'a',
      total_tokens: 1200,
      observed_at: '2026-08-12T12:00:00Z',
    },
    {
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'b',
      parent_tool_call_id: 'a',
      observed_at: '2026-08-12T12:00:01Z',
    },
    {
      task_session_id: 's2',
      task_id: 't2',
      turn_id: 'u2',
      tool_call_id: 'c',
      total_tokens: 34,
      observed_at: '2026-08-11T09:00:00Z',
    },
  ]);
}

describe.each(TARGETS)('R5-6 publish run on %s', (name) => {
  const t = useTestDatabase(name);
  const s3 = useS3();
  const target = (): PublishTarget => ({ bucket: s3.bucket, prefix: 'team/reports' });
  const run = (startedAt: Date, bounds?: { requestTimeoutMs: number }) => {
    const client = createS3Client(bounds === undefined ? {} : { ...bounds, connectTimeoutMs: 500, maxAttempts: 1 });
    const writer = s3Writer(client, s3.bucket, { prefix: 'team/reports', ...bounds });
    return publishReport(t.db, writer, target(), { startedAt, graceSeconds: 0 }).finally(() => client.destroy());
  };

  it('R5-6: writes PREFIX/YYYY-MM-DD/HHMMSSZ/ (UTC, the run start) then PREFIX/latest/, the JSON before the page in each', async () => {
    await seed(t.db);
    const summary = await run(T1);
    const dated = 'team/reports/2026-08-12/130405Z/';
    expect(foldersFor('team/reports', T1)).toEqual({ dated, latest: 'team/reports/latest/' });
    const order = [
      `${dated}report.json`,
      `${dated}index.html`,
      'team/reports/latest/report.json',
      'team/reports/latest/index.html',
    ];
    expect(puts(s3.requests)).toEqual(order);
    expect(summary.objects.map((o) => o.key)).toEqual(order);
    expect(await s3.keys()).toEqual([...order].sort());
    expect(summary.generated_at).toBe('2026-08-12T13:04:05.678000Z');
  });

  it('R5-6: each object has its content type, the page’s CSP and cache-control: no-store; the dated copies carry the lifecycle tag', async () => {
    await seed(t.db);
    const summary = await run(T1);
    for (const o of summary.objects) {
      const sent = s3.requests.find((r) => r.method === 'PUT' && r.key === o.key)!;
      const isPage = o.key.endsWith('index.html');
      const type = isPage ? CONTENT_TYPES.html : CONTENT_TYPES.json;
      expect(sent.headers['content-type'], o.key).toBe(type);
      expect(sent.headers['cache-control'], o.key).toBe('no-store');
      expect(sent.headers['x-amz-meta-content-security-policy'], o.key).toBe(CONTENT_SECURITY_POLICY);
      expect(sent.headers['x-amz-tagging'], o.key).toBe(o.key.includes('/latest/') ? undefined : DATED_TAG);
      const stored = await s3.get(o.key);
      expect(stored.contentType, o.key).toBe(type);
      expect(stored.metadata['content-security-policy'], o.key).toBe(CONTENT_SECURITY_POLICY);
      expect(Buffer.byteLength(stored.body), o.key).toBe(o.bytes);
      expect(o.content_type).toBe(type);
    }
    const page = (await s3.get('team/reports/latest/index.html')).body;
    // one definition of the policy: the header is the page's own meta
    expect(page).toContain(
      `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY.replaceAll("'", '&#39;')}">`,
    );
  });

  it('R5-6: the JSON is the document the page was rendered from, the same in the dated folder and latest/', async () => {
    await seed(t.db);
    const summary = await run(T1);
    const latest = (await s3.get('team/reports/latest/report.json')).body;
    expect((await s3.get(`${summary.dated}report.json`)).body).toBe(latest);
    expect((await s3.get(`${summary.dated}index.html`)).body).toBe(
      (await s3.get('team/reports/latest/index.html')).body,
    );
    const doc = JSON.parse(latest) as ReportDocument;
    expect(doc.totals.subagents).toBe(3);
    expect(doc.series?.day?.length).toBe(2);
    expect(doc.trees.length).toBe(2);
    expect(summary.completeness).toMatch(/^shortfall not checked; verified through never/);
  });

  it('R5-6: a run that finds nothing changed still refreshes latest/ with its own generation time', async () => {
    await seed(t.db);
    await run(T1);
    await run(T2);
    const doc = JSON.parse((await s3.get('team/reports/latest/report.json')).body) as ReportDocument;
    expect(doc.generated_at).toBe('2026-08-12T14:00:09.000000Z');
    expect((await s3.get('team/reports/latest/index.html')).body).toContain('datetime="2026-08-12T14:00:09.000000Z"');
    expect((await s3.keys()).filter((k) => k.endsWith('report.json'))).toEqual([
      'team/reports/2026-08-12/130405Z/report.json',
      'team/reports/2026-08-12/140009Z/report.json',
      'team/reports/latest/report.json',
    ]);
  });

  it('R5-6: a run that fails between the dated copy and latest/ leaves latest/ as it was; the error names the action and the prefix', async () => {
    await seed(t.db);
    await run(T1);
    const before = await Promise.all(['report.json', 'index.html'].map((f) => s3.get(`team/reports/latest/${f}`)));
    await insertRows(t.db, [
      { task_session_id: 's3', task_id: 't3', tool_call_id: 'd', observed_at: '2026-08-12T13:30:00Z' },
    ]);
    s3.refuse({
      when: (r) => r.method === 'PUT' && r.key.startsWith('team/reports/latest/'),
      answer: { status: 403, code: 'AccessDenied', message: 'Access Denied' },
    });
    const failed = await run(T2).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(PublishError);
    expect((failed as Error).message).toBe(
      `access denied: s3:PutObject of s3://${s3.bucket}/team/reports/latest/report.json (S3 answered AccessDenied (HTTP 403)): allow s3:PutObject on arn:aws:s3:::${s3.bucket}/team/reports/* for the caller (deployed: the publish role may write only there; docs/publish.md#who-can-write-and-read)`,
    );
    const after = await Promise.all(['report.json', 'index.html'].map((f) => s3.get(`team/reports/latest/${f}`)));
    expect(after.map((o) => o.body)).toEqual(before.map((o) => o.body));
    // the failed run's dated copy is complete, and has the new row
    const dated = JSON.parse((await s3.get('team/reports/2026-08-12/140009Z/report.json')).body) as ReportDocument;
    expect(dated.totals.subagents).toBe(4);
    // the dated pair was written, then latest/'s JSON was refused and nothing followed it
    expect(puts(s3.requests).slice(-3)).toEqual([
      'team/reports/2026-08-12/140009Z/report.json',
      'team/reports/2026-08-12/140009Z/index.html',
      'team/reports/latest/report.json',
    ]);
  });

  it('R5-6: the page is never written to latest/ before its JSON: a refused JSON leaves the previous page', async () => {
    await seed(t.db);
    await run(T1);
    const page = (await s3.get('team/reports/latest/index.html')).body;
    s3.refuse({
      when: (r) => r.method === 'PUT' && r.key === 'team/reports/latest/report.json',
      answer: { status: 403, code: 'AccessDenied', message: 'Access Denied' },
    });
    await expect(run(T2)).rejects.toThrow(PublishError);
    expect(puts(s3.requests).at(-1)).toBe('team/reports/latest/report.json');
    expect((await s3.get('team/reports/latest/index.html')).body).toBe(page);
  });

  it('R5-6: a missing bucket is named, with how to fix it', async () => {
    const client = createS3Client();
    const writer = s3Writer(client, 'no-such-reports-bucket', { prefix: 'p' });
    const failed = await publishReport(t.db, writer, { bucket: 'no-such-reports-bucket', prefix: 'p' }).catch(
      (e: unknown) => e as Error,
    );
    client.destroy();
    expect(failed).toBeInstanceOf(PublishError);
    expect((failed as Error).message).toMatch(
      /^the bucket "no-such-reports-bucket" does not exist at http:\/\/127\.0\.0\.1:\d+\/ \(AWS_ENDPOINT_URL_S3\) \(S3 answered NoSuchBucket \(HTTP 404\) to s3:PutObject and s3:PutObjectTagging of s3:\/\/no-such-reports-bucket\/p\/\d{4}-\d\d-\d\d\/\d{6}Z\/report\.json\): create it/,
    );
  });

  it('R5-6: a KMS denial says it is the bucket’s key, and what to grant', async () => {
    s3.refuse({
      when: (r) => r.method === 'PUT',
      answer: {
        status: 403,
        code: 'AccessDenied',
        message:
          'User: arn:aws:sts::1:assumed-role/x is not authorized to perform: kms:GenerateDataKey on resource: arn:aws:kms:eu-west-1:1:key/k',
      },
    });
    const failed = await run(T1).catch((e: unknown) => e as Error);
    expect((failed as Error).message).toMatch(
      /^the bucket's KMS key refused the write of s3:\/\/[^ ]+\/team\/reports\/2026-08-12\/130405Z\/report\.json \(S3 answered AccessDenied \(HTTP 403\): .*kms:GenerateDataKey.*\): let the caller use the bucket's key \(kms:GenerateDataKey and kms:Decrypt/,
    );
    expect(await s3.keys()).toEqual([]);
  });

  it('R5-6: an endpoint that does not answer fails the run within its bound, naming the endpoint', async () => {
    s3.refuse({ when: () => true, answer: 'hang' });
    const started = Date.now();
    const failed = await run(T1, { requestTimeoutMs: 1_500 }).catch((e: unknown) => e as Error);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((failed as Error).message).toMatch(
      /^the S3 endpoint http:\/\/127\.0\.0\.1:\d+\/ \(AWS_ENDPOINT_URL_S3\) did not answer s3:PutObject and s3:PutObjectTagging of s3:\/\/[^ ]+ within 1\.5 s \(\w+\): check the endpoint/,
    );
  });
});
