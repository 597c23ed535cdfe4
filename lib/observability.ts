import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

export const SERVICE_NAME = 'subagent-context';

/** Structured JSON logs (Powertools). Never log prompt or result text. */
export const logger = new Logger({ serviceName: SERVICE_NAME });

/** EMF metrics (Powertools), one instance per function module. */
export function createMetrics(): Metrics {
  return new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || 'SubagentContext',
    serviceName: SERVICE_NAME,
  });
}
