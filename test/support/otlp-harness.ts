import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Queryable } from '../../lib/db/database.js';
import { type OtlpProtocol, resolveOtlpTarget } from '../../lib/export/otlp/config.js';
import { createOtlpSink, type RetryNotice, type SpanSink } from '../../lib/export/otlp/transport.js';
import { POSITION_KEY } from '../../lib/export/position.js';
import type { ExportOptions } from '../../lib/export/run.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../local/otlp-receiver.js';

/*
 * What the export tests share: a real OTLP/HTTP receiver on 127.0.0.1 (local/otlp-receiver.ts) for
 * a describe block, and the real exporter's sink pointed at it. Each test file keeps its own rows.
 */

/** A receiver started once for the enclosing describe block and emptied before each test. */
export function useOtlpReceiver(): () => OtlpReceiver {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());
  // requests, spans and any scripted answer a test left unused
  beforeEach(() => receiver.reset());
  return () => receiver;
}

/** The export position as stored under the default key (undefined: none), read with plain SQL, not position.ts. */
export async function storedPositionText(db: Queryable): Promise<string | undefined> {
  const [row] = await db.query<{ value: string }>('SELECT value FROM kandev_meta WHERE key = $1', [POSITION_KEY]);
  return row?.value;
}

/** runExport's options in the tests: every row settled at once, the default position key. */
export function exportOptions(lookbackSeconds: number): ExportOptions {
  return {
    openSpans: false,
    batchSpans: 512,
    pageTurns: 100,
    settleSeconds: 0,
    position: 'resume',
    positionKey: POSITION_KEY,
    lookbackSeconds,
  };
}

export interface ReceiverSinkOptions {
  protocol?: OtlpProtocol;
  retries?: number;
  backoffMillis?: number;
  timeoutMillis?: number;
  onRetry?: (notice: RetryNotice) => void;
}

/** The real exporter's sink to `receiver` (short back-off: the tests' retries are against a local peer). */
export function receiverSink(
  receiver: OtlpReceiver,
  options: ReceiverSinkOptions = {},
): { url: string; sink: SpanSink } {
  const otlp = resolveOtlpTarget(
    { url: receiver.origin, ...(options.protocol ? { protocol: options.protocol } : {}) },
    {},
  );
  const sink = createOtlpSink(otlp, {
    timeoutMillis: options.timeoutMillis ?? 10_000,
    retries: options.retries ?? 1,
    backoffMillis: options.backoffMillis ?? 10,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
  });
  return { url: otlp.url, sink };
}
