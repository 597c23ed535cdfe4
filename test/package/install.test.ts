import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE } from '../../lib/cli/main.js';
import { openDatabase } from '../../lib/db/open.js';
import { type LocalSqs, startLocalSqs } from '../../local/fauxqs.js';
import { createHostSchema } from '../../local/host-schema.js';
import { frame } from '../support/frames.js';

/*
 * Issue 25: the package installs like a tool. `npm pack` (its prepack builds dist/) gives the
 * tarball a host or an operator installs; each project below starts empty and installs only the
 * tarball, without dev dependencies, so nothing of this checkout (tsx, the TypeScript sources)
 * can answer for it.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'subagent-context-package-'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
let tarball: string;

// two installed projects: removing them takes a while on a busy disk
afterAll(() => rm(work, { recursive: true, force: true }), 180_000);

beforeAll(async () => {
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT });
  tarball = join(work, stdout.trim().split('\n').pop()!);
}, 240_000);

/** Flags that change only where npm looks and what it prints, never what it installs. */
const QUIET_INSTALL = ['--prefer-offline', '--no-audit', '--no-fund'];

/**
 * The line docs/producers.md gives a host, as written there (README points to it): the test runs
 * exactly that, from the host's project, with the tarball copied in beside it.
 */
function documentedHostInstall(): string[] {
  const docs = readFileSync(join(ROOT, 'docs/producers.md'), 'utf8');
  const line = /^npm install \.\/subagent-context-\S+\.tgz[^#\n]*/m.exec(docs)?.[0];
  if (line === undefined) throw new Error('docs/producers.md gives no `npm install ./subagent-context-….tgz` line');
  return line.trim().split(/\s+/).slice(1);
}

/**
 * An empty project with the tarball copied in and installed by `npm <args>`. The operator's
 * install adds `--ignore-scripts`: better-sqlite3's install compiles its native module when no
 * prebuilt binary can be fetched, four minutes on two cores; the project gets this checkout's
 * build of the same pinned version instead.
 */
async function project(name: string, args: readonly string[]): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }));
  cpSync(tarball, join(dir, basename(tarball)));
  await run('npm', [...args, ...QUIET_INSTALL], { cwd: dir });
  const sqlite = join(dir, 'node_modules/better-sqlite3');
  if (existsSync(sqlite))
    cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), join(sqlite, 'build'), { recursive: true });
  return dir;
}

