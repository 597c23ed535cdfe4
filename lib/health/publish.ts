import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { parseStoredTimestamp } from '../time.js';
import { checkpointLagSeconds } from './check.js';
import type { HealthReport } from './report.js';

/**
 * The report as EMF metrics for CloudWatch alarms. `health_check_ok` is 1 whenever a check
 * completed (whatever it found), so an alarm on it with missing data as breaching catches a check
 * that fails or stops running; the handler records 0 when the check throws. The full audit's
 * counts carry an `audit_` prefix: it also counts shortfalls an operator acknowledged, which must
 * not re-trigger the scheduled check's alarm (docs/health.md).
 */
export function recordHealthMetrics(metrics: Metrics, report: HealthReport): void {
  const prefix = report.kind === 'full' ? 'audit_' : '';
  metrics.addMetric(`${prefix}health_check_ok`, MetricUnit.Count, 1);
  metrics.addMetric('not_activated', MetricUnit.Count, report.status === 'not_activated' ? 1 : 0);
  if (report.status === 'not_activated') return;
  metrics.addMetric(`${prefix}shortfall`, MetricUnit.Count, report.shortfall ?? 0);
  // Not computed (left to the full audit, issue 26): no data point rather than a 0 that says "none".
  if (report.excess !== null) metrics.addMetric(`${prefix}excess`, MetricUnit.Count, report.excess);
  metrics.addMetric(`${prefix}collisions`, MetricUnit.Count, report.collisions ?? 0);
  // R3-4: a lost backfill; its own metric, so the audit alarm says which part is missing.
  if (report.history !== null) metrics.addMetric('audit_history_shortfall', MetricUnit.Count, report.history.shortfall);
  // What the daily audit's alarm watches: losses nobody accepted (docs/health.md#two-kinds).
  if (report.unacknowledgedShortfall !== null)
    metrics.addMetric('audit_unacknowledged_shortfall', MetricUnit.Count, report.unacknowledgedShortfall);
  metrics.addMetric('seconds_since_last_observed', MetricUnit.Seconds, secondsSinceLastObserved(report));
  const lag = checkpointLagSeconds(report);
  if (lag !== undefined) metrics.addMetric('checkpoint_lag_seconds', MetricUnit.Seconds, lag);
}

/**
 * Whole seconds from the last observed row to the check. A writer silent since activation has
 * been silent at least since capture_since, so that lower bound is reported.
 */
export function secondsSinceLastObserved(report: HealthReport): number {
  const from = report.lastObservedAt ?? report.captureSince;
  if (from === null) return 0;
  const elapsed = parseStoredTimestamp(report.checkedAt)! - parseStoredTimestamp(from)!;
  return Math.max(0, Number(elapsed / 1_000_000n));
}

/** One line per check: ERROR for every status an operator must act on, so log alarms can match it. */
export function logHealthReport(logger: Pick<Logger, 'info' | 'error'>, report: HealthReport): void {
  const { missing, ...facts } = report;
  switch (report.status) {
    case 'healthy':
      logger.info('subagent capture healthy', facts);
      return;
    case 'shortfall':
      if ((report.history?.shortfall ?? 0) > 0) {
        logger.error(
          `subagent backfill lost: ${report.history!.shortfall} subagent invocations before activation have no row`,
          {
            ...facts,
            action:
              'the backfilled rows are gone (the table dropped and re-created, rows deleted): run ' +
              '`subagent-context migrate --rerun-backfill` (or invoke migrate with {"rerunBackfill": true}); it inserts them again and leaves the keys',
          },
        );
        if (report.shortfall === 0) return;
      }
      logger.error(
        `subagent capture shortfall: ${report.shortfall} subagent invocations ${report.kind === 'full' ? 'since activation' : 'in the checked window'} have no row`,
        {
          ...facts,
          missing,
          action:
            'check the ingest function errors, the queue and its dead-letter queue; the missing keys are a sample. ' +
            'The scheduled check re-checks them every run until they have rows or an operator acknowledges them ' +
            '(subagent-context health --acknowledge-through <instant>, see README "Health")',
        },
      );
      return;
    case 'silent':
      logger.error('subagent capture silent: no row observed since activation', {
        ...facts,
        action: 'check that the host producer is enabled and sending, and that the ingest function consumes the queue',
      });
      return;
    case 'not_activated':
      logger.error('subagent capture not activated: kandev_meta has no subagent_context_capture_since', {
        ...facts,
        action: 'invoke the migrate function once to create the table and activate capture',
      });
      return;
  }
}
