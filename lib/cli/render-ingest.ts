import { COUNTERS } from '../ingest/report.js';
import { type DeadLetter, groupDeadLetters } from './dead-letters.js';
import type { IngestTotals, LagPercentiles } from './ingest-totals.js';
import { renderFacts, renderTable } from './table.js';

/** The ingest counters (docs/ingest.md) summed over a run, plus the lag percentiles. */
export function renderCounters(totals: IngestTotals): string {
  const lag = totals.lag();
  const ms = (value: number | null) => (value === null ? null : `${Math.round(value)} ms`);
  return renderFacts([
    ...COUNTERS.map((name) => [name, totals.counts[name]] as const),
    ['batches', totals.batches],
    ['database round trips', totals.roundTrips],
    [
      'lag p50 / p90 / p99 / max',
      [lag.p50, lag.p90, lag.p99, lag.max]
        .map(ms)
        .map((v) => v ?? '-')
        .join(' / '),
    ],
  ]);
}

export function renderDeadLetters(letters: readonly DeadLetter[]): string {
  if (letters.length === 0) return 'dead-letter queue: empty';
  const rows = groupDeadLetters(letters).map((g) => [
    g.count,
    g.failure,
    g.reason.length > 100 ? `${g.reason.slice(0, 97)}...` : g.reason,
  ]);
  return `dead-letter queue: ${letters.length}\n${renderTable(['count', 'failure', 'reason'], rows)}`;
}

export interface IngestSummary {
  frames: number;
  counts: IngestTotals['counts'];
  batches: number;
  roundTrips: number;
  lag: LagPercentiles;
  deadLetters: Array<{ failure: string; reason: string; count: number }>;
}

export function ingestSummary(frames: number, totals: IngestTotals, letters: readonly DeadLetter[]): IngestSummary {
  return {
    frames,
    counts: { ...totals.counts },
    batches: totals.batches,
    roundTrips: totals.roundTrips,
    lag: totals.lag(),
    deadLetters: groupDeadLetters(letters),
  };
}
