import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startWsProxy } from '../lib/db/ws-proxy.js';
import { CHECKPOINT_KEY } from '../lib/health/checkpoint.js';
import { formatKey } from '../lib/time.js';
import { buildFunction } from './bundle.js';
import { BASELINE_SQL } from './read-side.js';
import { generateReadStore, READ_STORE_END, type ReadStore } from './read-store.js';
import { type DeployedShape, readServerlessConfig } from './serverless-config.js';
import { median, timed } from './stats.js';
import type { BenchTarget } from './targets.js';

/*
 * R5-6 (issue 49): one publish run at scale, within the function's memory size and timeout. On the
 * read side's bench store (bench/read-store.ts), each run is a fresh process (bench/publish-child.ts)
 * so its wall time and peak RSS are its own: the function's handler writing to fauxqs' S3, beside
 * the same report and page built alone (no S3: the reference) and the database's own one-pass
 * aggregate (bench/read-side.ts BASELINE_SQL), all in the same run. On PostgreSQL the deployed
 * bundle runs too, loaded by Node 22 (Lambda's nodejs22.x) with no loader of ours: the process
 * Lambda would run. Then what ECharts' SSR costs at cold start (bench/cold-start.ts, the publish
 * bundle against the export bundle) and whether the other functions' bundles are as they were
 * before the publish function came (built from that commit with the same esbuild settings).
 */

export type PublishCase = 'reference' | 'publish' | 'publish, deployed bundle';

export interface PublishRun {
  ms: number;
  /** user + system CPU of the run (the process's; PostgreSQL's own work is the server's) */
  cpuMs: number;
  peakRssMiB: number;
  jsonBytes: number;
  pageBytes: number;
  objects: number;
  completeness?: string;
  error?: string;
}

export interface PublishCaseFigures {
  case: PublishCase;
  /** the Node that ran it */
  node: string;
  /** medians of the runs (NaN when one failed) */
  ms: number;
  cpuMs: number;
  /** the largest of the runs */
  peakRssMiB: number;
  runs: PublishRun[];
  error?: string;
}

export interface PublishFigures {
  target: BenchTarget['name'];
  store: ReadStore;
  generateMs: number;
  baselineMs: number;
  baselinePerRunMs: number[];
  cases: PublishCaseFigures[];
}

export interface S3Endpoint {
  endpoint: string;
  bucket: string;
  prefix: string;
}

