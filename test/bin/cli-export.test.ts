import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../local/otlp-receiver.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/** The real CLI in-process (test/support/cli-run.ts) with `env` beside the test database's proxy. */
const cli = (env: NodeJS.ProcessEnv, ...argv: string[]) => runCliJson(argv, { ...testProxyEnv(), ...env });

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

describe.each(TARGETS)('subagent-context export on %s', (name) => {
  const t = useTestDatabase(name);
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.spans.length = 0;
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });

  it('R3-10: export --otlp sends the trees and prints what it sent; a second run resumes after its position', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', parent_tool_call_id: 'a', observed_at: T(3), settled_at: T(4) },
    ]);
    const run = await cli({}, 'export', '--otlp', receiver.origin, '--database-url', t.url, '--json');
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({ endpoint: `${receiver.origin}/v1/traces`, turns: 1, spans: 3, requests: 1 });
    expect(receiver.requests[0]!.contentType).toBe('application/x-protobuf');
    const again = await cli(
      {},
      'export',
      '--otlp',
      receiver.origin,
      '--database-url',
      t.url,
      '--json',
      '--lookback-seconds',
      '0',
    );
    expect(again.json).toMatchObject({ spans: 0 });
    // by default a resumed run looks back 900 s behind its position (late frames, R3-1): the same spans again
    const lookback = await cli({}, 'export', '--otlp', receiver.origin, '--database-url', t.url, '--json');
    expect(lookback.json).toMatchObject({ spans: 3 });
  });

  it('R3-10: the endpoint, headers and protocol come from the OTEL_EXPORTER_OTLP_* variables when no flag says otherwise', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const run = await cli(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=acme,authorization=Basic%20abc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      },
      'export',
      '--header',
      'x-tenant=override',
      '--database-url',
      t.url,
    );
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).not.toContain('Basic');
    const request = receiver.requests[0]!;
    expect(request.contentType).toBe('application/json');
    expect(request.headers['x-tenant']).toBe('override');
    expect(request.headers.authorization).toBe('Basic abc');
  });

  it('R3-10: a 400 exits 1 with the endpoint named, credentials redacted', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver.respond(400);
    const url = receiver.origin.replace('http://', 'http://me:pa55@');
    const run = await cli({}, 'export', '--otlp', url, '--database-url', t.url);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toContain(
      `the OTLP collector at ${receiver.origin.replace('http://', 'http://***@')}/v1/traces refused the batch with HTTP 400`,
    );
    expect(run.stderr).not.toContain('pa55');
  });

  it.each([
    [['--protocol', 'grpc'], /http\/protobuf or http\/json/],
    [['--since', 'yesterday'], /--since needs an RFC 3339 instant/],
    [['--batch-spans', '0'], /--batch-spans needs a positive count of spans, a whole number of at least 1/],
    [['--position-key', 'mine'], /--position-key must start with subagent_context_otlp_position/],
  ])('R3-10: export %j is a usage error (exit 2)', async (args, message) => {
    const run = await cli({}, 'export', '--otlp', receiver.origin, '--database-url', t.url, ...args);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
  });

  it('R3-10: export without an endpoint says how to give one', async () => {
    const run = await cli({}, 'export', '--database-url', t.url);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/no OTLP endpoint: pass --otlp/);
  });
});
