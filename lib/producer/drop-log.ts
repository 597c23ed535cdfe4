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
 * Bounded logging: a dead endpoint used to write one WARN per dropped frame (2,000 lines for 2,000
 * frames). Drops are counted at once and reported as one WARN per reason per interval, with the
 * count and the last error code seen; close() and process exit report what is left.
 */
export function createDropLog(options: {
  logger: ProducerLogger;
  /** fields on every WARN (the endpoint) */
  context?: Record<string, unknown>;
  intervalMs: number;
  dropped: Record<DropReason, number>;
}): DropLog {
  const unreported = new Map<DropReason, { count: number; detail: Record<string, unknown> }>();
  let timer: NodeJS.Timeout | undefined;
  let since = Date.now();

  const report = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const intervalMs = Date.now() - since;
    for (const [reason, { count, detail }] of unreported) {
      try {
        options.logger.warn('subagent frames dropped by the producer', {
          reason,
          count,
          interval_ms: intervalMs,
          ...options.context,
          ...detail,
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
      const entry = unreported.get(reason);
      if (entry) {
        entry.count += count;
        if (detail) entry.detail = detail;
      } else unreported.set(reason, { count, detail: detail ?? {} });
      if (!timer) {
        since = Date.now();
        timer = setTimeout(report, options.intervalMs);
        timer.unref(); // the exit hook reports what is left; a report is no reason to keep a host alive
      }
    },
    report,
  };
}
