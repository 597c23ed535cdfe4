import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { createIngestHandler } from '../../lib/ingest/handler.js';
import { sqsViaSdk } from '../../lib/queue/sqs-via-sdk.js';
import { sqsEvent, sqsRecord } from '../lib/ingest/support.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { type FrameInput, frame, seedSession } from '../support/frames.js';
import { takeAll, useSqs } from '../support/sqs.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * Issue 25's error model, case by case through the CLI: the exact first line a person reads and
 * the exit code (usage 2, failure 1, attention 3). Each message names the flag, file, table or
 * endpoint and says what to run; none names a function, a queue, or a raw errno.
 */

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const dir = mkdtempSync(join(tmpdir(), 'subagent-context-messages-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real CLI in-process (test/support/cli-run.ts), with the first line a person reads. */
async function cli(...argv: string[]): Promise<{ code: number; first: string; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCliCaptured(argv, { HEALTH_CONFIRM_DELAY_SECONDS: '0', ...testProxyEnv() });
  const first = (stderr || stdout).split('\n')[0] ?? '';
  return { code, first, stdout, stderr };
}

const sqliteFile = (name: string) => `sqlite:${join(dir, name)}`;
const NOT_HOST =
  "subagent-context: the database has no task_sessions or task_session_messages table: this is not the host's store: point --database-url at the database the orchestrator writes task_sessions and task_session_messages to (a demo store: `npm start -- --sqlite <path>`)";
const ALIEN_WORDS =
  /frames stay on the queue|invoke|migrate function|ENOENT|EISDIR|argument\(s\)|HEALTH_GRACE_SECONDS|DATABASE_URL must/;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('issue 25: usage errors name the flag or argument (exit 2)', () => {
  it.each<[string, string[], string]>([
    [
      'a URL of another database blamed on --database-url, not DATABASE_URL',
      ['migrate', '--database-url', 'mysql://root@localhost/db'],
      '--database-url must start with postgres://, postgresql:// or sqlite: (got "mysql://…"); see README "Configuration"',
    ],
    [
      'a grace period that is not a number blamed on --grace-seconds, not HEALTH_GRACE_SECONDS',
      ['health', '--database-url', sqliteFile('g.db'), '--grace-seconds', 'abc'],
      '--grace-seconds needs a non-negative number of seconds, e.g. --grace-seconds 900 (got "abc")',
    ],
    [
      'report blames --grace-seconds too, not HEALTH_GRACE_SECONDS',
      ['report', '--database-url', sqliteFile('g.db'), '--grace-seconds', 'abc'],
      '--grace-seconds needs a non-negative number of seconds, e.g. --grace-seconds 900 (got "abc")',
    ],
    [
      'ingest without its file says which argument, in words',
      ['ingest', '--database-url', sqliteFile('i.db')],
      'ingest needs one argument, the frames file: subagent-context ingest <frames.jsonl> --database-url <url>',
    ],
    [
      'ingest with two files says how many it got',
      ['ingest', 'a.jsonl', 'b.jsonl', '--database-url', sqliteFile('i.db')],
      'ingest needs one argument, the frames file: subagent-context ingest <frames.jsonl> --database-url <url> (got 2)',
    ],
    ['an unknown command', ['bogus'], 'unknown command "bogus"'],
    [
      'an instant without an offset',
      ['health', '--database-url', sqliteFile('h.db'), '--acknowledge-through', 'yesterday'],
      '--acknowledge-through needs an RFC 3339 instant with an offset, e.g. 2026-08-12T13:00:00Z (got "yesterday")',
    ],
    [
      'no database at all',
      ['health'],
      'no database: pass --database-url postgres://… or sqlite:<path>, or set DATABASE_URL',
    ],
  ])('%s', async (_, argv, first) => {
    const run = await cli(...argv);
    expect(run.first).toBe(first);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).not.toMatch(ALIEN_WORDS);
  });

  it('a refused port names host:port and "connection refused" (exit 1)', async () => {
    const port = await closedPort();
    const run = await cli('migrate', '--database-url', `postgres://postgres@127.0.0.1:${port}/test`);
    expect(run.first).toBe(
      `subagent-context: cannot reach PostgreSQL at 127.0.0.1:${port}: connection refused: start the server, or fix the host and port in --database-url (or DATABASE_URL)`,
    );
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).not.toMatch(ALIEN_WORDS);
  }, 30_000);
});

