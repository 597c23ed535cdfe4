import { createHash } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import pg from 'pg';
import type { Database } from '../lib/db/database.js';
import { readAll } from '../lib/store/read.js';
import { ensureSubagentTable } from '../lib/store/schema.js';
import { runPrepared } from '../lib/store/write.js';
import { createHostSchema } from '../local/host-schema.js';
import { createBaselineWriter } from './baseline-writer.js';
import { generateFrameStream, type QueuedFrame } from './frames.js';
import { prepareLimitBatch } from './limit-writer.js';
import { type HandlerPhases, measurePhases } from './phases.js';
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
  /** this process's CPU time (user + system) per frame inside the calls, µs (median over runs) */
  cpuUsPerFrame: number;
}

export interface IngestFigures {
  target: BenchTarget['name'];
  batchSize: number;
  handler: DesignFigures;
  baseline: DesignFigures;
  /** the same rows' statement alone, pre-folded and pre-bound (bench/limit-writer.ts) */
  limit: DesignFigures;
  /** PostgreSQL: the same prepared statement over plain TCP (`pg`, no WebSocket, no proxy) */
  limitTcp?: DesignFigures;
  /** the handler's own steps per frame, timed alone on the same batches */
  phases: HandlerPhases;
  /** handler frames/s ÷ baseline frames/s */
  ratio: number;
  /** handler frames/s ÷ limit frames/s: the share of the database's own limit the handler reaches */
  limitRatio: number;
  /** distinct rows the stream produces, and frames per row */
  rows: number;
  framesPerRow: number;
  /** the designs left the same table (ids aside) */
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
export async function benchIngest(
  target: BenchTarget,
  plan: IngestPlan,
  createHandler: HandlerFactory,
): Promise<IngestFigures> {
  const stream = generateFrameStream({ frames: Math.max(plan.handlerFrames, plan.baselineFrames), seed: 7 });
  const bench = await target.fresh();
  try {
    const { db } = bench;
    await createHostSchema(db);
    await ensureSubagentTable(db);
    await seedSessions(db, stream.sessions);
    const handler = createHandler(() => db);
    const baselineWriter = createBaselineWriter(() => db);
    const tcp = bench.tcpUrl ? new pg.Client({ connectionString: bench.tcpUrl }) : undefined;
    await tcp?.connect();
    const designs: Partial<Record<DesignName, { call: Caller; frames: number }>> = {
      handler: { call: (event) => () => handler(event), frames: plan.handlerFrames },
      baseline: { call: (event) => () => baselineWriter(event), frames: plan.baselineFrames },
      limit: {
        call: (event) => {
          const prepared = prepareLimitBatch(db, event);
          return async () => {
            await runPrepared(db, prepared);
            return { batchItemFailures: [] };
          };
        },
        frames: plan.handlerFrames,
      },
    };
    if (tcp) {
      designs.limitTcp = {
        // The same statement and parameters, named as the handler names it, on a plain `pg` client.
        call: (event) => {
          const prepared = prepareLimitBatch(db, event);
          return async () => {
            for (const { sql, params, name } of prepared) await tcp.query({ name, text: sql, values: params });
            return { batchItemFailures: [] };
          };
        },
        frames: plan.handlerFrames,
      };
    }
    const samples: Record<DesignName, RunSample[]> = { handler: [], baseline: [], limit: [], limitTcp: [] };
    // Warm-up (JIT, prepared plans, pooled connection), not measured.
    for (const design of Object.values(designs).filter((d) => d !== undefined)) {
      await runEvents(db, design.call, stream.frames.slice(0, plan.batchSize * 5), plan.batchSize);
    }
    for (let run = 0; run < plan.runs; run++) {
      // rotate which design goes first
      const order = DESIGNS.map((_, i) => DESIGNS[(i + run) % DESIGNS.length]!);
      for (const name of order) {
        const design = designs[name];
        if (!design) continue;
        await clearTable(db);
        samples[name].push(await runEvents(db, design.call, stream.frames.slice(0, design.frames), plan.batchSize));
      }
    }
    // Both designs must leave the same table from the same frames (unmeasured).
    const common = Math.min(plan.handlerFrames, plan.baselineFrames);
    const fingerprints: string[] = [];
    for (const design of Object.values(designs).filter((d) => d !== undefined)) {
      await clearTable(db);
      await runEvents(db, design.call, stream.frames.slice(0, common), plan.batchSize);
      fingerprints.push(await tableFingerprint(db));
    }
    await tcp?.end();
    const rows = (await readAll(db)).length;
    const handlerFigures = summarize(samples.handler, plan.handlerFrames);
    const baseline = summarize(samples.baseline, plan.baselineFrames);
    const limit = summarize(samples.limit, plan.handlerFrames);
    const phases = measurePhases(db.dialect, stream.frames.slice(0, plan.handlerFrames), plan.batchSize);
    return {
      target: target.name,
      batchSize: plan.batchSize,
      handler: handlerFigures,
      baseline,
      limit,
      ...(tcp ? { limitTcp: summarize(samples.limitTcp, plan.handlerFrames) } : {}),
      phases,
      ratio: handlerFigures.framesPerSecond / baseline.framesPerSecond,
      limitRatio: handlerFigures.framesPerSecond / limit.framesPerSecond,
      rows,
      framesPerRow: common / rows,
      sameTable: fingerprints.every((f) => f === fingerprints[0]),
      meanBodyBytes: stream.frames.reduce((sum, f) => sum + Buffer.byteLength(f.body), 0) / stream.frames.length,
    };
  } finally {
    await bench.dispose();
  }
}

const DESIGNS = ['handler', 'baseline', 'limit', 'limitTcp'] as const;
type DesignName = (typeof DESIGNS)[number];
/** Prepares one event's call (untimed) and returns the call to time. */
type Caller = (event: SQSEvent) => () => Promise<SQSBatchResponse>;

interface RunSample {
  /** time spent inside the calls (event construction between calls excluded) */
  callMs: number;
  latenciesMs: number[];
  roundTrips: number;
  batches: number;
  /** process CPU time inside the calls, µs */
  cpuUs: number;
}

/** Calls the design with each batch in turn, as the event source would; each event is built (and prepared) just before its call. */
async function runEvents(
  db: Database,
  design: Caller,
  frames: readonly QueuedFrame[],
  batchSize: number,
): Promise<RunSample> {
  const latenciesMs: number[] = [];
  const roundTripsBefore = db.stats.roundTrips;
  let cpuUs = 0;
  for (let start = 0; start < frames.length; start += batchSize) {
    const call = design(toSqsEvent(frames.slice(start, start + batchSize), start));
    const cpuStart = process.cpuUsage();
    const callStart = performance.now();
    const response = await call();
    latenciesMs.push(performance.now() - callStart);
    const cpu = process.cpuUsage(cpuStart);
    cpuUs += cpu.user + cpu.system;
    if (response.batchItemFailures.length > 0) {
      throw new Error(
        `a benchmark batch reported ${response.batchItemFailures.length} failed records; every frame is valid, so a write failed (see the WARN log)`,
      );
    }
  }
  const callMs = latenciesMs.reduce((sum, ms) => sum + ms, 0);
  return {
    callMs,
    latenciesMs,
    roundTrips: db.stats.roundTrips - roundTripsBefore,
    batches: latenciesMs.length,
    cpuUs,
  };
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
    cpuUsPerFrame: median(samples.map((s) => s.cpuUs / frames)),
  };
}

async function seedSessions(db: Database, sessions: readonly { id: string; taskId: string }[]): Promise<void> {
  await db.transaction(async (tx) => {
    for (const s of sessions) {
      await tx.query('INSERT INTO task_sessions (id, task_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [
        s.id,
        s.taskId,
      ]);
    }
  });
}

/** Empty table and reclaimed space, so every run starts from the same state. */
async function clearTable(db: Database): Promise<void> {
  await db.query('DELETE FROM task_session_subagents');
  await db.query('VACUUM');
}

/** The table's content without the generated id (updated_at is the row's newest observation, R3-1). */
async function tableFingerprint(db: Database): Promise<string> {
  const rows = (await readAll(db)).map(({ id: _id, ...rest }) => rest);
  rows.sort((a, b) =>
    JSON.stringify([a.task_session_id, a.agent_execution_id, a.tool_call_id]) <
    JSON.stringify([b.task_session_id, b.agent_execution_id, b.tool_call_id])
      ? -1
      : 1,
  );
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}
