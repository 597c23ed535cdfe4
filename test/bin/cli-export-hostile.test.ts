import { beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { EXPORT_DEFAULTS } from '../../lib/defaults.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { storedPositionText, useOtlpReceiver } from '../support/otlp-harness.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * `export` against hostile collectors and flags (issue 48), through the real CLI and a real
 * collector on 127.0.0.1 (local/otlp-receiver.ts): every wait is bounded, an answer that cannot be
 * read is never taken as success (R4-8), a flag's value never reaches the collector or a forged
 * line, and a password never shows.
 */

const cli = (...argv: string[]) => runCliJson(argv, testProxyEnv());
const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

describe.each(TARGETS)('subagent-context export against a hostile collector on %s', (name) => {
  const t = useTestDatabase(name);
  const receiver = useOtlpReceiver();
  beforeEach(async () => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
    ]);
  });
  const exportRun = (...flags: string[]) =>
    cli('export', '--otlp', receiver().origin, '--database-url', t.url, '--json', ...flags);

  it('issue 58: a turn whose subagents are all still open is held back and said so, in text and JSON; --open-spans sends it', async () => {
    await insertRows(t.db, [{ tool_call_id: 'c', turn_id: 'u3', observed_at: T(5), settled_at: null }]);
    const held = await exportRun('--no-position');
    expect(held.code).toBe(EXIT.ok);
    expect(held.json).toMatchObject({ turns: 2, heldBack: 1 });
    const text = await cli('export', '--otlp', receiver().origin, '--database-url', t.url, '--no-position');
    expect(text.stdout).toMatch(
      /^held back\s+1 turn whose subagents are all still open: sent once one settles \(or with --open-spans\)$/m,
    );
    const open = await exportRun('--no-position', '--open-spans');
    expect(open.json).toMatchObject({ turns: 3, heldBack: 0 });
    // nothing held back: no line about it
    const none = await cli(
      'export',
      '--otlp',
      receiver().origin,
      '--database-url',
      t.url,
      '--no-position',
      '--open-spans',
    );
    expect(none.stdout).not.toMatch(/held back/);
  });

  it('R4-8 (issue 48): a partialSuccess over 1 MiB is cut, never success: exit 3, spans counted unknown, the position kept; the rerun sends them again', async () => {
    const huge = { partialSuccess: { rejectedSpans: 2, errorMessage: 'x'.repeat(EXPORT_DEFAULTS.answerBytes + 10) } };
    receiver().respond(huge, huge);
    const cut = await exportRun();
    expect(cut.code).toBe(EXIT.attention);
    expect(cut.json).toMatchObject({
      requests: 1,
      rejectedSpans: 0,
      unknownSpans: 4,
      unknownReason: `the answer was cut after ${EXPORT_DEFAULTS.answerBytes} bytes`,
      complete: false,
      position: { before: null, after: null },
    });
    expect(await storedPositionText(t.db)).toBeUndefined();
    const text = await cli('export', '--otlp', receiver().origin, '--database-url', t.url);
    // the same cut again in text: the line says what is unknown and that the position was kept
    expect(text.code).toBe(EXIT.attention);
    expect(text.stdout).toMatch(/unknown\s+4 spans answered 2xx, but the answer .*position was kept/);
    receiver().requests.length = 0;
    const again = await exportRun();
    expect(again.code).toBe(EXIT.ok);
    expect(again.json).toMatchObject({ turns: 2, spans: 4, unknownSpans: 0 });
    expect(await storedPositionText(t.db)).toBeDefined();
  });

  it('R4-8 (issue 48): a 2xx whose body is not an OTLP answer is unknown, not success: exit 3, the position kept', async () => {
    receiver().respond({ status: 200, body: '<html>maintenance</html>' });
    const run = await exportRun();
    expect(run.code).toBe(EXIT.attention);
    expect(run.json).toMatchObject({ unknownSpans: 4, position: { after: null } });
    expect(run.json.unknownReason).toMatch(/is not an OTLP ExportTraceServiceResponse/);
    expect(await storedPositionText(t.db)).toBeUndefined();
  });

  const unreadable = name === 'sqlite' ? ['', '10000-01-01 00:00:00+00:00'] : ['infinity'];
  it.each(unreadable)(
    'R4-3 (issue 48): one row whose observed_at is %j leaves its turn in the export: the readable row goes out, the odd one is counted',
    async (value) => {
      await insertRows(t.db, [{ tool_call_id: 'c', turn_id: 'u1', observed_at: T(5), settled_at: T(6) }]);
      const cast = name === 'sqlite' ? '$1' : '$1::timestamp';
      await t.db.query(`UPDATE task_session_subagents SET observed_at = ${cast} WHERE tool_call_id = 'c'`, [value]);
      const run = await exportRun();
      expect(run.code).toBe(EXIT.ok);
      expect(run.json).toMatchObject({ turns: 2, skipped: [], unreadable: { observed_at: 1 } });
      const calls = receiver().spans.flatMap((s) => s.attributes['subagent_context.tool_call_id'] ?? []);
      expect(calls.sort()).toEqual(['a', 'b']);
      const text = await cli('export', '--otlp', receiver().origin, '--database-url', t.url, '--no-position');
      expect(text.stdout).toMatch(/unreadable\s+observed_at 1 \(left out\)/);
    },
  );

  it('R3-10 (issue 48): a --header value that is not a valid HTTP header value is a usage error naming the flag; nothing is sent or retried', async () => {
    for (const flags of [
      ['--header', 'x-team=Ωmega'],
      ['--header', 'x-team=Ωmega', '--no-position'],
    ]) {
      const run = await exportRun(...flags);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toMatch(/^--header x-team: the value is not a valid HTTP header value/);
      expect(run.stderr).not.toContain('mega');
      expect(run.stderr).not.toMatch(/attempt|collector|resume/);
    }
    expect(receiver().requests).toHaveLength(0);
  });

  it('R3-10 (issue 48): a header variable whose value is not a valid HTTP header value is refused the same way, naming the variable', async () => {
    const run = await runCliJson(['export', '--otlp', receiver().origin, '--database-url', t.url], {
      ...testProxyEnv(),
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=%CE%A9mega',
    });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/^OTEL_EXPORTER_OTLP_HEADERS x-team: the value is not a valid HTTP header value/);
    expect(receiver().requests).toHaveLength(0);
  });
});