describe.each(TARGETS)('issue 25: messages on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });
  const count = async () =>
    Number((await t.db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM task_session_subagents'))[0]!.n);

  it('migrate on a database without the host tables says so in the same words on every dialect', async () => {
    await t.db.query('DROP TABLE task_session_messages');
    await t.db.query('DROP TABLE task_session_turns');
    await t.db.query('DROP TABLE task_sessions');
    const run = await cli('migrate', '--database-url', t.url);
    expect(run.first).toBe(NOT_HOST);
    expect(run.code).toBe(EXIT.failure);
  });

  it('health on a never-migrated store says to run migrate (exit 3)', async () => {
    const run = await cli('health', '--database-url', t.url);
    expect(run.first).toBe('status         not_activated');
    expect(run.stdout).toMatch(
      /^next: this store was never migrated: run `subagent-context migrate` with the same --database-url first$/m,
    );
    expect(run.code).toBe(EXIT.attention);
  });

  it('health on a store without kandev_meta says to run migrate (exit 3)', async () => {
    await t.db.query('DROP TABLE kandev_meta');
    const run = await cli('health', '--database-url', t.url);
    expect(run.first).toBe(
      'subagent-context: not_activated: the store has no kandev_meta table: this store was never migrated: run `subagent-context migrate` with the same --database-url first',
    );
    expect(run.code).toBe(EXIT.attention);
  });

  it('ingest before migrate names the missing table and the command, the hint once (exit 1)', async () => {
    const file = join(dir, `early-${name}.jsonl`);
    writeFileSync(file, `${JSON.stringify(frame())}\n`);
    const run = await cli('ingest', file, '--database-url', t.url);
    expect(run.first).toBe(
      'subagent-context: the store has no task_session_subagents table: this store was never migrated: run `subagent-context migrate` with the same --database-url first',
    );
    expect(run.stderr.match(/subagent-context migrate/g)).toHaveLength(1);
    expect(run.code).toBe(EXIT.failure);
  });

  it.each<[string, (d: string) => string, (path: string) => string]>([
    ['a missing frames file', (d) => join(d, 'nope.jsonl'), (p) => `the frames file ${p} cannot be read: no such file`],
    [
      'a directory given as the frames file',
      (d) => {
        mkdirSync(join(d, 'adir'), { recursive: true });
        return join(d, 'adir');
      },
      (p) => `the frames file ${p} cannot be read: it is a directory, not a file`,
    ],
  ])('ingest names %s, no raw errno (exit 2)', async (_, path, first) => {
    await cli('migrate', '--database-url', t.url);
    const file = path(dir);
    const run = await cli('ingest', file, '--database-url', t.url);
    expect(run.first).toBe(first(file));
    expect(run.code).toBe(EXIT.usage);
  });

  it('an unwritable --rejected path fails before any frame is written (exit 2)', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedSession(t.db, 's1', 't1');
    const file = join(dir, `rejected-${name}.jsonl`);
    writeFileSync(file, `${JSON.stringify(frame())}\n`);
    const run = await cli('ingest', file, '--database-url', t.url, '--rejected', '/no/such/dir/x.jsonl');
    expect(run.first).toBe(
      '--rejected /no/such/dir/x.jsonl cannot be written: the directory /no/such/dir does not exist; create it or choose another path',
    );
    expect(run.code).toBe(EXIT.usage);
    expect(await count()).toBe(0);
  });

  it.each(['2030-01-01T00:00:00Z', '2099-01-01T00:00:00Z'])(
    '--acknowledge-through %s, later than now − grace, says what was acknowledged instead (exit 0)',
    async (instant) => {
      await cli('migrate', '--database-url', t.url);
      const run = await cli('health', '--database-url', t.url, '--acknowledge-through', instant);
      expect(run.stderr.split('\n')[0]).toMatch(
        new RegExp(
          `^note: --acknowledge-through ${instant.replace('Z', '.000000Z')} is later than now − grace: acknowledged through \\S+Z instead`,
        ),
      );
      expect(run.code).toBe(EXIT.ok);
    },
  );

  it('--acknowledge-through before capture_since names the typed instant and moves nothing (exit 2)', async () => {
    await cli('migrate', '--database-url', t.url);
    const run = await cli('health', '--database-url', t.url, '--acknowledge-through', '0001-01-01T00:00:00Z');
    expect(run.first).toMatch(
      /^--acknowledge-through 0001-01-01T00:00:00Z: nothing to acknowledge: 0001-01-01T00:00:00\.000000Z is at or before the window's start \S+ \(capture_since \S+\); the checkpoint was not moved$/,
    );
    expect(run.code).toBe(EXIT.usage);
  });
});

