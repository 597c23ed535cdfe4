import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExportHandler,
  OTLP_ENDPOINT_PARAMETER_ENV,
  OTLP_HEADERS_PARAMETER_ENV,
} from '../../lib/export/handler.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../local/otlp-receiver.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../support/targets.js';

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

describe.each(TARGET_FIXTURES)('export function on %s, %s host schema', (name, fixture) => {
  // R3-3: on the host's real DDL the table is the host's own
  const t = useTestDatabase(name, { fixture, subagentTable: fixture !== 'host' });
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());

  it('R3-10, R4-8: a scheduled run reads endpoint and headers from SSM parameters, exports, and an idle next run sends nothing', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', parent_tool_call_id: 'a', observed_at: T(3), settled_at: T(4) },
    ]);
    // The parameter store as SSM holds it (the function reads it through readSsmParameter when deployed).
    const parameters: Record<string, string> = {
      '/subagent-context/test/otlp-endpoint': `${receiver.origin}/v1/traces`,
      '/subagent-context/test/otlp-headers': 'authorization=Bearer%20s3cret',
    };
    const handler = createExportHandler({
      db: () => t.db,
      env: {
        [OTLP_ENDPOINT_PARAMETER_ENV]: '/subagent-context/test/otlp-endpoint',
        [OTLP_HEADERS_PARAMETER_ENV]: '/subagent-context/test/otlp-headers',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      readParameter: async (parameter) => parameters[parameter] ?? Promise.reject(new Error('ParameterNotFound')),
    });
    const context = { getRemainingTimeInMillis: () => 290_000 };
    const first = await handler({}, context);
    expect(first).toMatchObject({ spans: 3, complete: true });
    expect(receiver.requests[0]!.headers.authorization).toBe('Bearer s3cret');
    expect(receiver.requests[0]!.contentType).toBe('application/json');
    // R4-8: the next run reads 900 s (the lookback) before its position, finds these turns as they
    // were sent, and sends nothing (the scheduled run every 15 minutes stays silent when idle)
    expect(await handler({}, context)).toMatchObject({ spans: 0, unchanged: 1, requests: 0 });
    expect(receiver.requests).toHaveLength(1);
  });

  it('R3-10: a run with too little time left starts no page and says it is not complete', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const handler = createExportHandler({
      db: () => t.db,
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: '/p/endpoint' },
      readParameter: async () => receiver.origin,
    });
    expect(await handler({}, { getRemainingTimeInMillis: () => 30_000 })).toMatchObject({ spans: 0, complete: false });
  });
});