describe('subagent-context export: usage errors quote no secret and forge no line', () => {
  it.each(['http://admin:Sup3r#Secret@collector:4318/v1/traces', 'http://admin:Sup3r?Secret@collector:4318/v1/traces'])(
    'R4-9 (issue 48): --otlp %s (a password with # or ?) is not a URL, and no part of the password shows',
    async (url) => {
      const run = await cli('export', '--otlp', url, '--database-url', 'sqlite:/nonexistent/store.db');
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toContain('the OTLP endpoint "http://***@collector:4318/v1/traces" is not a URL');
      expect(run.stderr).not.toMatch(/Sup3r|Secret|admin/);
    },
  );

  it.each([
    ['--since', '2026-01-01\nFORGED: ok'],
    ['--batch-spans', '1\r\nFORGED: ok'],
    ['--lookback-seconds', 'x\u001b[2J\nFORGED: ok'],
  ])(
    'R4-2 (issue 48): %s with a line feed in its value is a usage error of one line: the value is shown escaped',
    async (flag, value) => {
      const run = await cli(
        'export',
        '--otlp',
        'http://127.0.0.1:1',
        '--database-url',
        'sqlite:/nonexistent/s.db',
        flag,
        value,
      );
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).not.toMatch(/^FORGED/m);
      expect(run.stderr).not.toContain('\u001b');
      const [first] = run.stderr.split('\n');
      expect(first).toMatch(new RegExp(`^${flag} needs .*\\\\x0AFORGED: ok`));
    },
  );
});

// The transport's bounds read no database: one target shows them through the CLI (each run waits its bounds out).
describe(`subagent-context export's bounds against a slow or endless collector (on ${TARGETS[0]})`, () => {
  const t = useTestDatabase(TARGETS[0]!);
  const receiver = useOtlpReceiver();
  beforeEach(async () => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
  });

  it('R4-8 (issue 48): a collector answering 200 then one byte every 2 s is cut at the whole-request bound: exit 3, unknown, the position kept, no retry', async () => {
    receiver().respond({ endless: { chunk: '\u000a', everyMs: 2_000 } });
    const started = Date.now();
    const run = await cli('export', '--otlp', receiver().origin, '--database-url', t.url, '--json');
    const took = Date.now() - started;
    expect(run.code).toBe(EXIT.attention);
    expect(run.json).toMatchObject({ requests: 1, unknownSpans: 2, position: { after: null } });
    expect(run.json.unknownReason).toMatch(/still arriving when the request timed out after 10000 ms/);
    expect(receiver().requests).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(EXPORT_DEFAULTS.requestTimeoutMs - 100);
    expect(took).toBeLessThan(EXPORT_DEFAULTS.requestTimeoutMs + 3_000);
  }, 20_000);

  it('R3-10 (issue 48): a 503 with an endless body is read to its bound and closed on each attempt: the run ends after its retries, exit 1', async () => {
    const endless = { status: 503, endless: { chunk: 'x'.repeat(64 * 1024), everyMs: 0 } };
    receiver().respond(endless, endless, endless, endless);
    const started = Date.now();
    const run = await cli('export', '--otlp', receiver().origin, '--database-url', t.url);
    const took = Date.now() - started;
    expect(run.code).toBe(EXIT.failure);
    expect(receiver().requests).toHaveLength(EXPORT_DEFAULTS.retries + 1);
    expect(run.stderr).toMatch(/did not accept the batch after 4 attempt\(s\) \(last: HTTP 503: x+/);
    expect(run.stderr).toMatch(
      /Nothing was lost: the export position was not moved; run again later to resume from it/,
    );
    // the pauses (1 + 2 + 4 s) and four bounded reads, not an endless one
    expect(took).toBeLessThan(7_000 + 4_000);
  }, 20_000);
});
