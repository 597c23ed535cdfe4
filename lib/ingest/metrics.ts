import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { type BatchReport, COUNTERS } from './report.js';

/**
 * One EMF document per invocation. Every counter is emitted, zeros included, so
 * attempted = skipped_no_identity + persisted + failed holds in CloudWatch sums too.
 */
export function publishBatchMetrics(metrics: Metrics, report: BatchReport): void {
  for (const name of COUNTERS) metrics.addMetric(name, MetricUnit.Count, report.counts[name]);
  for (const lag of report.lagMs) metrics.addMetric('lag', MetricUnit.Milliseconds, lag);
  metrics.publishStoredMetrics();
}
