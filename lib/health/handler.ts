import type { Logger } from '@aws-lambda-powertools/logger';
import { type Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { refreshingCredentials } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { failureFields } from '../db/errors.js';
import { type RemainingTime, withinInvocation } from '../deadline.js';
import { atTheEdge } from '../edge.js';
import { createMetrics, logger as defaultLogger } from '../observability.js';
import { runHealthCheck } from './check.js';
import { healthOptionsFromEnv } from './config.js';
import { logHealthReport, recordHealthMetrics } from './publish.js';
import type { HealthKind, HealthReport } from './report.js';

export interface HealthHandlerDeps {
  /** the database, resolved per invocation; return a module-scope instance so warm invocations reuse it */
  db: () => Database;
  /** runs before each check (deployed: reads DATABASE_URL from SSM once) */
  loadConfig?: () => Promise<void>;
  /** the HEALTH_* settings (lib/health/config.ts healthOptionsFromEnv); read per invocation */
  env?: NodeJS.ProcessEnv;
  metrics?: Metrics;
  logger?: Logger;
}

/**
 * What EventBridge sends: the 5-minute schedule its plain scheduled event (the scheduled window),
 * the optional audit schedule (healthAuditSchedule in serverless.yml) `{ "kind": "full" }`.
 */
export type HealthEvent = unknown;

export type HealthHandler = (event?: HealthEvent, context?: RemainingTime) => Promise<HealthReport>;

/**
 * The divergence check (docs/health.md): the report as metrics and one log line, then the report.
 * A check that throws records `health_check_ok` (the audit: `audit_health_check_ok`) 0 and rethrows.
 */
export function createHealthHandler(deps: HealthHandlerDeps): HealthHandler {
  const metrics = deps.metrics ?? createMetrics();
  const log = deps.logger ?? defaultLogger;
  // R2-6: what the function returns and throws leaves through the redaction step (lib/edge.ts)
  return atTheEdge(async (event, context) => {
    const kind = kindOf(event);
    try {
      await deps.loadConfig?.();
      const env = deps.env ?? process.env;
      // a rejected password or database name forgets the cached URL, so the next run reads SSM again (R2-4)
      // every statement ends before the invocation does (R2-5)
      const report = await refreshingCredentials(() =>
        withinInvocation(deps.db(), context, (db) => runHealthCheck(db, { kind, ...healthOptionsFromEnv(env) })),
      );
      recordHealthMetrics(metrics, report);
      logHealthReport(log, report);
      return report;
    } catch (err) {
      metrics.addMetric(kind === 'full' ? 'audit_health_check_ok' : 'health_check_ok', MetricUnit.Count, 0);
      log.error(`subagent health check failed (${kind})`, { ...failureFields(err), error: err as Error });
      throw err;
    } finally {
      metrics.publishStoredMetrics();
    }
  });
}

/** `{ "kind": "full" }` → the audit; anything else (the scheduled event, nothing) → the scheduled window. */
function kindOf(event: HealthEvent): HealthKind {
  return event !== null && typeof event === 'object' && (event as { kind?: unknown }).kind === 'full'
    ? 'full'
    : 'scheduled';
}
