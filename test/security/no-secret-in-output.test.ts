import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { closeDatabaseFromEnv } from '../../lib/db/from-env.js';
import { createLogger } from '../../lib/observability.js';
import { startLocalPipeline } from '../../local/pipeline.js';
import { captureOutput, sqsEvent, sqsRecord } from '../lib/ingest/support.js';
import { frame } from '../support/frames.js';

// R2-6: broken DATABASE_URLs that hold a password, fed to every function and the CLI; whatever
// they print (stdout, stderr: logs, EMF, errors) and whatever they throw never holds the password.
const PASSWORD = 'Pa55-w0rd-R2-6';
const BROKEN_URLS = [
  `postgres://app:${PASSWORD}@no-such-host.invalid:5432/neondb`, // unresolvable host
  `postgres://app:${PASSWORD}@@:notaport/neondb`, // malformed
  `postgresql://app:${PASSWORD}@127.0.0.1:1/neondb?sslmode=require`, // nothing listens
  `mysql://app:${PASSWORD}@db.example/x`, // unsupported scheme
];
const ENV = [
  'DATABASE_URL',
  'DATABASE_WS_PROXY',
  'DLQ_URL',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_ENDPOINT_URL_SQS',
] as const;
const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));

afterEach(async () => {
  await closeDatabaseFromEnv().catch(() => undefined);
  for (const k of ENV) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

/** Everything printed while `fn` runs, plus what it threw (message, stack and causes), as one string. */
async function everythingFrom(fn: () => Promise<unknown>): Promise<string> {
  const chunks: string[] = [];
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((s) => s.write);
  for (const s of streams) {
    s.write = ((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    }) as typeof s.write;
  }
  let thrown = '';
  try {
    await fn();
  } catch (err) {
    for (let e: unknown = err; e instanceof Error; e = e.cause) thrown += `${e.message}\n${e.stack}\n`;
  } finally {
    for (const [i, s] of streams.entries()) s.write = originals[i]!;
  }
  return chunks.join('') + thrown;
}

const lambdaContext = { getRemainingTimeInMillis: () => 3000 } as never;

describe.each(BROKEN_URLS)('R2-6: DATABASE_URL %s', (url) => {
  it.each(['ingest', 'migrate', 'health'] as const)(
    'R2-6: the %s function never prints or throws the password',
    async (fn) => {
      Object.assign(process.env, {
        DATABASE_URL: url,
        DLQ_URL: 'http://127.0.0.1:1/000000000000/dlq.fifo',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'x',
        AWS_SECRET_ACCESS_KEY: 'y',
        AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:1',
      });
      delete process.env.DATABASE_WS_PROXY;
      vi.resetModules();
      const modules = {
        ingest: () => import('../../functions/ingest.js'),
        migrate: () => import('../../functions/migrate.js'),
        health: () => import('../../functions/health.js'),
      };
      const { handler } = (await modules[fn]()) as unknown as {
        handler: (event: unknown, context: unknown) => Promise<unknown>;
      };
      const event = fn === 'ingest' ? sqsEvent([sqsRecord(frame(), 's1')]) : {};
      const output = await everythingFrom(() => handler(event, lambdaContext));
      expect(output.length).toBeGreaterThan(0); // it did report something
      expect(output).not.toContain(PASSWORD);
    },
    20_000,
  );

  it.each(['migrate', 'health', 'ingest'] as const)(
    'R2-6: `subagent-context %s` never prints the password',
    async (command) => {
      let stdout = '';
      let stderr = '';
      const argv =
        command === 'ingest'
          ? [command, '/nonexistent/frames.jsonl', '--database-url', url, '--json']
          : [command, '--database-url', url, '--json', '--verbose'];
      const printed = await everythingFrom(() =>
        runCli(
          argv,
          {
            stdout: { write: (t: string) => (stdout += t) },
            stderr: { write: (t: string) => (stderr += t), isTTY: false },
            env: {},
          },
          { startPipeline: startLocalPipeline },
        ),
      );
      expect(stdout + stderr).not.toBe('');
      expect(stdout + stderr + printed).not.toContain(PASSWORD);
    },
    20_000,
  );
});

describe('R2-6: the logger redacts every line', () => {
  it('R2-6: a URL with a password in a message, an attribute or an error cause is redacted', async () => {
    const log = createLogger();
    const url = `postgres://app:${PASSWORD}@db/x`;
    const { lines } = await captureOutput(async () => {
      log.error(`cannot reach ${url}`, {
        database_url: url,
        error: new Error('wrapped', { cause: new Error(`parse failed for ${url}`) }),
      });
    });
    expect(JSON.stringify(lines)).not.toContain(PASSWORD);
    expect(JSON.stringify(lines)).toContain('postgres://***@db/x');
  });
});