const exec = promisify(execFile);
const CHILD = fileURLToPath(new URL('./publish-child.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));

/** Loads the bundle, invokes its handler once as Lambda would, prints the run's figures (then exits: the pool stays open). */
const INVOKE = `const { handler } = require(process.argv[1]);
const deadline = Date.now() + Number(process.argv[2]) * 1000;
const context = { functionName: 'publish', functionVersion: '1', invokedFunctionArn: 'arn:aws:lambda:us-east-1:0:function:publish',
  memoryLimitInMB: process.argv[3], awsRequestId: 'bench', logGroupName: 'g', logStreamName: 's', getRemainingTimeInMillis: () => deadline - Date.now() };
const cpu = process.cpuUsage(); const start = performance.now();
const done = (out) => { out.peakRssMiB = process.resourceUsage().maxRSS / 1024; process.stdout.write('\\n' + JSON.stringify(out)); process.exit(0); };
handler({}, context).then((s) => { const used = process.cpuUsage(cpu); done({ ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000,
  objects: s.objects.length, jsonBytes: s.objects.find((o) => o.key.endsWith('.json')).bytes, pageBytes: s.objects.find((o) => o.key.endsWith('.html')).bytes, completeness: s.completeness }); },
  (err) => done({ error: String((err && err.message) || err) }));`;

export async function benchPublish(
  target: BenchTarget,
  plan: {
    messages: number;
    runs: number;
    s3: S3Endpoint;
    shape: DeployedShape;
    /** the deployed publish bundle and the Node to load it with (PostgreSQL only: the functions' database) */
    bundle?: { file: string; node: string };
  },
): Promise<PublishFigures> {
  const bench = await target.fresh();
  const proxy = target.name === 'sqlite' ? undefined : await startWsProxy();
  try {
    const { db } = bench;
    const generated = await timed(() => generateReadStore(db, plan.messages));
    // as deployed: the scheduled health check verified all but the last 5 minutes
    await db.query('DELETE FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]);
    await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [
      CHECKPOINT_KEY,
      formatKey(READ_STORE_END - 300_000_000n),
    ]);
    const pool = bench.connect({ max: 4 });
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: bench.url,
      PUBLISH_BUCKET: plan.s3.bucket,
      PUBLISH_PREFIX: plan.s3.prefix,
      // the SDK's own configuration, as an operator (or Lambda) sets it
      AWS_ENDPOINT_URL_S3: plan.s3.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
    };
    const cases: PublishCase[] = [
      'reference',
      'publish',
      ...(plan.bundle && proxy ? (['publish, deployed bundle'] as const) : []),
    ];
    const runs = new Map<PublishCase, PublishRun[]>(cases.map((c) => [c, []]));
    const baseline: number[] = [];
    for (let i = 0; i < plan.runs; i++) {
      for (const which of cases) {
        // the database's own aggregate beside each run, so the ratio sees the same load
        baseline.push((await timed(() => pool.query(BASELINE_SQL))).ms);
        const run =
          which === 'publish, deployed bundle'
            ? await bundleChild(plan.bundle!, plan.shape, { ...env, DATABASE_WS_PROXY: proxy!.address })
            : await tsxChild(which, env);
        runs.get(which)!.push(run);
      }
    }
    return {
      target: target.name,
      store: generated.result,
      generateMs: generated.ms,
      baselineMs: median(baseline),
      baselinePerRunMs: baseline,
      cases: cases.map((which) => {
        const all = runs.get(which)!;
        const failed = all.find((r) => r.error !== undefined);
        return {
          case: which,
          node: which === 'publish, deployed bundle' ? nodeVersion(plan.bundle!.node) : `${process.version} (tsx)`,
          ms: failed ? Number.NaN : median(all.map((r) => r.ms)),
          cpuMs: failed ? Number.NaN : median(all.map((r) => r.cpuMs)),
          peakRssMiB: Math.max(...all.map((r) => r.peakRssMiB)),
          runs: all,
          ...(failed ? { error: failed.error } : {}),
        };
      }),
    };
  } finally {
    await proxy?.close();
    await bench.dispose();
  }
}

function parseRun(stdout: string): PublishRun {
  const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  return {
    ms: Number(out.ms ?? Number.NaN),
    cpuMs: Number(out.cpuMs ?? Number.NaN),
    peakRssMiB: Number(out.peakRssMiB),
    jsonBytes: Number(out.jsonBytes ?? 0),
    pageBytes: Number(out.pageBytes ?? 0),
    objects: Number(out.objects ?? 0),
    ...(typeof out.completeness === 'string' ? { completeness: out.completeness } : {}),
    ...(typeof out.error === 'string' ? { error: out.error } : {}),
  };
}

const FAILED = (err: unknown): PublishRun => ({
  ms: Number.NaN,
  cpuMs: Number.NaN,
  peakRssMiB: Number.NaN,
  jsonBytes: 0,
  pageBytes: 0,
  objects: 0,
  error: (err as Error).message,
});

async function tsxChild(which: 'reference' | 'publish', env: NodeJS.ProcessEnv): Promise<PublishRun> {
  try {
    const { stdout } = await exec(process.execPath, [TSX, CHILD, which], {
      maxBuffer: 1 << 20,
      env: { ...process.env, ...env },
    });
    return parseRun(stdout);
  } catch (err) {
    return FAILED(err);
  }
}

async function bundleChild(
  bundle: { file: string; node: string },
  shape: DeployedShape,
  env: NodeJS.ProcessEnv,
): Promise<PublishRun> {
  try {
    const { stdout } = await exec(
      bundle.node,
      ['-e', INVOKE, bundle.file, String(shape.timeoutSeconds.publish), String(shape.memoryMb.publish)],
      // the function's environment from serverless.yml (NODE_OPTIONS=--enable-source-maps included), nothing else of this process's
      { maxBuffer: 1 << 20, env: { PATH: process.env.PATH, ...shape.environment.publish, ...env } },
    );
    return parseRun(stdout);
  } catch (err) {
    return FAILED(err);
  }
}

function nodeVersion(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

export interface BundleComparison {
  /** the commit the others were built at: the main before the publish function was merged */
  base: { commit: string };
  functions: { name: string; bytes: number; baseBytes: number; identical: boolean; publishOnly: string[] }[];
}

/** What only the publish function should carry: ECharts' SSR and the S3 client. */
const PUBLISH_ONLY = ['echarts', 'zrender', '@aws-sdk/client-s3'];

/**
 * The commit before the publish function came: the first-parent ancestor of HEAD that added
 * functions/publish.ts (the merge that brought it), its first parent. BENCH_BUNDLE_BASE overrides.
 */
export function bundleBase(): string {
  const override = process.env.BENCH_BUNDLE_BASE;
  if (override) return override;
  const added = execFileSync(
    'git',
    ['log', '--first-parent', '--diff-filter=A', '--format=%H', 'HEAD', '--', 'functions/publish.ts'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .at(-1);
  if (!added)
    throw new Error('no commit on the first-parent history added functions/publish.ts: set BENCH_BUNDLE_BASE');
  return `${added}^1`;
}

/**
 * Every function but publish built as deployed here and at `base` (a checkout of that commit, this
 * checkout's node_modules: only our own sources differ), byte for byte compared.
 */
export async function compareBundles(shape: DeployedShape, base: string): Promise<BundleComparison> {
  const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-base-'));
  try {
    const checkout = join(dir, 'checkout');
    mkdirSync(checkout);
    execFileSync('sh', ['-c', `git archive "$1" | tar -x -C "$2"`, 'sh', base, checkout]);
    symlinkSync(resolve('node_modules'), join(checkout, 'node_modules'));
    const before = readServerlessConfig(join(checkout, 'serverless.yml'));
    const functions: BundleComparison['functions'] = [];
    for (const [name, entry] of Object.entries(shape.entries)) {
      if (name === 'publish' || before.entries[name] === undefined) continue;
      const now = await buildFunction(shape, entry, join(dir, 'now', name));
      const then = await buildFunction(before, before.entries[name]!, join(dir, 'base', name), checkout);
      functions.push({
        name,
        bytes: now.bytes,
        baseBytes: then.bytes,
        identical: readFileSync(now.file).equals(readFileSync(then.file)),
        publishOnly: now.inputs.map(([pkg]) => pkg).filter((pkg) => PUBLISH_ONLY.includes(pkg)),
      });
    }
    const commit = execFileSync('git', ['rev-parse', '--short', base], { encoding: 'utf8' }).trim();
    return { base: { commit }, functions };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
