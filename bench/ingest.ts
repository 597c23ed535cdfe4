import { createHash } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { Database } from '../lib/db/database.js';
import { ensureSubagentTable } from '../lib/store/schema.js';
import { readAll } from '../lib/store/read.js';
import { createHostSchema } from '../local/host-schema.js';
import { createBaselineWriter } from './baseline-writer.js';
import { generateFrameStream, type QueuedFrame } from './frames.js';
import { toSqsEvent } from './sqs-event.js';
import { median, percentile } from './stats.js';
import type { BenchTarget } from './targets.js';

export type Handler = (event: SQSEvent) => Promise<SQSBatchResponse>;
export type HandlerFactory = (db: () => Database) => Handler;

export interface DesignFigures {
  /** frames per run */
  frames: number;
  runs: number;
  /** medians over runs */
  framesPerSecond: number;
  roundTripsPerBatch: number;
  p50Ms: number;
  p99Ms: number;
  /** per-run frames/s, for the spread */
  perRun: number[];
}

export interface IngestFigures {
  target: BenchTarget['name'];
  batchSize: number;
  handler: DesignFigures;
  baseline: DesignFigures;
  /** handler frames/s ÷ baseline frames/s */
  ratio: number;
  /** distinct rows the stream produces, and frames per row */
  rows: number;
  framesPerRow: number;
  /** the two designs left the same table (ids and updated_at aside) */
  sameTable: boolean;
  /** mean SQS message body size, bytes (for the cost model) */
  meanBodyBytes: number;
}

export interface IngestPlan {
  batchSize: number;
  /** frames per measured run, per design */
  handlerFrames: number;
  baselineFrames: number;
  runs: number;
}

/**
 * One batch size on one target: the real handler and the baseline writer each process the same
 * FIFO-ordered events, one call after another on one connection, starting from an empty table
 * each run (designs alternate which goes first). Frames/s is the run's frames over the time spent in its calls.
 */
export async function benchIngest(target: BenchTarget, plan: IngestPlan, createHandler: HandlerFactory): Promise<IngestFigures> {
  const stream = generateFrameStream({ frames: Math.max(plan.handlerFrames, plan.baselineFrames), seed: 7 });
  const bench = await target.fresh();
  try {
    const { db } = bench;
    await createHostSchema(db);
    await ensureSubagentTable(db);
    await seedSessions(db, stream.sessions);
    const designs = {
      handler: { run: createHandler(() => db), frames: plan.handlerFrames },
      baseline: { run: createBaselineWriter(() => db), frames: plan.baselineFrames },
    };
    const samples = { handler: [] as RunSample[], baseline: [] as RunSample[] };
    // Warm-up (JIT, prepared plans, pooled connection), not measured.
    for (const design of Object.values(designs)) {
      await runEvents(db, design.run, stream.frames.slice(0, plan.batchSize * 5), plan.batchSize);
    }
    for (let run = 0; run < plan.runs; run++) {
      const order = run % 2 === 0 ? (['handler', 'baseline'] as const) : (['baseline', 'handler'] as const);
      for (const name of order) {
        const design = designs[name];
        await clearTable(db);
        samples[name].push(await runEvents(db, design.run, stream.frames.slice(0, design.frames), plan.batchSize));
      }
    }
    // Both designs must leave the same table from the same frames (unmeasured).
    const common = Math.min(plan.handlerFrames, plan.baselineFrames);
    const fingerprints: string[] = [];
    for (const design of Object.values(designs)) {
      await clearTable(db);
      await runEvents(db, design.run, stream.frames.slice(0, common), plan.batchSize);
      fingerprints.push(await tableFingerprint(db));
    }
    const rows = (await readAll(db)).length;
    const handler = summarize(samples.handler, plan.handlerFrames);
    const baseline = summarize(samples.baseline, plan.baselineFrames);
    return {
      target: target.name,
      batchSize: plan.batchSize,
      handler,
      baseline,
      ratio: handler.framesPerSecond / baseline.framesPerSecond,
      rows,
      framesPerRow: common / rows,
      sameTable: fingerprints[0] === fingerprints[1],
      meanBodyBytes: stream.frames.reduce((sum, f) => sum + Buffer.byteLength(f.body), 0) / stream.frames.length,
    };
  } finally {
    await bench.dispose();
  }
}

interface RunSample {
  /** time spent inside the calls (event construction between calls excluded) */
  callMs: number;
  latenciesMs: number[];
  roundTrips: number;
  batches: number;
}

/** Calls `handler` with each batch in turn, as the event source would; each event is built just before its call. */
async function runEvents(db: Database, handler: Handler, frames: readonly QueuedFrame[], batchSize: number): Promise<RunSample> {
  const latenciesMs: number[] = [];
  const roundTripsBefore = db.stats.roundTrips;
  for (let start = 0; start < frames.length; start += batchSize) {
    const event = toSqsEvent(frames.slice(start, start + batchSize), start);
    const callStart = performance.now();
    const response = await handler(event);
    latenciesMs.push(performance.now() - callStart);
    if (response.batchItemFailures.length > 0) {
      throw new Error(
        `a benchmark batch reported ${response.batchItemFailures.length} failed records; every frame is valid, so a write failed (see the WARN log)`,
      );
    }
  }
  const callMs = latenciesMs.reduce((sum, ms) => sum + ms, 0);
  return { callMs, latenciesMs, roundTrips: db.stats.roundTrips - roundTripsBefore, batches: latenciesMs.length };
}

function summarize(samples: readonly RunSample[], frames: number): DesignFigures {
  const perRun = samples.map((s) => frames / (s.callMs / 1000));
  return {
    frames,
    runs: samples.length,
    framesPerSecond: median(perRun),
    roundTripsPerBatch: median(samples.map((s) => s.roundTrips / s.batches)),
    p50Ms: median(samples.map((s) => percentile(s.latenciesMs, 50))),
    p99Ms: median(samples.map((s) => percentile(s.latenciesMs, 99))),
    perRun,
  };
}

async function seedSessions(db: Database, sessions: readonly { id: string; taskId: string }[]): Promise<void> {
  await db.transaction(async (tx) => {
    for (const s of sessions) {
      await tx.query('INSERT INTO task_sessions (id, task_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [s.id, s.taskId]);
    }
  });
}

/** Empty table and reclaimed space, so every run starts from the same state. */
async function clearTable(db: Database): Promise<void> {
  await db.query('DELETE FROM task_session_subagents');
  await db.query('VACUUM');
}

/** The table's content without the generated id and the writer's clock. */
async function tableFingerprint(db: Database): Promise<string> {
  const rows = (await readAll(db)).map(({ id: _id, updated_at: _updatedAt, ...rest }) => rest);
  rows.sort((a, b) => (JSON.stringify([a.task_session_id, a.agent_execution_id, a.tool_call_id]) < JSON.stringify([b.task_session_id, b.agent_execution_id, b.tool_call_id]) ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}
