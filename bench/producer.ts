/**
 * `npm run bench:producer`: the producer under the hostile inputs and dead endpoints of issue 12
 * (docs/producers.md, P1–P4). Each scenario runs in a fresh Node process (so its peak RSS is its
 * own) against fauxqs, a refused port or a listener that never answers, and reports frames sent,
 * dropped by reason, WARN lines, peak memory and close() time. Prints a Markdown table.
 *
 *   npx tsx bench/producer.ts                 # all scenarios
 *   npx tsx bench/producer.ts --scenario NAME # one, in this process (prints its JSON)
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Frame } from '../lib/producer/frame.js';
import { createFrameProducer, type ProducerStats } from '../lib/producer/producer.js';
import { sqsClientFor, startLocalSqs } from '../local/fauxqs.js';
import { createIngestQueues } from '../local/queues.js';
import { startSilentEndpoint } from '../local/sqs-faults.js';

interface Scenario {
  name: string;
  what: string;
  endpoint: 'fauxqs' | 'refused' | 'silent';
  frames: number;
  /** the frame's i-th instance */
  frame: (i: number) => Record<string, unknown>;
  /** how the host ends: close() (default 5 s), or no close() and the loop empties, or process.exit() */
  end: 'close' | 'natural' | 'process-exit';
}

const KB50 = 'x'.repeat(50_000);
const base = (i: number, task: Record<string, unknown>) => ({
  version: 1,
  task_session_id: `session-${i % 100}`,
  task_id: 'task-1',
  tool_call_id: `call-${i}`,
  execution_id: 'exec-1',
  observed_at: new Date(Date.UTC(2026, 7, 12, 13, 24, 58) + i).toISOString(),
  subagent_task: { subagent_type: 'security-reviewer', status: 'completed', total_tokens: 1234, ...task },
});

const SCENARIOS: Scenario[] = [
  {
    name: 'result-300k',
    what: '1 frame, 300 KB result_text',
    endpoint: 'fauxqs',
    frames: 1,
    frame: (i) => base(i, { result_text: 'r'.repeat(300 * 1024) }),
    end: 'close',
  },
  {
    name: 'u-ffff',
    what: '1 frame, U+FFFF in result_text and description',
    endpoint: 'fauxqs',
    frames: 1,
    frame: (i) => base(i, { result_text: 'a\uFFFFb', description: 'c\uFFFFd\uFFFE' }),
    end: 'close',
  },
  {
    name: 'refused-result',
    what: '12,000 × 50 KB result_text, refused endpoint',
    endpoint: 'refused',
    frames: 12_000,
    frame: (i) => base(i, { result_text: KB50 }),
    end: 'close',
  },
  {
    name: 'refused-description',
    what: '12,000 × 50 KB description, refused endpoint',
    endpoint: 'refused',
    frames: 12_000,
    frame: (i) => base(i, { description: KB50 }),
    end: 'close',
  },
  {
    name: 'silent',
    what: '100 frames, endpoint accepts and never answers',
    endpoint: 'silent',
    frames: 100,
    frame: (i) => base(i, {}),
    end: 'close',
  },
  {
    name: 'exit-natural',
    what: '5 frames, then the host ends without close()',
    endpoint: 'fauxqs',
    frames: 5,
    frame: (i) => base(i, {}),
    end: 'natural',
  },
  {
    name: 'exit-process-exit',
    what: '5 frames, then process.exit() without close()',
    endpoint: 'fauxqs',
    frames: 5,
    frame: (i) => base(i, {}),
    end: 'process-exit',
  },
];

interface Result {
  scenario: string;
  recorded: number;
  sent: number;
  dropped: Partial<ProducerStats['dropped']>;
  warnLines: number;
  baselineRssMb: number;
  peakRssMb: number;
  recordMs: number;
  /** close() time, or (no close) the time from the last record() to the process exit */
  closeMs: number;
}

const scenarioArg = process.argv.indexOf('--scenario');
if (scenarioArg > 0) await runScenario(process.argv[scenarioArg + 1]!);
else await runAll();

