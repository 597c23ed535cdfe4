import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFauxqs } from 'fauxqs';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { runLocalStack } from '../../local/stack.js';
import { runCliCaptured } from '../support/cli-run.js';

/*
 * Issue 34: the README's CLI examples on the demo store run as written (only /tmp/ becomes this
 * test's own folder), and `npm start -- --sqlite x.db` ends with a command that, copied, prints
 * the report of that store.
 */

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const dir = mkdtempSync(join(tmpdir(), 'subagent-context-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CLI = 'npm run --silent cli -- ';

/** Every `npm run --silent cli -- …` line of the README's sh blocks that reads the demo store. */
function readmeExamples(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => b.split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith(CLI) && line.includes('sqlite:/tmp/demo.db'));
}

/** One example line as argv and an optional `> file`, with /tmp/ this test's folder. */
function parse(line: string): { argv: string[]; redirect?: string } {
  const [command, redirect] = line
    .slice(CLI.length)
    .replaceAll('/tmp/', `${dir}/`)
    .split(/\s+>\s+/);
  return { argv: command!.split(/\s+/), redirect };
}

/**
 * Issue 58: the README's publish example runs against fauxqs' S3 as its settings say (the demo's
 * bucket made at start, as docs/publish.md#the-local-s3 makes it; the SDK's variables in this
 * process's environment, as an operator exports them; restored after).
 */
async function withLocalS3<T>(run: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  const server = await startFauxqs({ port: 0, logger: false, init: { buckets: ['subagent-context-demo'] } });
  const env = {
    AWS_ENDPOINT_URL_S3: server.address,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await run(env);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await server.stop();
  }
}

/** What the README says each command exits with on the demo store. */
const EXPECTED_EXIT: Record<string, number> = { ingest: EXIT.attention };

describe('issue 34: the README examples run as written', () => {
  const examples = readmeExamples();

  it('the README has examples on the demo store, the --json one through --silent with --database-url', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
    expect(examples.some((e) => e.includes('--json > /tmp/report.json'))).toBe(true);
    expect(readFileSync('README.md', 'utf8')).not.toMatch(/npm run cli -- /);
  });

  it('each one exits as the README says; --json > file writes a JSON document alone; publish reaches the local S3 with the settings the README gives (issue 58)', async () => {
    await runLocalStack({
      databaseUrl: `sqlite:${join(dir, 'demo.db')}`,
      messages: 600,
      live: 20,
      page: join(dir, 'page.html'),
      progress: { write: () => true },
    });
    await withLocalS3(async (s3) => {
      for (const line of examples) {
        const { argv, redirect } = parse(line);
        const run = await runCliCaptured(argv, { HEALTH_CONFIRM_DELAY_SECONDS: '0', ...s3 });
        expect({ line, code: run.code, stderr: run.stderr }).toMatchObject({
          line,
          code: EXPECTED_EXIT[argv[0]!] ?? EXIT.ok,
        });
        if (redirect !== undefined && argv.includes('--json')) {
          expect(JSON.parse(run.stdout)).toMatchObject({ version: 1 });
        }
        if (argv[0] === 'publish') expect(run.stdout).toContain('s3://subagent-context-demo/reports/latest/index.html');
      }
    });
    expect(examples.some((e) => e.startsWith(`${CLI}publish `))).toBe(true);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
  }, 240_000);
});

describe('issue 34: npm start -- --sqlite x.db ends with the command that prints its report', () => {
  it('the last line, copied into a shell, prints the report of that store', async () => {
    const store = join(dir, 'kept.db');
    const started = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/local-stack.ts',
        '--sqlite',
        store,
        '--messages',
        '300',
        '--live',
        '5',
        '--page',
        join(dir, 'kept.html'),
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const last = started.stdout.trimEnd().split('\n').at(-1)!;
    expect(last).toBe(`npm run --silent cli -- report --database-url sqlite:${store}`);
    const report = await promisify(execFile)('sh', ['-c', last], { maxBuffer: 64 * 1024 * 1024 });
    expect(report.stdout.split('\n')[0]).toMatch(/^== completeness \(generated \S+\) ==$/);
    expect(report.stdout).toMatch(/^subagents\s+\d+/m);
  }, 300_000);
});
