import { COUNTERS } from '../ingest/report.js';
import { renderFacts, renderTable } from '../text-table.js';
import { humanDuration } from '../units.js';
import { type DeadLetter, type DeadLetterGroup, groupDeadLetters } from './dead-letters.js';
import type { IngestTotals, LagPercentiles } from './ingest-totals.js';

/** What a non-zero counter means for the person reading it (README "Reading the output"). */
const MEANING: Partial<Record<(typeof COUNTERS)[number], string>> = {
  skipped_no_identity: 'no session, task or tool call id: nothing to key a row on; acknowledged, not an error',
  orphaned: 'no such session in the host store (deleted, or never there): acknowledged, no row to attach it to',
  invalid: 'not a frame: parked on the dead-letter queue, see below',
  system_error: 'the database failed: the frames stay on the queue and are retried',
  anomalous_value: 'a metric stored as NULL (negative, fractional, a string or above 2,147,483,647)',
  unknown_execution: "no execution_id: stored as 'unknown'",
};

function explained(name: (typeof COUNTERS)[number], value: number): number | string {
  const meaning = MEANING[name];
  return value === 0 || meaning === undefined ? value : `${value.toLocaleString('en-US')} (${meaning})`;
}

/** The ingest counters (docs/ingest.md) summed over a run, plus the lag percentiles. */
export function renderCounters(totals: IngestTotals): string {
  const lag = totals.lag();
  // a frame replayed from an old file lags by days: said in days, not 9,606,141,869 ms (issue 34)
  const ms = (value: number | null) => (value === null ? null : humanDuration(value));
  return renderFacts([
    ...COUNTERS.map((name) => [name, explained(name, totals.counts[name])] as const),
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
  const groups = groupDeadLetters(letters);
  const withLines = groups.some((g) => g.lines !== undefined);
  const rows = groups.map((g) => [
    g.count,
    g.failure,
    ...(withLines ? [lineList(g.lines)] : []),
    g.reason.length > 100 ? `${g.reason.slice(0, 97)}...` : g.reason,
  ]);
  const headers = ['count', 'failure', ...(withLines ? ['lines'] : []), 'reason'];
  return `dead-letter queue: ${letters.length}\n${renderTable(headers, rows)}`;
}

/** `3, 7, 12` (at most 5, then `…`) */
function lineList(lines: readonly number[] | undefined): string {
  if (lines === undefined) return '-';
  return lines.length > 5 ? `${lines.slice(0, 5).join(', ')}, … (+${lines.length - 5})` : lines.join(', ');
}

export interface IngestSummary {
  frames: number;
  counts: IngestTotals['counts'];
  batches: number;
  roundTrips: number;
  lag: LagPercentiles;
  deadLetters: DeadLetterGroup[];
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
