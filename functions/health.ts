import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { ScheduledEvent } from 'aws-lambda';
import { loadDatabaseUrl, refreshingCredentials } from '../lib/config/database-url.js';
import { failureFields } from '../lib/db/errors.js';
import { databaseFromEnv } from '../lib/db/from-env.js';
import { runHealthCheck } from '../lib/health/check.js';
import { confirmDelaySecondsFromEnv, graceSecondsFromEnv } from '../lib/health/config.js';
import { logHealthReport, recordHealthMetrics } from '../lib/health/publish.js';
import type { HealthReport } from '../lib/health/report.js';
import { createMetrics, logger } from '../lib/observability.js';

export type { HealthReport } from '../lib/health/report.js';

const metrics = createMetrics();

/** Scheduled (EventBridge) divergence check, docs/health.md: metrics and one log line, then the report. */
export async function handler(_event?: ScheduledEvent): Promise<HealthReport> {
  try {
    await loadDatabaseUrl(); // deployed: from the SSM SecureString named in serverless.yml
    const report = await refreshingCredentials(() =>
      runHealthCheck(databaseFromEnv(), {
        graceSeconds: graceSecondsFromEnv(),
        confirmDelayMs: confirmDelaySecondsFromEnv() * 1000,
      }),
    );
    recordHealthMetrics(metrics, report);
    logHealthReport(logger, report);
    return report;
  } catch (err) {
    metrics.addMetric('health_check_ok', MetricUnit.Count, 0);
    logger.error('subagent health check failed', { ...failureFields(err), error: err as Error });
    throw err;
  } finally {
    metrics.publishStoredMetrics();
  }
}