/** Levels of the extra field below: far deeper than any recursion (JSON.stringify gives up near 4,000). */
const DEPTH = 30_000;

/** A frame with an extra field nested DEPTH levels deep, which the frame schema ignores: ~180 KB. */
function deepFrame(overrides: FrameInput): string {
  const flat = JSON.stringify(frame(overrides));
  return `${flat.slice(0, -1)},"extra":${'{"a":'.repeat(DEPTH)}0${'}'.repeat(DEPTH)}}`;
}

describe.each(TARGETS)('issue 25: ingest diagnostics on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  const q = useSqs();
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });

  it('examples/frames.jsonl (README): stored, skipped and parked frames, each explained, the parked one by its line', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedSession(t.db, 'g1-ses-00000000', 'g1-task-00000000');
    const rejected = join(dir, `example-${name}.jsonl`);
    const run = await cli('ingest', 'examples/frames.jsonl', '--database-url', t.url, '--rejected', rejected);
    expect(run.code).toBe(EXIT.attention);
    expect(run.stdout).toMatch(/^frames read\s+5$|^frames read: 5$/m);
    expect(run.stdout).toMatch(/^skipped_no_identity\s+1 \(no session, task or tool call id/m);
    expect(run.stdout).toMatch(/^count\s+failure\s+lines\s+reason$/m);
    expect(run.stdout).toMatch(/^\s+1\s+invalid_frame\s+5\s+body is not JSON/m);
    expect(JSON.parse(readFileSync(rejected, 'utf8').trim())).toMatchObject({ line: 5, failure: 'invalid_frame' });
  });

  it('a BOM at the start of the file is not part of the first frame', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedSession(t.db, 's1', 't1');
    const file = join(dir, `bom-${name}.jsonl`);
    writeFileSync(file, `\uFEFF${JSON.stringify(frame())}\n`);
    const run = await cli('ingest', file, '--database-url', t.url);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^persisted\s+1$/m);
  });

  it('a line over 256 KiB is reported as that line; the other frames are still stored (exit 3)', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedSession(t.db, 's1', 't1');
    const big = JSON.stringify(frame({ tool_call_id: 'big', subagent_task: { description: 'x'.repeat(300 * 1024) } }));
    const file = join(dir, `big-${name}.jsonl`);
    writeFileSync(file, `${JSON.stringify(frame())}\n${big}\n`);
    const run = await cli('ingest', file, '--database-url', t.url);
    expect(run.code).toBe(EXIT.attention);
    expect(run.stdout).toMatch(/^persisted\s+1$/m);
    expect(run.stdout).toMatch(/^\s+1\s+too_large\s+2\s+301 KiB, over the 256 KiB an SQS message may hold/m);
  });

  it('a ~180 KB frame nested 30,000 levels deep is stored, and an invalid one parked, as the ingest handler does (exit 3)', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedSession(t.db, 's1', 't1');
    const bodies = [
      deepFrame({ tool_call_id: 'deep' }),
      deepFrame({ tool_call_id: 'deep-invalid', observed_at: 'yesterday' }),
    ];
    expect(bodies[0]!.length).toBeGreaterThan(175_000);
    const rows = () =>
      t.db.query(
        'SELECT task_session_id, tool_call_id, agent_execution_id, subagent_type, observed_at, settled_at, source FROM task_session_subagents ORDER BY tool_call_id',
      );
    // the Lambda's handler on the same bodies, parking on a real (emulated) dead-letter queue
    const handler = createIngestHandler({ db: () => t.db, sqs: sqsViaSdk(q.sqs), dlqUrl: q.dlqUrl });
    const response = await handler(sqsEvent(bodies.map((body) => sqsRecord(body, 's1'))));
    expect(response.batchItemFailures).toEqual([]);
    const handlerRows = await rows();
    const handlerParked = (await takeAll(q.sqs, q.dlqUrl)).map((m) => ({
      failure: m.MessageAttributes?.failure?.StringValue,
      reason: m.MessageAttributes?.reason?.StringValue,
    }));
    expect(handlerRows).toMatchObject([{ tool_call_id: 'deep' }]);
    expect(handlerParked).toMatchObject([{ failure: 'invalid_frame' }]);
    await t.db.query('DELETE FROM task_session_subagents');

    const file = join(dir, `deep-${name}.jsonl`);
    const rejected = join(dir, `deep-rejected-${name}.jsonl`);
    writeFileSync(file, `${bodies.join('\n')}\n`);
    const run = await cli('ingest', file, '--database-url', t.url, '--rejected', rejected, '--quiet');
    expect(run.first).toBe('frames read: 2');
    expect(run.code).toBe(EXIT.attention);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^persisted\s+1$/m);
    expect(await rows()).toEqual(handlerRows);
    const parked = readFileSync(rejected, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(parked.map(({ line, failure, reason }) => ({ line, failure, reason }))).toEqual(
      handlerParked.map((letter) => ({ line: 2, ...letter })),
    );
  }, 60_000);
});

