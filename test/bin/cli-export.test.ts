import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../local/otlp-receiver.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { schemaErrors } from '../support/command-schema.js';
import { useOtlpReceiver } from '../support/otlp-harness.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/** The real CLI in-process (test/support/cli-run.ts) with `env` beside the test database's proxy. */
const cli = (env: NodeJS.ProcessEnv, ...argv: string[]) => runCliJson(argv, { ...testProxyEnv(), ...env });

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

describe.each(TARGETS)('subagent-context export on %s', (name) => {
  const t = useTestDatabase(name);
  const receiver = useOtlpReceiver();
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });

  it('R3-10: export --otlp sends the trees and prints what it sent; a second run resumes after its position', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', parent_tool_call_id: 'a', observed_at: T(3), settled_at: T(4) },
    ]);
    const run = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url, '--json');
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({
      endpoint: `${receiver().origin}/v1/traces`,
      turns: 1,
      new: 1,
      reSent: 0,
      spans: 3,
      requests: 1,
      rejectedSpans: 0,
    });
    expect(schemaErrors('export.v1.schema.json', run.json)).toEqual([]); // issue 51
    expect(receiver().requests[0]!.contentType).toBe('application/x-protobuf');
    const again = await cli(
      {},
      'export',
      '--otlp',
      receiver().origin,
      '--database-url',
      t.url,
      '--json',
      '--lookback-seconds',
      '0',
    );
    expect(again.json).toMatchObject({ spans: 0 });
    // R4-8: by default a resumed run looks back 900 s behind its position (late frames, R3-1), but
    // the turns there are as they were sent: nothing goes out again
    const lookback = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url, '--json');
    expect(lookback.json).toMatchObject({ spans: 0, new: 0, reSent: 0, unchanged: 1, requests: 0 });
    expect(receiver().requests).toHaveLength(1);
  });

  it('R3-10: the endpoint, headers and protocol come from the OTEL_EXPORTER_OTLP_* variables when no flag says otherwise', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const run = await cli(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver().origin,
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
    const request = receiver().requests[0]!;
    expect(request.contentType).toBe('application/json');
    expect(request.headers['x-tenant']).toBe('override');
    expect(request.headers.authorization).toBe('Basic abc');
  });

  it('R3-10: a 400 exits 1 with the endpoint named, credentials redacted', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver().respond(400);
    const url = receiver().origin.replace('http://', 'http://me:pa55@');
    const run = await cli({}, 'export', '--otlp', url, '--database-url', t.url);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toContain(
      `the OTLP collector at ${receiver().origin.replace('http://', 'http://***@')}/v1/traces refused the batch with HTTP 400`,
    );
    expect(run.stderr).not.toContain('pa55');
  });

  it.each([
    [['--protocol', 'grpc'], /http\/protobuf or http\/json/],
    [['--since', 'yesterday'], /--since needs an RFC 3339 instant/],
    [['--batch-spans', '0'], /--batch-spans needs a positive count of spans, a whole number of at least 1/],
    [['--position-key', 'mine'], /--position-key must start with subagent_context_otlp_position/],
  ])('R3-10: export %j is a usage error (exit 2)', async (args, message) => {
    const run = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url, ...args);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
  });

  it('R4-8: the summary separates new from re-sent turns, in text and --json', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
    ]);
    const first = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url);
    expect(first.code).toBe(EXIT.ok);
    expect(first.stdout).toMatch(/new\s+2 turns/);
    expect(first.stdout).toMatch(/re-sent\s+0 turns/);
    await t.db.query("UPDATE task_session_subagents SET total_tokens = 5 WHERE tool_call_id = 'b'");
    const again = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url, '--json');
    expect(again.json).toMatchObject({ new: 0, reSent: 1, unchanged: 1, spans: 2 });
  });

  it('R4-8: a collector answering partialSuccess makes export exit 3, printing the rejected count and message', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver().respond({ partialSuccess: { rejectedSpans: 2, errorMessage: 'dropped: too old' } });
    const run = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url);
    expect(run.code).toBe(EXIT.attention);
    expect(run.stdout).toMatch(/rejected\s+2 spans by the collector: dropped: too old/);
    receiver().respond({ partialSuccess: { rejectedSpans: 1 } });
    await t.db.query("UPDATE task_session_subagents SET total_tokens = 5 WHERE tool_call_id = 'a'");
    const json = await cli({}, 'export', '--otlp', receiver().origin, '--database-url', t.url, '--json');
    expect(json.code).toBe(EXIT.attention);
    expect(json.json).toMatchObject({ rejectedSpans: 1, spans: 2 });
  });

  it('R4-9: no query value of the endpoint and no echoed header reaches any output (summary, --json, errors)', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const url = `${receiver().origin.replace('http://', 'http://me:PA55WD@')}/v1/traces?key=K3YVAL&sig=S1GVAL&code=C0DEVAL&auth=AU7HVAL`;
    const headers = [
      ...['--header', 'authorization=Bearer SECRET123', '--header', 'cookie=session=C00KIEVAL'],
      ...['--header', 'x-scope-orgid=T3NANTVAL'],
    ];
    const secrets = /PA55WD|K3YVAL|S1GVAL|C0DEVAL|AU7HVAL|SECRET123|C00KIEVAL|T3NANTVAL/;
    const text = await cli({}, 'export', '--otlp', url, ...headers, '--database-url', t.url, '--no-position');
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toMatch(/endpoint\s+http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1\/traces\s/);
    const json = await cli({}, 'export', '--otlp', url, ...headers, '--database-url', t.url, '--no-position', '--json');
    expect((json.json as { endpoint: string }).endpoint).toBe(
      `${receiver().origin.replace('http://', 'http://***@')}/v1/traces`,
    );
    // a collector whose 401 page echoes the request's headers
    receiver().respond({ status: 401, echoHeaders: true });
    const refused = await cli({}, 'export', '--otlp', url, ...headers, '--database-url', t.url, '--no-position');
    expect(refused.code).toBe(EXIT.failure);
    expect(refused.stderr).toContain('refused the batch with HTTP 401: ');
    expect(refused.stderr).toContain('authorization: ***');
    expect(receiver().requests.at(-1)!.headers.authorization).toBe('Bearer SECRET123'); // it was sent
    for (const run of [text, json, refused]) expect(run.stdout + run.stderr).not.toMatch(secrets);
  });

  it('R4-9: while a dead port is retried, a stderr line per retry says so; the failure names the last error', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    // the defaults (lib/defaults.ts): 3 retries after 1 s, 2 s, 4 s
    const run = await cli({}, 'export', '--otlp', `http://127.0.0.1:${port}`, '--database-url', t.url);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toContain('export: attempt 1 of 4 failed (ECONNREFUSED); retrying in 1.0 s\n');
    expect(run.stderr).toContain('export: attempt 2 of 4 failed (ECONNREFUSED); retrying in 2.0 s\n');
    expect(run.stderr).toContain('export: attempt 3 of 4 failed (ECONNREFUSED); retrying in 4.0 s\n');
    expect(run.stderr).toContain('did not accept the batch after 4 attempt(s) (last: ECONNREFUSED)');
  }, 60_000);

  it('R3-10: export without an endpoint says how to give one', async () => {
    const run = await cli({}, 'export', '--database-url', t.url);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/no OTLP endpoint: pass --otlp/);
  });
});
