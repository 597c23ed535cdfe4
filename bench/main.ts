import { writeFileSync } from 'node:fs';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createIngestHandler } from '../lib/ingest/handler.js';
import { sqsViaSdk } from '../lib/queue/sqs-via-sdk.js';
import { benchColdStart, type ColdStartFigures } from './cold-start.js';
import { benchExport, type ExportFigures } from './export.js';
import { benchHostStore, type HostStoreFigures } from './host-store.js';
import { benchHostileText, type HostileTextFigures } from './hostile-text.js';
import { benchIngest, type HandlerFactory, type IngestFigures } from './ingest.js';
import { machineFacts } from './machine.js';
import { benchPageDocument, type PageFigures } from './page.js';
import { planFromEnv } from './plan.js';
import { silentMetrics } from './quiet.js';
import { renderReport } from './report.js';
import { keptSection } from './sections.js';
import { readServerlessConfig } from './serverless-config.js';
import { startTargets } from './targets.js';

const plan = planFromEnv();
const wants = (section: string) => !plan.only || plan.only.has(section);
const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

// Every benchmark frame is valid, so the dead-letter queue is never called; a client pointed at
// nothing makes sure of it (a call would fail the batch and stop the benchmark).
const sqs = new SQSClient({
  region: 'us-east-1',
  endpoint: 'http://127.0.0.1:9',
  credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  maxAttempts: 1,
});
const metrics = silentMetrics();
const realHandler: HandlerFactory = (db) =>
  createIngestHandler({
    db,
    sqs: sqsViaSdk(sqs),
    dlqUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-dlq.fifo',
    metrics,
  });

const started = performance.now();
const machineBefore = machineFacts();
const deployed = readServerlessConfig();
const targets = await startTargets();
const ingest: IngestFigures[] = [];
const stores: HostStoreFigures[] = [];
const exports: ExportFigures[] = [];
let coldStart: ColdStartFigures[] = [];
try {
  for (const target of targets) {
    if (wants('ingest')) {
      for (const step of plan.ingest) {
        log(
          `ingest ${target.name} batch ${step.batchSize}: ${step.runs} runs of ${step.handlerFrames} (handler) / ${step.baselineFrames} (baseline) frames`,
        );
        const figures = await benchIngest(target, step, realHandler);
        log(
          `  handler ${Math.round(figures.handler.framesPerSecond)} frames/s, baseline ${Math.round(figures.baseline.framesPerSecond)} frames/s, ratio ${figures.ratio.toFixed(1)}×; limit ${Math.round(figures.limit.framesPerSecond)} frames/s, handler ÷ limit ${figures.limitRatio.toFixed(2)}`,
        );
        ingest.push(figures);
      }
    }
    if (wants('host-store')) {
      const messages = plan.messages[target.name];
      log(
        `host store ${target.name}: ${messages} messages, backfill, health and report ${plan.hostStoreRuns} runs each`,
      );
      const figures = await benchHostStore(target, { messages, runs: plan.hostStoreRuns });
      log(
        `  generated in ${(figures.generateMs / 1000).toFixed(1)} s; backfill ${(figures.backfill.wallMs / 1000).toFixed(2)} s (${Math.round(figures.backfill.rowsPerSecond)} rows/s); health ${Math.round(figures.health.wallMs)} ms; report ${figures.report.variants.map((v) => `${Math.round(v.wallMs)} ms`).join(' / ')}`,
      );
      stores.push(figures);
    }
    if (wants('export')) {
      log(`otlp export ${target.name}: ${plan.exportRows} rows, ${plan.exportRuns} runs per protocol`);
      for (const figures of await benchExport(target, {
        rows: plan.exportRows,
        runs: plan.exportRuns,
        protocols: ['http/protobuf', 'http/json'],
      })) {
        log(
          `  ${figures.protocol}: ${Math.round(figures.spansPerSecond)} spans/s (${figures.spans} spans in ${(figures.wallMs / 1000).toFixed(2)} s)`,
        );
        exports.push(figures);
      }
    }
  }
} finally {
  for (const target of targets) await target.stop();
}
if (wants('cold-start')) {
  log(
    `cold start: bundling ${Object.keys(deployed.entries).join(', ')} and loading each ${plan.coldStartRuns}× in a fresh node`,
  );
  coldStart = await benchColdStart(deployed, plan.coldStartRuns);
}
let pageDocument: PageFigures | undefined;
if (wants('page')) {
  log('page: rendering a generated 100k-subagent document');
  pageDocument = await benchPageDocument(plan.hostStoreRuns);
  log(`  ${pageDocument.bytes} bytes in ${Math.round(pageDocument.renderMs)} ms`);
}
let hostileText: HostileTextFigures | undefined;
if (wants('hostile-text')) {
  log('hostile text: report --json with and without a 1 MiB task title, and redaction of 1 MiB inputs');
  hostileText = await benchHostileText({ messages: Math.max(1_000, Math.round(20_000 * plan.scale)), runs: 5 });
  log(`  ${Math.round(hostileText.plainMs)} ms without, ${Math.round(hostileText.hostileMs)} ms with the title`);
}
const totalSeconds = (performance.now() - started) / 1000;
// The heavy sections (npm run bench -- health, -- read, -- publish, -- spend) are kept from the previous file.
const kept = ['health-scale', 'read-side', 'publish', 'spend'].map((name) => keptSection(plan.out, name)).join('');
writeFileSync(
  plan.out,
  renderReport({
    plan,
    machine: machineBefore,
    loadAfter: machineFacts().loadAverage,
    deployed,
    targets: targets.map((t) => ({ name: t.name, label: t.label })),
    ingest,
    stores,
    exports,
    coldStart,
    pageDocument,
    hostileText,
    totalSeconds,
  }) + kept,
);
log(`wrote ${plan.out} after ${totalSeconds.toFixed(0)} s`);
