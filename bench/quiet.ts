import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { SERVICE_NAME } from '../lib/defaults.js';

const nowhere = new Writable({ write: (_chunk, _encoding, done) => done() });
const silent = new Console({ stdout: nowhere, stderr: nowhere });

/**
 * A metrics instance configured as the functions' (lib/observability.ts) whose EMF output and
 * warnings go nowhere: the documents are still built and serialised, as in Lambda, but thousands
 * of invocations do not flood the benchmark's output. (Its logger can only be set at construction.)
 */
export function silentMetrics(): Metrics {
  const metrics = new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || 'SubagentContext',
    serviceName: SERVICE_NAME,
    logger: silent,
  });
  (metrics as unknown as { console: Console }).console = silent;
  return metrics;
}
