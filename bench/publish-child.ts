import { startWsProxy } from '../lib/db/ws-proxy.js';
import { PUBLISH_TIMEOUT_SECONDS } from '../lib/defaults.js';

/*
 * One publish run in a process of its own (bench/publish.ts), so its peak RSS is its own:
 * argv = <mode>, the rest from the environment the parent sets (DATABASE_URL, PUBLISH_BUCKET,
 * PUBLISH_PREFIX, the SDK's AWS_ENDPOINT_URL_S3 to fauxqs, AWS_REGION and keys).
 * - `publish`: the deployed function's handler (functions/publish.ts, as wired there: DATABASE_URL,
 *   its statement cap, the S3 client from the SDK's configuration) invoked once;
 * - `reference`: the same report run and the same two texts (lib/publish/run.ts publishReport, the
 *   database opened the same way) with a writer that keeps nothing: the report and the page alone.
 * PostgreSQL goes through a local ws proxy started before the clock, as bench/read-side-child.ts
 * does. Prints one JSON line: wall ms, CPU ms, peak RSS, the bytes written; or the error.
 */
const mode = process.argv[2] as 'publish' | 'reference';
const url = process.env.DATABASE_URL ?? '';
const proxy = url.startsWith('postgres') ? await startWsProxy() : undefined;
if (proxy) process.env.DATABASE_WS_PROXY = proxy.address;

let out: Record<string, unknown>;
try {
  const { handler } = await import('../functions/publish.js');
  const { publishReport } = await import('../lib/publish/run.js');
  const { databaseFromEnv, closeDatabaseFromEnv } = await import('../lib/db/from-env.js');
  const { graceSecondsFromEnv } = await import('../lib/health/config.js');
  const cpu = process.cpuUsage();
  const start = performance.now();
  const deadline = Date.now() + PUBLISH_TIMEOUT_SECONDS * 1000;
  const summary =
    mode === 'publish'
      ? await handler({}, { getRemainingTimeInMillis: () => deadline - Date.now() })
      : await publishReport(
          databaseFromEnv({ statementTimeoutMs: PUBLISH_TIMEOUT_SECONDS * 1000 }),
          { put: async () => undefined },
          { bucket: process.env.PUBLISH_BUCKET ?? 'reference', prefix: process.env.PUBLISH_PREFIX ?? '' },
          { graceSeconds: graceSecondsFromEnv(process.env) },
        );
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  out = {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    objects: summary.objects.length,
    jsonBytes: summary.objects.find((o) => o.key.endsWith('.json'))?.bytes ?? 0,
    pageBytes: summary.objects.find((o) => o.key.endsWith('.html'))?.bytes ?? 0,
    completeness: summary.completeness,
  };
  await closeDatabaseFromEnv();
} catch (err) {
  out = { error: err instanceof Error ? err.message : String(err) };
}
out.peakRssMiB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify(out)}\n`);
await proxy?.close();