/** One scenario in this process; its result is the last stdout line (JSON). */
async function runScenario(name: string): Promise<void> {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`no scenario ${name}; one of ${SCENARIOS.map((s) => s.name).join(', ')}`);
  // Count the producer's WARN lines instead of printing them (Powertools writes WARN to stderr).
  let warnLines = 0;
  const out = process.stdout.write.bind(process.stdout);
  for (const stream of [process.stdout, process.stderr]) {
    stream.write = ((chunk: string | Uint8Array) => {
      warnLines += (String(chunk).match(/"level":"WARN"/g) ?? []).length;
      return true;
    }) as typeof stream.write;
  }
  const sqs = sqsClientFor(process.env.SQS_ENDPOINT!);
  sqs.config.maxAttempts = async () => 1; // as the producer's own client: it retries itself
  const baselineRssMb = process.memoryUsage().rss / 2 ** 20;
  const producer = createFrameProducer({ queueUrl: process.env.QUEUE_URL!, sqs });
  const started = performance.now();
  for (let i = 0; i < scenario.frames; i += 1) producer.record(scenario.frame(i) as unknown as Frame);
  const recorded = performance.now();
  const report = (closeMs: number): Result => ({
    scenario: name,
    recorded: producer.stats.recorded,
    sent: producer.stats.sent,
    dropped: Object.fromEntries(Object.entries(producer.stats.dropped).filter(([, n]) => n > 0)),
    warnLines,
    baselineRssMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    recordMs: recorded - started,
    closeMs,
  });
  if (scenario.end === 'close') {
    await producer.close();
    out(`${JSON.stringify(report(performance.now() - recorded))}\n`);
    sqs.destroy();
    return;
  }
  // After the producer's own exit hook (registered first), so its counts are final.
  process.on('exit', () => out(`${JSON.stringify(report(performance.now() - recorded))}\n`));
  if (scenario.end === 'process-exit') process.exit(0);
  // 'natural': nothing keeps the loop alive but the producer's flush (the client's idle sockets are unref'd)
}

async function runAll(): Promise<void> {
  const run = promisify(execFile);
  const sqs = await startLocalSqs();
  const client = sqs.client();
  const silent = await startSilentEndpoint();
  const results: (Result & { what: string; received?: number })[] = [];
  try {
    for (const scenario of SCENARIOS) {
      const queues = await createIngestQueues(client, { name: `bench-producer-${scenario.name}` });
      const endpoint = { fauxqs: sqs.endpoint, refused: 'http://127.0.0.1:9', silent: silent.endpoint }[
        scenario.endpoint
      ];
      process.stderr.write(`[bench producer] ${scenario.name}: ${scenario.what}\n`);
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', new URL(import.meta.url).pathname, '--scenario', scenario.name],
        {
          env: {
            ...process.env,
            SQS_ENDPOINT: endpoint,
            QUEUE_URL: queues.queueUrl,
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
          maxBuffer: 64 * 2 ** 20,
          timeout: 120_000,
        },
      );
      const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Result;
      const received = scenario.endpoint === 'fauxqs' ? await countMessages(client, queues.queueUrl) : undefined;
      results.push({ ...result, what: scenario.what, received });
    }
  } finally {
    client.destroy();
    await silent.close();
    await sqs.stop();
  }
  const mb = (n: number) => n.toFixed(0);
  const lines = [
    '| scenario | recorded | sent (on the queue) | dropped by reason | WARN lines | peak RSS (idle) MB | record() total | close() / exit |',
    '|---|---:|---:|---|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.what} | ${r.recorded.toLocaleString('en')} | ${r.sent}${r.received === undefined ? '' : ` (${r.received})`} | ${
          Object.entries(r.dropped)
            .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
            .join(', ') || '—'
        } | ${r.warnLines} | ${mb(r.peakRssMb)} (${mb(r.baselineRssMb)}) | ${r.recordMs.toFixed(0)} ms | ${(r.closeMs / 1000).toFixed(2)} s |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function countMessages(client: ReturnType<typeof sqsClientFor>, queueUrl: string): Promise<number> {
  const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
  const { Attributes = {} } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(Attributes.ApproximateNumberOfMessages ?? 0);
}