describe('the CLI installed from the tarball with --omit=dev (issue 25)', () => {
  let dir: string;
  let store: string;
  beforeAll(async () => {
    dir = await project('operator', ['install', `./${basename(tarball)}`, '--omit=dev', '--ignore-scripts']);
    store = join(dir, 'host.db');
    const db = openDatabase(`sqlite:${store}`, { create: true }); // the host made its store
    await createHostSchema(db);
    await db.close();
  }, 240_000);
  const cli = (...args: string[]) =>
    run(join(dir, 'node_modules/.bin/subagent-context'), args, { cwd: dir, env: { ...process.env, NODE_OPTIONS: '' } });

  it('installs no dev dependency (tsx, TypeScript, PGlite, fauxqs)', () => {
    const installed = readdirSync(join(dir, 'node_modules'));
    for (const dev of ['tsx', 'typescript', '@electric-sql', 'fauxqs', 'vitest']) expect(installed).not.toContain(dev);
    expect(existsSync(join(dir, 'node_modules/subagent-context/dist/bin/cli.js'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules/subagent-context/bin/cli.ts'))).toBe(false);
  });

  it('subagent-context --version prints the package version', async () => {
    expect((await cli('--version')).stdout.trim()).toBe(pkg.version);
  }, 30_000);

  it('subagent-context migrate runs on a fresh SQLite host store, with clean JSON on stdout', async () => {
    const { stdout } = await cli('migrate', '--database-url', `sqlite:${store}`, '--json');
    expect(JSON.parse(stdout)).toMatchObject({ backfill: 'completed', inserted: 0 });
  }, 30_000);

  it.skipIf(!/^ {2}report\b/m.test(USAGE))(
    'subagent-context report reads the migrated store',
    async () => {
      await cli('migrate', '--database-url', `sqlite:${store}`);
      const { stdout } = await cli('report', '--database-url', `sqlite:${store}`, '--json');
      expect(JSON.parse(stdout)).toBeTypeOf('object');
    },
    30_000,
  );

  it('ingest without the optional fauxqs says what to install (exit 1)', async () => {
    const file = join(dir, 'frames.jsonl');
    writeFileSync(file, `${JSON.stringify(frame())}\n`);
    const failed = await cli('ingest', file, '--database-url', `sqlite:${store}`).catch(
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(/install the optional dependency with `npm install fauxqs`/);
  }, 30_000);
});

describe('the producer installed from the tarball by a host (issue 25)', () => {
  let dir: string;
  let sqs: LocalSqs;
  beforeAll(async () => {
    dir = await project('host', documentedHostInstall());
    sqs = await startLocalSqs();
  }, 240_000);
  afterAll(async () => {
    await sqs?.stop();
  });

  it('docs/producers.md gives the install line of this version, and README gives the same line', () => {
    const args = documentedHostInstall();
    expect(args).toEqual(['install', `./subagent-context-${pkg.version}.tgz`, '--omit=optional']);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`npm ${args.join(' ')}`);
  });

  it('pulls in neither SQLite, PGlite nor fauxqs', () => {
    const installed = readdirSync(join(dir, 'node_modules'));
    for (const heavy of ['better-sqlite3', '@electric-sql', 'fauxqs', 'tsx']) expect(installed).not.toContain(heavy);
  });

  it('subagent-context/producer has types a TypeScript host compiles against', async () => {
    writeFileSync(
      join(dir, 'host.ts'),
      `import { createFrameProducer, type FrameProducer } from 'subagent-context/producer';\n` +
        `const producer: FrameProducer = createFrameProducer({ queueUrl: 'http://q' });\nvoid producer;\n`,
    );
    await run(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--skipLibCheck',
        '--types',
        'node',
        '--typeRoots',
        join(ROOT, 'node_modules/@types'),
        'host.ts',
      ],
      { cwd: dir },
    );
  }, 60_000);

  it('sends frames to the local queue', async () => {
    const client = sqs.client();
    const { QueueUrl } = await client.send(
      new (await import('@aws-sdk/client-sqs')).CreateQueueCommand({
        QueueName: 'frames.fifo',
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
      }),
    );
    // two sessions: a FIFO queue hands out one message of a group at a time
    const sent = [
      frame({ task_session_id: 'host-s1', tool_call_id: 'toolu_host_1' }),
      frame({ task_session_id: 'host-s2', tool_call_id: 'toolu_host_2' }),
    ];
    writeFileSync(
      join(dir, 'send.mjs'),
      `import { createFrameProducer } from 'subagent-context/producer';\n` +
        `const producer = createFrameProducer({ queueUrl: process.env.QUEUE_URL });\n` +
        `for (const f of ${JSON.stringify(sent)}) producer.record(f);\n` +
        `await producer.close();\nconsole.log(JSON.stringify(producer.stats));\n`,
    );
    const { stdout } = await run(process.execPath, ['send.mjs'], {
      cwd: dir,
      env: {
        ...process.env,
        QUEUE_URL: QueueUrl,
        AWS_ENDPOINT_URL_SQS: sqs.endpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        POWERTOOLS_METRICS_DISABLED: 'true',
      },
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toMatchObject({ recorded: 2, sent: 2 });
    const received = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
    expect(received.Messages?.map((m) => JSON.parse(m.Body!).tool_call_id).sort()).toEqual([
      'toolu_host_1',
      'toolu_host_2',
    ]);
  }, 60_000);
});
