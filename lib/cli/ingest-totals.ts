import { type BatchReport, COUNTERS, type CounterName, emptyCounts } from '../ingest/report.js';

export interface LagPercentiles {
  samples: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

export interface IngestTotals {
  add(report: BatchReport): void;
  readonly counts: Record<CounterName, number>;
  readonly batches: number;
  readonly roundTrips: number;
  lag(): LagPercentiles;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Sums the ingest handler's per-batch reports (its onReport hook) over a run. */
export function createIngestTotals(): IngestTotals {
  const counts = emptyCounts();
  const lags: number[] = [];
  let batches = 0;
  let roundTrips = 0;
  return {
    add(report) {
      for (const name of COUNTERS) counts[name] += report.counts[name];
      lags.push(...report.lagMs);
      batches += 1;
      roundTrips += report.roundTrips;
    },
    counts,
    get batches() {
      return batches;
    },
    get roundTrips() {
      return roundTrips;
    },
    lag() {
      const sorted = [...lags].sort((a, b) => a - b);
      return {
        samples: sorted.length,
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? null,
      };
    },
  };
}
