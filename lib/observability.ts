import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, SERVICE_NAME } from './defaults.js';

/** Structured JSON logs (Powertools). Never log prompt or result text. */
export const logger = new Logger({ serviceName: SERVICE_NAME });

/** EMF metrics (Powertools), one instance per function module. */
export function createMetrics(): Metrics {
  return new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
    serviceName: SERVICE_NAME,
  });
}
