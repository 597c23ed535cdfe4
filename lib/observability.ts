import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, SERVICE_NAME } from './defaults.js';
import { redactingReplacer } from './redact.js';

/**
 * Structured JSON logs (Powertools). Never log prompt or result text; every line passes through
 * the redaction helper (lib/redact.ts, docs/security.md R2-6). Loggers made elsewhere use createLogger.
 */
export function createLogger(
  options: { logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'CRITICAL' | 'SILENT' } = {},
): Logger {
  return new Logger({ serviceName: SERVICE_NAME, jsonReplacerFn: redactingReplacer, ...options });
}

export const logger = createLogger();

/** EMF metrics (Powertools), one instance per function module. */
export function createMetrics(): Metrics {
  return new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
    serviceName: SERVICE_NAME,
  });
}
