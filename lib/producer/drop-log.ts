import type { ProducerLogger } from './logger.js';

/** Why a frame was not sent (docs/producers.md, "What the producer drops"). */
export const DROP_REASONS = [
  /** not a frame at all (not an object, no version 1, no observed_at): never sent (issue 51) */
  'not_a_frame',
  /** the frame cap or the byte cap was reached (the queue is slow or unreachable) */
  'buffer_full',
  /** larger than an SQS batch on its own, even without the never-stored fields */
  'too_large',
  /** JSON.stringify failed (a cycle, a BigInt) or gave nothing */
  'unserializable',
  /** SQS refused the entry for good (a sender fault other than throttling) */
  'rejected',
  /** retries exhausted, or an error that retrying cannot fix (access denied, no such queue) */
  'send_failed',
  /** recorded after close() */
  'closed',
  /** still unsent when close()'s deadline (or the exit flush's) passed */
  'timeout',
  /** still held when the process exited (process.exit() without close()) */
  'exited',
] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export interface DropLog {
  /** counts the drop at once; its WARN comes with the next report */
  add(reason: DropReason, count: number, detail?: Record<string, unknown>): void;
  /** one WARN per reason with the count since the last report (nothing if there was none) */
  report(): void;
}

/**
 * The distinct details one reason's WARN lists, each with its own count (issue 58 #18: two different
 * bad inputs in one interval were reported as one count under the last one's problem). Details come
 * from small sets (a problem, an error code); past this many, the rest are counted, not listed.
 */
export const MAX_DETAILS_PER_WARN = 10;

interface Unreported {
  count: number;
  /** by the detail's JSON text, in the order first seen */
  details: Map<string, { count: number; detail: Record<string, unknown> }>;
  /** drops whose detail was not listed (more than MAX_DETAILS_PER_WARN distinct ones) */
  unlisted: number;
}

/** One distinct detail: its fields on the WARN itself; several: `details`, each with its count. */
function describe(entry: Unreported): Record<string, unknown> {
  const details = [...entry.details.values()];
  if (details.length === 1 && entry.unlisted === 0) return details[0]!.detail;
  if (details.length === 0) return {};
  return {
    details: details.map(({ count, detail }) => ({ ...detail, count })),
    ...(entry.unlisted > 0 ? { unlisted_count: entry.unlisted } : {}),
  };
}

/**
 * Bounded logging: a dead endpoint used to write one WARN per dropped frame (2,000 lines for 2,000
 * frames). Drops are counted at once and reported as one WARN per reason per interval, with the
 * count and what was wrong (the problem, the error code): one detail on the WARN itself, several
 * listed each with its own count; close() and process exit report what is left.
 */
export function createDropLog(options: {
  logger: ProducerLogger;
  /** fields on every WARN (the endpoint) */
  context?: Record<string, unknown>;
  intervalMs: number;
  dropped: Record<DropReason, number>;
}): DropLog {
  const unreported = new Map<DropReason, Unreported>();
  let timer: NodeJS.Timeout | undefined;
  let since = Date.now();

  const report = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const intervalMs = Date.now() - since;
    for (const [reason, entry] of unreported) {
      try {
        options.logger.warn('subagent frames dropped by the producer', {
          reason,
          count: entry.count,
          interval_ms: intervalMs,
          ...options.context,
          ...describe(entry),
        });
      } catch {
        // a failing logger must not break the product path either
      }
    }
    unreported.clear();
  };

  return {
    add(reason, count, detail) {
      if (count <= 0) return;
      options.dropped[reason] += count;
      let entry = unreported.get(reason);
      if (!entry) {
        entry = { count: 0, details: new Map(), unlisted: 0 };
        unreported.set(reason, entry);
      }
      entry.count += count;
      if (detail) {
        const key = JSON.stringify(detail);
        const seen = entry.details.get(key);
        if (seen) seen.count += count;
        else if (entry.details.size < MAX_DETAILS_PER_WARN) entry.details.set(key, { count, detail });
        else entry.unlisted += count;
      }
      if (!timer) {
        since = Date.now();
        timer = setTimeout(report, options.intervalMs);
        timer.unref(); // the exit hook reports what is left; a report is no reason to keep a host alive
      }
    },
    report,
  };
}
