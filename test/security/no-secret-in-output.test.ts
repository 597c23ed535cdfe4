import { execFile } from 'node:child_process';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../lib/cli/main.js';
import { loadDatabaseUrl } from '../../lib/config/database-url.js';
import { closeDatabaseFromEnv, databaseFromEnv } from '../../lib/db/from-env.js';
import { createHealthHandler } from '../../lib/health/handler.js';
import { createIngestHandler } from '../../lib/ingest/handler.js';
import { createMigrateHandler } from '../../lib/migrate/handler.js';
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
  PASSWORD, // D1: a bare password where the URL belongs
  `PGPASSWORD=${PASSWORD}`, // D1: a shell assignment pasted as the value
  `host=db password=${PASSWORD} dbname=x`, // D1: a libpq key=value string
  `postgres://acc:${PASSWORD}@%zz:5432/db`, // D2: the driver's TypeError: Invalid URL keeps the URL as its own `input`
  `postgres://app:pa ss${PASSWORD}@127.0.0.1:1/db`, // D13: a password holding a space
  `postgres://app:${PASSWORD}"<\`x@127.0.0.1:1/db`, // D13: a quote, < and a backtick
];
const ENV = [
  'DATABASE_URL',
  'DATABASE_URL_SSM_PARAMETER',
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

/**
 * A thrown error as the Lambda Node.js runtime logs it (`Invoke Error`): JSON.stringify with each
 * error replaced by its name, message, `code` and own enumerable properties, stack split in lines.
 */
function asLambdaRuntimeLogs(err: unknown): string {
  return JSON.stringify(err, (_key, value: unknown) =>
    value instanceof Error
      ? Object.assign(
          { errorType: value.name, errorMessage: value.message, code: (value as { code?: unknown }).code },
          value,
          { stack: value.stack?.split('\n') },
        )
      : value,
  );
}

/**
 * Everything printed while `fn` runs, plus what it returned and what it threw: the message, stack and
 * cause chain, the error as the Lambda runtime serialises it (own enumerable properties) and as
 * util.inspect prints it (own properties and causes, all levels), as one string.
 */
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
    thrown += JSON.stringify(await fn()) ?? '';
  } catch (err) {
    for (let e: unknown = err; e instanceof Error; e = e.cause) thrown += `${e.message}\n${e.stack}\n`;
    thrown += `${asLambdaRuntimeLogs(err)}\n${inspect(err, { depth: Infinity })}\n${String(err)}`;
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

const handlers = {
  ingest: () =>
    createIngestHandler({
      db: databaseFromEnv,
      sqs: { sendMessageBatch: async () => ({}) },
      dlqUrl: 'http://127.0.0.1:1/000000000000/dlq.fifo',
      loadConfig: () => loadDatabaseUrl({ readParameter: async () => ssmValue }),
    }),
  migrate: () =>
    createMigrateHandler({
      db: databaseFromEnv,
      loadConfig: () => loadDatabaseUrl({ readParameter: async () => ssmValue }),
    }),
  health: () =>
    createHealthHandler({
      db: databaseFromEnv,
      loadConfig: () => loadDatabaseUrl({ readParameter: async () => ssmValue }),
    }),
};
let ssmValue = '';

describe.each(BROKEN_URLS)('R2-6: the SSM parameter holds %s', (value) => {
  it.each(['ingest', 'migrate', 'health'] as const)(
    'R2-6: the %s function never prints, returns or throws the password',
    async (fn) => {
      delete process.env.DATABASE_URL;
      delete process.env.DATABASE_WS_PROXY;
      process.env.DATABASE_URL_SSM_PARAMETER = '/subagent-context/test/database-url';
      ssmValue = value;
      const handler = handlers[fn]() as (event: unknown, context: unknown) => Promise<unknown>;
      const event = fn === 'ingest' ? sqsEvent([sqsRecord(frame(), 's1')]) : {};
      const output = await everythingFrom(() => handler(event, lambdaContext));
      expect(output.length).toBeGreaterThan(0);
      expect(output).not.toContain(PASSWORD);
    },
    20_000,
  );
});

describe('R2-6: npm start', () => {
  it.each([PASSWORD, `PGPASSWORD=${PASSWORD}`, `postgres://acc:${PASSWORD}@%zz:5432/db`])(
    "R2-6: npm start's `local stack failed:` line never holds the password (--database-url %s)",
    async (url) => {
      const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'bin/local-stack.ts', '--database-url', url],
          { timeout: 30_000 },
          (_err, out, errOut) => resolve({ stdout: out, stderr: errOut }),
        );
      });
      expect(stderr).toMatch(/local stack failed: /);
      expect(stdout + stderr).not.toContain(PASSWORD);
    },
    40_000,
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
