import type { IngestPlan } from './ingest.js';

/** Sizes and repetitions of one `npm run bench`, from the environment (see BENCHMARKS.md). */
export interface BenchPlan {
  scale: number;
  ingest: IngestPlan[];
  /** messages in the generated host store, per PostgreSQL flavour and SQLite */
  messages: { postgres: number; pglite: number; sqlite: number };
  hostStoreRuns: number;
  /** rows the OTLP export benchmark exports, and its runs */
  exportRows: number;
  exportRuns: number;
  coldStartRuns: number;
  only: Set<string> | undefined;
  out: string;
}

export const SECTIONS = ['ingest', 'host-store', 'export', 'cold-start', 'page', 'hostile-text'] as const;

export function planFromEnv(env: NodeJS.ProcessEnv = process.env): BenchPlan {
  const scale = positive(env.BENCH_SCALE, 1);
  const sized = (n: number) => Math.max(1, Math.round(n * scale));
  const runs = Math.round(positive(env.BENCH_RUNS, 5));
  const messages = env.BENCH_MESSAGES ? Math.round(positive(env.BENCH_MESSAGES, 1)) : undefined;
  const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
  for (const name of only ?? []) {
    if (!(SECTIONS as readonly string[]).includes(name))
      throw new Error(`BENCH_ONLY: unknown section "${name}" (use ${SECTIONS.join(', ')})`);
  }
  return {
    scale,
    ingest: [
      // batch 10 = the FIFO event source's maximum; the baseline pays ten round trips per call
      { batchSize: 10, handlerFrames: sized(3_000), baselineFrames: sized(2_000), runs },
      // batch 1,000 = a large burst in one call; the baseline takes ~1,000× the round trips, so it
      // runs on fewer frames (frames/s is a rate, comparable across lengths)
      { batchSize: 1_000, handlerFrames: sized(20_000), baselineFrames: sized(2_000), runs },
    ],
    messages: {
      postgres: messages ?? sized(1_000_000),
      // PGlite (no TEST_DATABASE_URL) is single-threaded WASM: a tenth of the store keeps the run short
      pglite: messages ?? sized(100_000),
      sqlite: messages ?? sized(1_000_000),
    },
    hostStoreRuns: Math.round(positive(env.BENCH_STORE_RUNS, 3)),
    exportRows: sized(100_000),
    exportRuns: Math.round(positive(env.BENCH_EXPORT_RUNS, 3)),
    coldStartRuns: Math.round(positive(env.BENCH_COLD_RUNS, 5)),
    only,
    out: env.BENCH_OUT || 'BENCHMARKS.md',
  };
}

function positive(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`expected a positive number, got "${value}"`);
  return n;
}