/** `npm start` (bin/local-stack.ts) as npm runs it, through tsx: its own flags, its own usage errors. */
async function npmStart(...argv: string[]): Promise<{ code: number; first: string }> {
  const done = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/local-stack.ts', ...argv]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  return { code: done.code, first: (done.stderr || done.stdout).split('\n')[0] ?? '' };
}

describe('issue 25: npm start names its flag and what to do instead (exit 2), before it starts anything', () => {
  const existing = join(dir, 'existing.db');
  it.each<[string, string[], string]>([
    [
      '--messages 0, in words, not an internal function name',
      ['--messages', '0'],
      '--messages must be an integer of at least 1 (got 0): the live stream attaches its new invocations to the turns of the generated host store, so it needs one',
    ],
    ['--live that is not a number', ['--live', 'many'], '--live must be a non-negative integer (got many)'],
    [
      '--sqlite on an existing file: a new path, or the command that reads it (not --database-url)',
      ['--sqlite', existing],
      `--sqlite ${existing} already exists: the demo creates a new host store there, so pass a path that does not exist yet (or delete this file); to read the store it made, run \`npm run --silent cli -- health --database-url sqlite:${existing}\``,
    ],
  ])(
    '%s',
    async (_, argv, first) => {
      writeFileSync(existing, 'not empty');
      const run = await npmStart(...argv);
      expect(run.first).toBe(first);
      expect(run.code).toBe(EXIT.usage);
    },
    60_000,
  );

  it('npm run --silent cli -- … --json: stdout holds the JSON document alone, no npm banner (exit 1 here)', async () => {
    const nope = join(dir, 'nope.db');
    const failed = await promisify(execFile)('npm', [
      'run',
      '--silent',
      'cli',
      '--',
      'migrate',
      '--database-url',
      `sqlite:${nope}`,
      '--json',
    ]).catch((err: { code: number; stdout: string }) => err);
    expect(failed).toMatchObject({ code: EXIT.failure });
    expect(JSON.parse((failed as { stdout: string }).stdout)).toMatchObject({
      error: expect.stringContaining(`${nope} does not exist`),
    });
  }, 60_000);
});
