import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import { buildFunction } from './bundle.js';
import { benchColdStart, type ColdStartFigures, NODE22_BINARY } from './cold-start.js';
import { machineFacts } from './machine.js';
import { type BundleComparison, benchPublish, bundleBase, compareBundles, type PublishFigures } from './publish.js';
import { BASELINE_SQL } from './read-side.js';
import { markers, replaceSection } from './sections.js';
import { readServerlessConfig } from './serverless-config.js';
import { startTargets } from './targets.js';

/**
 * `npm run bench -- publish`: the publish function at scale (R5-6, issue 49), its own run and its
 * own section of BENCHMARKS.md (between the markers; the default run keeps it). BENCH_PUBLISH_MESSAGES
 * (default 1000000), BENCH_PUBLISH_RUNS (default 3), BENCH_PUBLISH_TARGETS (default every target),
 * BENCH_COLD_RUNS (default 5), BENCH_BUNDLE_BASE (default the commit before the publish function's
 * merge), BENCH_NOTE (a sentence printed with the machine, e.g. who else was using it), BENCH_OUT.
 */
/** Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB (AWS Lambda docs, "Memory and computing power"). */
const ONE_VCPU_MB = 1_769;

const { start: START, end: END } = markers('publish');
const log = (message: string) =>
  process.stderr.write(`[bench publish ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const messages = Number(process.env.BENCH_PUBLISH_MESSAGES ?? 1_000_000);
const runs = Number(process.env.BENCH_PUBLISH_RUNS ?? 3);
const coldRuns = Number(process.env.BENCH_COLD_RUNS ?? 5);
const only = process.env.BENCH_PUBLISH_TARGETS?.split(',').map((s) => s.trim());
const out = process.env.BENCH_OUT || 'BENCHMARKS.md';
const note = process.env.BENCH_NOTE;

const machine = machineFacts();
const started = performance.now();
const shape = readServerlessConfig();
const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-publish-'));
const fauxqs = await startFauxqs({ port: 0, logger: false });
const s3 = { endpoint: fauxqs.address, bucket: 'subagent-bench-reports', prefix: 'reports' };
const admin = new S3Client({
  endpoint: fauxqs.address,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
});
await admin.send(new CreateBucketCommand({ Bucket: s3.bucket }));
admin.destroy();
// the deployed bundle, loaded by Node 22 when tools/node22 is installed (Lambda's nodejs22.x)
const bundle = {
  file: (await buildFunction(shape, shape.entries.publish!, join(dir, 'publish'))).file,
  node: existsSync(NODE22_BINARY) ? NODE22_BINARY : process.execPath,
};
const targets = await startTargets();
const labels = targets.filter((t) => !only || only.includes(t.name)).map((t) => `${t.name}: ${t.label}`);
const figures: PublishFigures[] = [];
let cold: ColdStartFigures[] = [];
let bundles: BundleComparison | undefined;
try {
  for (const target of targets) {
    if (only && !only.includes(target.name)) continue;
    log(`${target.name}: ${messages.toLocaleString('en-US')} messages, ${runs} run(s) a case (load ${loadNow()})`);
    const f = await benchPublish(target, { messages, runs, s3, shape, bundle });
    log(
      `  generated in ${(f.generateMs / 1000).toFixed(0)} s; aggregate ${f.baselineMs.toFixed(0)} ms; ${f.cases.map((c) => `${c.case} ${c.error ? `FAILED (${c.error})` : `${c.ms.toFixed(0)} ms, ${c.peakRssMiB.toFixed(0)} MiB`}`).join('; ')}`,
    );
    figures.push(f);
    write();
  }
} finally {
  for (const target of targets) await target.stop();
  await fauxqs.stop();
}
log(`cold start: every function bundled as deployed, each loaded ${coldRuns}× in a fresh node`);
cold = await benchColdStart(shape, coldRuns);
const base = bundleBase();
log(`the other functions' bundles against ${base}`);
bundles = await compareBundles(shape, base);
write();
rmSync(dir, { recursive: true, force: true });

function write(): void {
  replaceSection(out, 'publish', render((performance.now() - started) / 1000));
  log(`wrote the publish section of ${out}`);
}

function loadNow(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
}

function render(seconds: number): string {
  const int = (n: number) => (Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
  const ms = (n: number) => (Number.isNaN(n) ? '–' : n >= 100 ? int(n) : n.toFixed(1));
  const kib = (bytes: number) => `${int(bytes / 1024)} KiB`;
  const memoryMb = shape.memoryMb.publish!;
  const timeoutS = shape.timeoutSeconds.publish!;
  const share = Math.min(1, memoryMb / ONE_VCPU_MB);
  // the run's own CPU stretched to the function's share of a vCPU; its waiting (the database, S3) as it was
  const projected = (wall: number, cpu: number) => wall + cpu * (1 / share - 1);
  const lines = [
    START,
    '## The published report at 1M messages (R5-6, issue 49)',
    '',
    `Generated by \`npm run bench -- publish\` (bench/publish-main.ts) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC at commit \`${machine.commit}\`, in ${int(seconds)} s; ${machine.nproc} × ${machine.cpuModel}, ${machine.memory} memory, Node ${machine.node}; load average before: ${machine.loadAverage}, after: ${loadNow()}.${note ? ` ${note}` : ''} Databases: ${labels.join('; ')}. S3: fauxqs in the benchmark process.`,
    '',
    `- **Store**: the read side's (bench/read-store.ts, as in the read-side section below), ${int(messages)} messages; the scheduled health check's checkpoint 5 minutes before the newest message.`,
    `- **Cases**, ${runs} run(s) each, in turn, each a fresh process so its wall time and peak RSS (\`process.resourceUsage().maxRSS\`, Node's own included) are its own (bench/publish-child.ts). **publish**: the function's handler (functions/publish.ts as wired there: DATABASE_URL, its statement cap, the S3 client from the SDK's configuration) invoked once: one report run, the JSON and the page, four objects to fauxqs' S3 (AWS_ENDPOINT_URL_S3). **reference**: the same report run and the same two texts (lib/publish/run.ts) with a writer that keeps nothing: what \`report --json\` and the page cost alone. Both run from source under tsx (its loader's memory included: an upper bound). **publish, deployed bundle** (PostgreSQL, the functions' database): the esbuild bundle as deployed, loaded by ${bundle.node === process.execPath ? `this Node (${process.version}; tools/node22 not installed)` : 'Node 22 (tools/node22: Lambda runs nodejs22.x)'} with the function's environment from serverless.yml and nothing of ours (no tsx): the process Lambda runs. PostgreSQL is reached through the Neon driver and a local ws proxy (in the child for the tsx cases, in the benchmark process for the bundle). SQLite runs the two tsx cases only: the deployed functions read PostgreSQL (better-sqlite3 is not in their bundles), so its rows are what \`publish --to\` costs on a host's SQLite file, held against the function's limits for scale.`,
    `- **The function's limits** (serverless.yml): memorySize ${memoryMb} MB, timeout ${timeoutS} s. Lambda gives ${memoryMb} MB ${(share * 100).toFixed(0)}% of a vCPU (one vCPU at ${int(ONE_VCPU_MB)} MB), so a run's own CPU takes up to ${(1 / share).toFixed(1)}× as long there: **at Lambda's CPU share** = wall + CPU × ${(1 / share - 1).toFixed(2)} (the time spent waiting on the database and S3 as measured here; Graviton arm64 is not this CPU). Peak RSS is compared with memorySize in MiB (Lambda's MB are MiB).`,
    `- **Ratios** = the case's median ÷ the reference's median, and ÷ the database's own one-pass aggregate over the same rows (\`${BASELINE_SQL}\`) run through the same driver right before each run.`,
    '',
    "| database | messages | rows | case | Node | wall ms (median) | runs ms | CPU ms (median) | at Lambda's CPU share, ms | ÷ reference | ÷ aggregate | peak RSS MiB | JSON bytes | page bytes | within the limits |",
    '| --- | ---: | ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const f of figures) {
    const reference = f.cases.find((c) => c.case === 'reference')!;
    for (const c of f.cases) {
      const lambdaMs = projected(c.ms, c.cpuMs);
      const run = c.runs.find((r) => r.error === undefined);
      const verdict = c.error
        ? `**failed**: ${c.error.replace(/\|/g, '\\|').slice(0, 200)}`
        : c.case === 'reference'
          ? '–'
          : `${c.peakRssMiB <= memoryMb ? 'memory yes' : '**memory NO**'} (${int(c.peakRssMiB)} of ${memoryMb} MiB), ${lambdaMs <= timeoutS * 1000 ? 'time yes' : '**time NO**'} (${(lambdaMs / 1000).toFixed(1)} of ${timeoutS} s)`;
      lines.push(
        `| ${f.target} | ${int(f.store.messages)} | ${int(f.store.rows)} | ${c.case} | ${c.node} | **${ms(c.ms)}** | ${c.runs.map((r) => ms(r.ms)).join(', ')} | ${ms(c.cpuMs)} | ${ms(lambdaMs)} | ${(c.ms / reference.ms).toFixed(2)}× | ${(c.ms / f.baselineMs).toFixed(1)}× | **${int(c.peakRssMiB)}** | ${int(run?.jsonBytes ?? Number.NaN)} | ${int(run?.pageBytes ?? Number.NaN)} | ${verdict} |`,
      );
    }
  }
  lines.push('');
  for (const f of figures) {
    const completeness = f.cases.flatMap((c) => c.runs).find((r) => r.completeness)?.completeness;
    lines.push(
      `- ${f.target}: the aggregate ${ms(f.baselineMs)} ms (median; runs ${f.baselinePerRunMs.map(ms).join(', ')}); store generated in ${int(f.generateMs / 1000)} s (setup); the run's completeness: ${completeness ?? '–'}.`,
    );
  }
  if (cold.length > 0) {
    const publish = cold.find((c) => c.function === 'publish');
    const exporter = cold.find((c) => c.function === 'export');
    lines.push(
      '',
      '### Cold start and bundles',
      '',
      `Every function bundled as deployed (serverless.yml \`custom.esbuild\`, bench/bundle.ts) and loaded ${coldRuns}× in a fresh \`node\` with its environment from serverless.yml (bench/cold-start.ts, as the default run's cold-start section): the median of \`require(bundle)\` (module initialisation, wall and CPU) and of process start → loaded. The export function is the one to read publish against: both are scheduled, both read the database with the same driver; what publish adds is ECharts' SSR (the page's charts) and the S3 client.`,
      '',
      '| function | bundle | gzip | init ms | init CPU ms | start → loaded ms | Node 22: init ms | Node 22: init CPU ms | Node 22: start → loaded ms | largest parts |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
      ...cold.map(
        (c) =>
          `| ${c.function} | **${kib(c.bytes)}** | ${kib(c.gzipBytes)} | **${ms(c.initMs)}** | ${ms(c.initCpuMs)} | ${ms(c.readyMs)} | ${c.node22 ? `**${ms(c.node22.initMs)}**` : '–'} | ${c.node22 ? ms(c.node22.initCpuMs) : '–'} | ${c.node22 ? ms(c.node22.readyMs) : '–'} | ${c.largest.map(([p, b]) => `${p} ${kib(b)}`).join(', ')} |`,
      ),
      '',
    );
    if (publish && exporter)
      lines.push(
        `- **What ECharts' SSR and the S3 client cost**: the publish bundle is ${kib(publish.bytes)} against export's ${kib(exporter.bytes)} (+${kib(publish.bytes - exporter.bytes)}, ${(publish.bytes / exporter.bytes).toFixed(1)}×; gzip +${kib(publish.gzipBytes - exporter.gzipBytes)}); its module initialisation ${ms(publish.initMs)} ms against ${ms(exporter.initMs)} ms (+${ms(publish.initMs - exporter.initMs)} ms, CPU +${ms(publish.initCpuMs - exporter.initCpuMs)} ms)${publish.node22 && exporter.node22 ? `, on Node 22 ${ms(publish.node22.initMs)} against ${ms(exporter.node22.initMs)} ms (+${ms(publish.node22.initMs - exporter.node22.initMs)} ms)` : ''}. It is paid once per cold start of an hourly function (Lambda keeps no instance warm for an hour): every scheduled run is likely a cold start.`,
      );
  }
  if (bundles) {
    const carrying = bundles.functions.filter((f) => f.publishOnly.length > 0);
    lines.push(
      `- **The other functions' bundles** against \`${bundles.base.commit}\` (the main before the publish function's merge), built with the same esbuild settings and this checkout's node_modules: ${bundles.functions.map((f) => `${f.name} ${f.bytes.toLocaleString('en-US')} bytes ${f.identical ? '(byte for byte the same)' : `(**changed**, was ${f.baseBytes.toLocaleString('en-US')})`}`).join(', ')}.${carrying.length === 0 ? ' None of them carries echarts, zrender or @aws-sdk/client-s3.' : ` **Carrying what only publish should**: ${carrying.map((f) => `${f.name} (${f.publishOnly.join(', ')})`).join(', ')}.`}`,
    );
  }
  lines.push(END);
  return lines.join('\n');
}
