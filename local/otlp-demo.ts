import { TABLE } from '../lib/columns.js';
import type { Queryable } from '../lib/db/database.js';
import { EXPORT_DEFAULTS } from '../lib/defaults.js';
import { resolveOtlpTarget } from '../lib/export/otlp/config.js';
import { createOtlpSink } from '../lib/export/otlp/transport.js';
import { POSITION_KEY } from '../lib/export/position.js';
import { runExport } from '../lib/export/run.js';
import { startOtlpReceiver } from './otlp-receiver.js';

export interface OtlpDemoResult {
  endpoint: string;
  /** spans the export sent and the receiver accepted and decoded */
  sent: number;
  received: number;
  requests: number;
  /** distinct trace ids received (one per turn) */
  traces: number;
  /** received `invoke_agent` spans, and the settled rows they must equal */
  subagentSpans: number;
  settledRows: number;
}

/**
 * `npm start -- --otlp-demo` (docs/otlp.md#demo-and-benchmark): an OTLP/HTTP receiver on
 * 127.0.0.1, one export of the store to it (http/protobuf, gzip, the position neither read nor
 * moved), and what arrived.
 */
export async function runOtlpDemo(db: Queryable): Promise<OtlpDemoResult> {
  const receiver = await startOtlpReceiver();
  try {
    const target = resolveOtlpTarget({ url: receiver.origin, protocol: 'http/protobuf' }, {});
    const sink = createOtlpSink(target, {
      timeoutMillis: EXPORT_DEFAULTS.requestTimeoutMs,
      retries: EXPORT_DEFAULTS.retries,
      backoffMillis: EXPORT_DEFAULTS.backoffMs,
    });
    const summary = await runExport(db, sink, target.url, {
      openSpans: false,
      batchSpans: EXPORT_DEFAULTS.batchSpans,
      pageTurns: EXPORT_DEFAULTS.pageTurns,
      settleSeconds: 0,
      position: 'none',
      positionKey: POSITION_KEY,
    }).finally(() => sink.shutdown());
    const [settled] = await db.query<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${TABLE} WHERE settled_at IS NOT NULL`,
    );
    return {
      endpoint: summary.endpoint,
      sent: summary.spans,
      received: receiver.spans.length,
      requests: receiver.requests.length,
      traces: new Set(receiver.spans.map((s) => s.traceId)).size,
      subagentSpans: receiver.spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent').length,
      settledRows: Number(settled?.n ?? 0),
    };
  } finally {
    await receiver.close();
  }
}
