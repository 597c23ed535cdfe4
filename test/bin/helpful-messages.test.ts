import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/* Issue 51, item 9: messages that say what was meant, and each command's own help. */

const cli = (...argv: string[]) => runCliCaptured(argv, { ...testProxyEnv() });
const first = (text: string) => text.split('\n')[0];

describe('issue 51: messages that help', () => {
  it('issue 51: a mistyped command gets the nearest one (exit 2)', async () => {
    const run = await cli('reprot');
    expect(run.code).toBe(EXIT.usage);
    expect(first(run.stderr)).toBe('unknown command "reprot": did you mean report?');
  });

  it.each(['/tmp/x.db', 'file:/tmp/x.db', 'file:///tmp/x.db'])(
    'issue 51: --database-url %s says the sqlite: form that opens it (exit 2)',
    async (url) => {
      const run = await cli('report', '--database-url', url);
      expect(run.code).toBe(EXIT.usage);
      expect(first(run.stderr)).toBe(
        '--database-url must start with postgres://, postgresql:// or sqlite:; for a SQLite store write sqlite:/tmp/x.db',
      );
    },
  );

  it('issue 51: sqlite://tmp/x.db (a host, as a URL reads it) is refused with the two forms that say what they mean', async () => {
    const run = await cli('report', '--database-url', 'sqlite://tmp/x.db');
    expect(run.code).toBe(EXIT.usage);
    expect(first(run.stderr)).toMatch(
      /^--database-url: a sqlite: URL with two slashes would name a host .*sqlite:\/abs\/path\.db \(or sqlite:\/\/\/abs\/path\.db\).*sqlite:\.\/path\.db/,
    );
  });

  it.each(['health', 'report', 'migrate', 'ingest', 'export'])(
    'issue 51: %s --help prints that command’s help, not the whole',
    async (command) => {
      const run = await cli(command, '--help');
      expect(run.code).toBe(EXIT.ok);
      expect(first(run.stdout)).toBe(`Usage: subagent-context ${command} [options]`);
      expect(run.stdout).toMatch(/--database-url <url>/);
      const others = ['health', 'report', 'migrate', 'ingest', 'export'].filter((c) => c !== command);
      for (const other of others) expect(run.stdout).not.toMatch(new RegExp(`^  ${other} `, 'm'));
    },
  );
});

describe.each(TARGETS)('issue 51: export over https to a plain-HTTP receiver on %s', (name) => {
  const t = useTestDatabase(name);
  it('issue 51: says the receiver speaks http at the first attempt, not after every retry', async () => {
    const server = createServer((_, res) => res.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await insertRows(t.db, [
        { tool_call_id: 'a', observed_at: '2026-08-12T13:00:01.000001Z', settled_at: '2026-08-12T13:00:02.000001Z' },
      ]);
      const started = performance.now();
      const run = await cli('export', '--otlp', `https://127.0.0.1:${port}`, '--database-url', t.url);
      expect(performance.now() - started).toBeLessThan(5000);
      expect(run.code).toBe(EXIT.failure);
      expect(run.stderr).not.toMatch(/retrying/);
      expect(run.stderr).toMatch(
        new RegExp(
          `answered the TLS handshake in plain HTTP \\(EPROTO\\): it speaks http, not https; use --otlp http://127\\.0\\.0\\.1:${port}\\. Nothing was lost`,
          'm',
        ),
      );
    } finally {
      server.close();
    }
  });
});
