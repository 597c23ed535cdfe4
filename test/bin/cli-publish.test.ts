import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import type { Queryable } from '../../lib/db/database.js';
import type { ReportDocument } from '../../lib/report/document.js';
import { chromiumMissing, launchChromium } from '../support/browser.js';
import { runCliCaptured, runCliJson, testProxyEnv } from '../support/cli-run.js';
import { resolve } from '../support/page-figures.js';
import { linkExpiry, puts, useS3 } from '../support/s3.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * `subagent-context publish --to s3://BUCKET/PREFIX` (R5-6, docs/publish.md): the real CLI
 * in-process against fauxqs' S3 behind a front that checks each request as S3 does (the SigV4
 * signature, a link's expiry, the bucket's region: test/support/s3.ts), configured as an operator
 * would (AWS_ENDPOINT_URL_S3, AWS_REGION and keys in the environment), and the printed link
 * opened, by fetch and in Chromium, through that front.
 */

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-publish-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function seed(db: Queryable): Promise<void> {
  await insertRows(db, [
    {
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'a',
      subagent_type: 'Explore',
      total_tokens: 41_237,
      duration_ms: 48_211,
      observed_at: '2026-08-12T13:00:00Z',
    },
    {
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'b',
      parent_tool_call_id: 'a',
      subagent_type: 'Plan',
      observed_at: '2026-08-12T13:00:05Z',
    },
    {
      task_session_id: 's2',
      task_id: 't2',
      turn_id: 'u2',
      tool_call_id: 'c',
      model: 'gpt-5',
      total_tokens: 275_717,
      duration_ms: 1_204_113,
      observed_at: '2026-08-11T14:00:00Z',
    },
  ]);
}

/** Everything after the run's generation time is the same document (the page's clock is the run's). */
const sansTime = (doc: ReportDocument) => ({ ...doc, generated_at: 'x' });

describe.each(TARGETS)('R5-6 publish --to on %s', (name) => {
  const t = useTestDatabase(name);
  const s3 = useS3();
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });
  const cli = (...argv: string[]) => runCliJson(argv, testProxyEnv());

  it('R5-6: --json says what it wrote (keys, bytes, completeness) and gives a link; the JSON is report --json --html’s document', async () => {
    await seed(t.db);
    const run = await cli('publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/ops/subagents/`, '--json');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const out = run.json;
    expect(out.bucket).toBe(s3.bucket);
    expect(out.prefix).toBe('ops/subagents');
    expect(out.objects.map((o: { key: string }) => o.key)).toEqual(puts(s3.requests));
    expect(out.objects.map((o: { key: string }) => o.key.replace(/\d{4}-\d\d-\d\d\/\d{6}Z/, 'D'))).toEqual([
      'ops/subagents/D/report.json',
      'ops/subagents/D/index.html',
      'ops/subagents/latest/report.json',
      'ops/subagents/latest/index.html',
    ]);
    for (const o of out.objects) expect(o.bytes).toBe(Buffer.byteLength((await s3.get(o.key)).body));
    expect(out.completeness).toMatch(/^shortfall not checked; /);
    expect(out.url).toMatch(
      new RegExp(
        `^${s3.endpoint}/${s3.bucket}/ops/subagents/latest/index\\.html\\?.*X-Amz-Expires=3600.*X-Amz-Signature=[0-9a-f]{64}`,
      ),
    );
    const published = JSON.parse((await s3.get('ops/subagents/latest/report.json')).body) as ReportDocument;
    expect(published.generated_at).toBe(out.generated_at);
    const file = join(dir, `${name}.html`);
    const report = await runCliCaptured(['report', '--database-url', t.url, '--json', '--html', file], testProxyEnv());
    expect(report.code, report.stderr).toBe(EXIT.ok);
    expect(sansTime(published)).toEqual(sansTime(JSON.parse(report.stdout) as ReportDocument));
    expect(readFileSync(file, 'utf8').length).toBeGreaterThan(0);
  });

  it('R5-6: without --json it prints the objects, the completeness line and the link, nothing redacted from the link', async () => {
    await seed(t.db);
    const run = await runCliCaptured(
      ['publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/p`, '--url-seconds', '604800'],
      testProxyEnv(),
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^published the report generated \S+Z to http:\/\/127\.0\.0\.1:\d+\/ \(AWS_ENDPOINT_URL_S3\):$/,
    );
    expect(
      lines.slice(1, 5).map((l) => l.replace(/\d{4}-\d\d-\d\d\/\d{6}Z/, 'D').replace(/[\d,]+ bytes/, 'N bytes')),
    ).toEqual([
      `  s3://${s3.bucket}/p/D/report.json (N bytes)`,
      `  s3://${s3.bucket}/p/D/index.html (N bytes)`,
      `  s3://${s3.bucket}/p/latest/report.json (N bytes)`,
      `  s3://${s3.bucket}/p/latest/index.html (N bytes)`,
    ]);
    expect(lines[5]).toMatch(/^completeness: shortfall not checked; /);
    expect(lines[6]).toMatch(/^the page, for 7 days \(until \S+Z\):$/);
    expect(lines[7]).toMatch(/X-Amz-Expires=604800&.*X-Amz-Signature=[0-9a-f]{64}/);
    expect(run.stderr).not.toContain('X-Amz');
  });

  it.skipIf(chromiumMissing() !== undefined)(
    'R5-6: the page fetched through the link opens in Chromium with the same figures as the published JSON',
    async () => {
      await seed(t.db);
      const run = await cli('publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/p`, '--json');
      expect(run.code, run.stderr).toBe(EXIT.ok);
      const doc = JSON.parse((await s3.get('p/latest/report.json')).body) as ReportDocument;
      const browser = await launchChromium();
      try {
        const page = await browser.context.newPage();
        const response = await page.goto(run.json.url);
        expect(response?.status()).toBe(200);
        expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
        expect(await page.title()).toMatch(/^Subagents report, /);
        const figures = await page.$$eval('[data-figure]', (els) =>
          els.map((e) => ({
            path: e.getAttribute('data-figure')!,
            value: e.hasAttribute('data-null')
              ? null
              : e.tagName === 'TIME'
                ? e.getAttribute('datetime')
                : e.getAttribute('value') === 'null'
                  ? null
                  : Number(e.getAttribute('value')),
          })),
        );
        expect(figures.length).toBeGreaterThan(20);
        for (const f of figures) expect(f.value, f.path).toEqual(resolve(doc, f.path));
        expect(figures.find((f) => f.path === 'totals.subagents')?.value).toBe(3);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  it('R5-6: the printed link opens through an S3 that checks signatures (the page uploaded, byte for byte); the link altered in any signed part is refused', async () => {
    await seed(t.db);
    const run = await cli('publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/p`, '--json');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    // every write was signed in its headers and passed the check: the test S3 is not lenient on them
    expect(s3.requests.map((r) => [r.method, r.verdict, typeof r.headers.authorization])).toEqual(
      Array(4).fill(['PUT', 'valid', 'string']),
    );
    const uploaded = Buffer.from((await s3.get('p/latest/index.html')).body);
    const page = await fetch(run.json.url);
    expect(page.status).toBe(200);
    expect(Buffer.from(await page.arrayBuffer()).equals(uploaded)).toBe(true);
    expect(s3.requests.at(-1)?.verdict).toBe('valid');
    const altered = (change: (url: URL) => void) => {
      const url = new URL(run.json.url);
      change(url);
      return url;
    };
    const refusals = [
      altered((u) => {
        const signature = u.searchParams.get('X-Amz-Signature')!;
        u.searchParams.set('X-Amz-Signature', `${signature[0] === '0' ? '1' : '0'}${signature.slice(1)}`);
      }),
      altered((u) => {
        u.pathname = u.pathname.replace('/latest/index.html', '/latest/report.json');
      }),
      altered((u) => u.searchParams.set('X-Amz-Expires', '604800')),
      altered((u) => {
        for (const name of [...u.searchParams.keys()]) u.searchParams.delete(name);
      }),
    ];
    const answers = [];
    for (const url of refusals) {
      const refused = await fetch(url);
      answers.push([refused.status, /<Code>(\w+)<\/Code>/.exec(await refused.text())?.[1]]);
    }
    expect(answers).toEqual([
      [403, 'SignatureDoesNotMatch'],
      [403, 'SignatureDoesNotMatch'],
      [403, 'SignatureDoesNotMatch'],
      [403, 'AccessDenied'],
    ]);
  });

  it('R5-6: the printed expiry is the link’s own, X-Amz-Date + X-Amz-Expires, to the second, in the text and the JSON', async () => {
    await seed(t.db);
    const json = await cli('publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/p`, '--json');
    expect(json.code, json.stderr).toBe(EXIT.ok);
    expect(json.json.url_expires_at).toBe(new Date(linkExpiry(json.json.url)).toISOString());
    const text = await runCliCaptured(
      ['publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/p`, '--url-seconds', '90'],
      testProxyEnv(),
    );
    expect(text.code, text.stderr).toBe(EXIT.ok);
    const [, until, url] = /\nthe page, for 90 seconds \(until (\S+)\):\n(\S+)\n$/.exec(text.stdout) ?? [];
    expect(until).toBe(new Date(linkExpiry(url!)).toISOString());
  });

  it('R5-6: the link stops opening once its printed expiry has passed (a 5-second link, waited out)', async () => {
    await seed(t.db);
    const run = await cli(
      'publish',
      '--database-url',
      t.url,
      '--to',
      `s3://${s3.bucket}/p`,
      '--url-seconds',
      '5',
      '--json',
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const until = Date.parse(run.json.url_expires_at);
    expect(until).toBe(linkExpiry(run.json.url));
    expect(Date.now(), 'the link had expired before it could be opened').toBeLessThan(until);
    expect((await fetch(run.json.url)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, until - Date.now() + 1_100));
    const late = await fetch(run.json.url);
    expect(late.status).toBe(403);
    expect(await late.text()).toContain('<Message>Request has expired</Message>');
  }, 15_000);

  it('R5-6: --to and --url-seconds are checked before anything runs (exit 2, naming the flag)', async () => {
    const bad = async (args: string[], message: RegExp) => {
      const run = await runCliCaptured(['publish', '--database-url', t.url, ...args], testProxyEnv());
      expect(run.code, args.join(' ')).toBe(EXIT.usage);
      expect(run.stderr).toMatch(message);
    };
    await bad([], /^publish needs --to s3:\/\/BUCKET\/PREFIX/);
    await bad(['--to', 'https://bucket/p'], /^--to needs an s3:\/\/BUCKET\/PREFIX URL/);
    await bad(['--to', 's3://Bad_Bucket/p'], /^--to "Bad_Bucket" is not an S3 bucket name/);
    await bad(['--to', 's3://bucket/a//b'], /^--to the prefix "a\/\/b" has an empty/);
    await bad(['--to', `s3://${s3.bucket}/p`, '--url-seconds', '604801'], /^--url-seconds is at most 604800 \(7 days/);
    await bad(
      ['--to', `s3://${s3.bucket}/p`, '--url-seconds', '0'],
      /^--url-seconds needs a positive count of seconds/,
    );
    await bad(['--to', `s3://${s3.bucket}/p`, '--url-seconds', '1.5'], /^--url-seconds needs a positive count/);
    await bad(['--to', `s3://${s3.bucket}/p`, '--by', 'task'], /^--by does not apply to publish/);
    expect(s3.requests).toEqual([]);
  });

  it('R5-6: a refused write exits 1 with what to fix, and prints no link', async () => {
    await seed(t.db);
    s3.refuse({
      when: (r) => r.method === 'PUT' && r.key.startsWith('p/latest/'),
      answer: { status: 403, code: 'AccessDenied', message: 'Access Denied' },
    });
    const run = await cli('publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/p`, '--json');
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toContain(`access denied: s3:PutObject of s3://${s3.bucket}/p/latest/report.json`);
    expect(run.stderr).toContain(`allow s3:PutObject on arn:aws:s3:::${s3.bucket}/p/* for the caller`);
    expect(run.json).toEqual({ error: expect.stringContaining('access denied'), name: 'PublishError' });
    expect(run.stdout).not.toContain('X-Amz-');
  });
});
