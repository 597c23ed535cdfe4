import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { describeFailure } from '../../lib/cli/failure.js';
import { hintClassOf } from '../../lib/db/errors.js';
import { openDatabase } from '../../lib/db/open.js';
import { HINT_CLASSES, hint } from '../../lib/hints.js';
import { createIngestHandler } from '../../lib/ingest/handler.js';
import { sqsViaSdk } from '../../lib/queue/sqs-via-sdk.js';
import { formatRfc3339, parseRfc3339 } from '../../lib/time.js';
import { seedMessage, seedRow } from '../lib/health/seed.js';
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
/** Which database a URL reaches, as "not the host's store" names it (issue 34): the file, or the database's name. */
const reached = (url: string) =>
  url.startsWith('sqlite:')
    ? `the SQLite store ${url.slice('sqlite:'.length)}`
    : `the database "${new URL(url).pathname.slice(1)}"`;
const NOT_HOST = (url: string) =>
  `subagent-context: ${reached(url)} has no task_sessions or task_session_messages table: this is not the host's store: point --database-url at the database the orchestrator writes task_sessions and task_session_messages to (a demo store: \`npm start -- --sqlite <path>\`)`;
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
      '--acknowledge-through needs an RFC 3339 instant with an offset or a date (UTC midnight), e.g. 2026-08-12T13:00:00Z or 2026-08-12 (got "yesterday")',
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

  it('migrate on a database without the host tables says so in the same words on every dialect, naming the database', async () => {
    await t.db.query('DROP TABLE task_session_messages');
    await t.db.query('DROP TABLE task_session_turns');
    await t.db.query('DROP TABLE task_sessions');
    const run = await cli('migrate', '--database-url', t.url);
    expect(run.first).toBe(NOT_HOST(t.url));
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
    // issue 34: the lag of frames observed on 2026-08-12 is in days, not 9,606,141,869 ms
    expect(run.stdout).toMatch(/^lag p50 \/ p90 \/ p99 \/ max\s+\d+ days \/ \d+ days \/ \d+ days \/ \d+ days$/m);
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

/*
 * Issue 34 (the operator's second hour) and issue 36's diagnostics: one row per item, the exact
 * first line a person reads and the exit code.
 */
describe('issue 34: the one flag parser (exit 2, a pointer to --help, never the whole help)', () => {
  const url = sqliteFile('flags.db');
  it.each<[string, string[], string]>([
    [
      'a misspelled flag gets the nearest one',
      ['report', '--databse-url', url],
      'unknown option --databse-url: did you mean --database-url?',
    ],
    ['an unknown flag with nothing near it', ['report', '--zzzzzzzz'], 'unknown option --zzzzzzzz'],
    [
      'a negative count is a value, not parseArgs\' "ambiguous"',
      ['report', '--database-url', url, '--by', 'task', '--limit', '-3'],
      '--limit needs a positive count of groups, a whole number of at least 1 (got "-3")',
    ],
    [
      'a negative grace is a value too',
      ['health', '--database-url', url, '--grace-seconds', '-1'],
      '--grace-seconds needs a non-negative number of seconds, e.g. --grace-seconds 900 (got "-1")',
    ],
    [
      'a flag followed by another flag needs a value',
      ['report', '--limit', '--json'],
      '--limit needs a number of groups (got the option --json instead)',
    ],
    [
      'issue 58 #19: a flag missing its value at the end says what kind of value it takes',
      ['report', '--html'],
      '--html needs a file path (where the page is written)',
    ],
    ['a value given to a switch', ['report', '--json=1'], '--json is a switch: it takes no value'],
    [
      'an instant that is neither RFC 3339 nor a date',
      ['report', '--database-url', url, '--since', 'yesterday'],
      '--since needs an RFC 3339 instant with an offset or a date (UTC midnight), e.g. 2026-08-12T13:00:00Z or 2026-08-12 (got "yesterday")',
    ],
    ["report --full: health's flag", ['report', '--full'], '--full does not apply to report (it is for health)'],
    [
      'report --create: a report never makes a store',
      ['report', '--create'],
      '--create does not apply to report: a report only reads an existing store (a demo store: `npm start -- --sqlite <path>`)',
    ],
    [
      'report --trees without --json or --html',
      ['report', '--trees', '5'],
      '--trees adds fan-out trees to report --json or --html; the table and CSV show none (add --json or --html <file>)',
    ],
    ["migrate --by: report's flag", ['migrate', '--by', 'day'], '--by does not apply to migrate (it is for report)'],
  ])('%s', async (_, argv, first) => {
    const run = await cli(...argv);
    expect(run.first).toBe(first);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('subagent-context --help lists every command and option.');
    expect(run.stderr).not.toContain('Usage:');
  });
});

describe('issue 34: SQLite words for SQLite (exit 1)', () => {
  it.each<[string, (d: string) => string[], (d: string) => string]>([
    [
      'report on a path that does not exist: no createdb, no --create',
      (d) => ['report', '--database-url', `sqlite:${join(d, 'nope.db')}`],
      (d) =>
        `subagent-context: the SQLite store ${join(d, 'nope.db')} does not exist: fix the path in --database-url (sqlite:<path>); this command only reads a store (a demo store: \`npm start -- --sqlite <path>\`)`,
    ],
    [
      'migrate on a path that does not exist offers --create',
      (d) => ['migrate', '--database-url', `sqlite:${join(d, 'nope.db')}`],
      (d) =>
        `subagent-context: the SQLite store ${join(d, 'nope.db')} does not exist: fix the path in --database-url (sqlite:<path>), or pass --create to make a new, empty store there`,
    ],
    [
      'a folder that does not exist, with or without --create',
      (d) => ['migrate', '--create', '--database-url', `sqlite:${join(d, 'nodir', 'x.db')}`],
      (d) =>
        `subagent-context: the folder ${join(d, 'nodir')} of the SQLite store ${join(d, 'nodir', 'x.db')} does not exist: create it (mkdir -p ${join(d, 'nodir')}) or fix the path in --database-url`,
    ],
    [
      'a file that is not a database: the file, never a server',
      (d) => {
        writeFileSync(
          join(d, 'garbage.db'),
          'this is not a SQLite database, it is text long enough to be read'.repeat(64),
        );
        return ['report', '--database-url', `sqlite:${join(d, 'garbage.db')}`];
      },
      () =>
        'subagent-context: file is not a database (SQLITE_NOTADB, SQLSTATE XX001): SQLite could not use the store; check the path in --database-url, that the file is a SQLite database, the disk (full? readable?) and the permissions of the file and its folder',
    ],
  ])('%s', async (_, argv, first) => {
    const run = await cli(...argv(dir));
    expect(run.first).toBe(first(dir));
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).not.toMatch(/server|createdb/);
  });

  it('migrate --create on a path that then fails leaves no file behind: the next run says "does not exist" again', async () => {
    const path = join(dir, 'created.db');
    const run = await cli('migrate', '--create', '--database-url', `sqlite:${path}`);
    expect(run.first).toMatch(/^subagent-context: the SQLite store \S+created\.db has no task_sessions/);
    expect(run.stderr).toContain(`note: removed ${path}, the new store --create made for this command`);
    expect(run.code).toBe(EXIT.failure);
    expect(existsSync(path)).toBe(false);
    const again = await cli('migrate', '--database-url', `sqlite:${path}`);
    expect(again.first).toBe(
      `subagent-context: the SQLite store ${path} does not exist: fix the path in --database-url (sqlite:<path>), or pass --create to make a new, empty store there`,
    );
  });
});

describe.each(TARGETS)('issue 34: messages on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });
  const lineOf = (text: string, label: string) => text.split('\n').find((l) => l.startsWith(`${label} `)) ?? '';

  it('not the host store names the database it reached', async () => {
    await t.db.query('DROP TABLE task_session_messages');
    const run = await cli('migrate', '--database-url', t.url);
    expect(run.first).toBe(
      `subagent-context: ${reached(t.url)} has no task_session_messages table: this is not the host's store: point --database-url at the database the orchestrator writes task_sessions and task_session_messages to (a demo store: \`npm start -- --sqlite <path>\`)`,
    );
    expect(run.code).toBe(EXIT.failure);
  });

  it('export before migrate says run migrate, as report, health and ingest do', async () => {
    const run = await cli('export', '--otlp', 'http://127.0.0.1:9/v1/traces', '--database-url', t.url);
    expect(run.first).toBe(
      'subagent-context: the store has no task_session_subagents table: this store was never migrated: run `subagent-context migrate` with the same --database-url first',
    );
    expect(run.code).toBe(EXIT.failure);
  });

  it('migrate prints six fraction digits, as report and health do, and its duration in human units', async () => {
    const run = await cli('migrate', '--database-url', t.url);
    expect(run.code).toBe(EXIT.ok);
    expect(lineOf(run.stdout, 'capture_since')).toMatch(/^capture_since\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(lineOf(run.stdout, 'duration')).toMatch(/^duration\s+\d+(\.\d)? (ms|s)$/);
  });

  it('health on a store younger than its grace names the grace and --grace-seconds (a zero-length window)', async () => {
    await cli('migrate', '--database-url', t.url);
    const first = await cli('health', '--database-url', t.url);
    const empty =
      /^window\s+(\S+) … \1 \(empty: nothing is older than the grace of 900 s \(15 min\) yet; --grace-seconds sets it\)$/;
    expect(lineOf(first.stdout, 'window')).toMatch(empty);
    const run = await cli('health', '--database-url', t.url);
    expect(lineOf(run.stdout, 'window')).toMatch(empty);
    const since = /^capture_since\s+(\S+)$/.exec(lineOf(run.stdout, 'capture_since'))?.[1];
    expect(lineOf(run.stdout, 'checkpoint')).toBe(
      `checkpoint     ${since} (not moved: the window is empty: the store is younger than the grace of 900 s (15 min) (--grace-seconds))`,
    );
    expect(run.first).toBe('status         silent (no row observed since activation: is the producer sending?)');
    expect(run.code).toBe(EXIT.attention);
  });

  it('issue 58 #19: health --full on a store younger than its grace says its window is empty, as the scheduled check does', async () => {
    await cli('migrate', '--database-url', t.url);
    const run = await cli('health', '--full', '--database-url', t.url);
    expect(lineOf(run.stdout, 'window')).toMatch(
      /^window\s+(\S+) … \1 \(empty: nothing is older than the grace of 900 s \(15 min\) yet; --grace-seconds sets it\)$/,
    );
  });

  it('health --full: the acknowledged shortfall apart from the open one, exit 0 when nothing is open', async () => {
    await cli('migrate', '--database-url', t.url);
    // capture_since has microseconds and Date.now() only milliseconds: a read in the same
    // millisecond as migrate's could fall before capture_since, so step past it first
    await new Promise((resolve) => setTimeout(resolve, 5));
    const now = BigInt(Date.now()) * 1000n; // after migrate: after capture_since
    await seedRow(t.db, { observedAt: now, toolCallId: 'kept' });
    await seedMessage(t.db, { createdAt: now, toolCallId: 'kept' });
    await seedMessage(t.db, { createdAt: now, toolCallId: 'lost' });
    const before = await cli('health', '--full', '--grace-seconds', '0', '--database-url', t.url);
    expect(lineOf(before.stdout, 'shortfall')).toMatch(/^shortfall\s+1 \(acknowledged 0, open 1\)$/);
    expect(before.code).toBe(EXIT.attention);
    const through = formatRfc3339(now + 1000n);
    const ack = await cli('health', '--grace-seconds', '0', '--acknowledge-through', through, '--database-url', t.url);
    expect(ack.code).toBe(EXIT.ok);
    const after = await cli('health', '--full', '--grace-seconds', '0', '--database-url', t.url);
    // stdout's first line: a SQLite read may put a note on how it read the store on stderr first (R4-5)
    expect(after.stdout.split('\n')[0]).toMatch(/^status\s+shortfall \(all of it acknowledged: nothing open\)$/);
    expect(lineOf(after.stdout, 'shortfall')).toMatch(/^shortfall\s+1 \(acknowledged 1, open 0\)$/);
    expect(after.code).toBe(EXIT.ok);
  }, 60_000);

  it('a checkpoint moved back is said as such, not with the forward arrow', async () => {
    await cli('migrate', '--database-url', t.url);
    const first = await cli('health', '--grace-seconds', '0', '--database-url', t.url);
    const moved = /→ (\S+)$/.exec(lineOf(first.stdout, 'checkpoint'))?.[1];
    const since = /^capture_since\s+(\S+)$/.exec(lineOf(first.stdout, 'capture_since'))?.[1];
    expect(moved).toBeDefined();
    // a late message between capture_since and the checkpoint (inside the overlap), with no row
    const late = (parseRfc3339(since!)! + parseRfc3339(moved!)!) / 2n;
    await seedMessage(t.db, { createdAt: late, toolCallId: 'late' });
    const run = await cli('health', '--grace-seconds', '0', '--database-url', t.url);
    expect(lineOf(run.stdout, 'checkpoint')).toBe(
      `checkpoint     ${formatRfc3339(late)} (moved back from ${moved}: a message before it has no row yet)`,
    );
    expect(run.code).toBe(EXIT.attention);
  }, 60_000);

  it.skipIf(name !== 'postgres')(
    'issue 36: a statement the server ends at its statement_timeout (57014) names --statement-timeout',
    async () => {
      const db = openDatabase(t.url, { wsProxy: t.proxy?.address, statementTimeoutMs: 50 });
      const err = await db.query('SELECT pg_sleep(2)').then(
        () => undefined,
        (e: unknown) => e,
      );
      await db.close();
      const { message, exitCode } = await describeFailure(err, { dialect: 'postgres' });
      expect(message).toBe(
        "canceling statement due to statement timeout (SQLSTATE 57014): a statement ran past the server's statement timeout (or was cancelled); raise --statement-timeout <seconds>, or narrow the command (report: --since/--until, --task)",
      );
      expect(message).not.toContain("server's log");
      expect(exitCode).toBe(EXIT.failure);
    },
  );

  it('--since takes a date as its UTC midnight; --by day is in day order by default', async () => {
    await cli('migrate', '--database-url', t.url);
    const run = await cli('report', '--since', '2026-08-01', '--by', 'day', '--json', '--database-url', t.url);
    expect(run.code).toBe(EXIT.ok);
    const doc = JSON.parse(run.stdout);
    expect(doc.filters.since).toBe('2026-08-01T00:00:00.000000Z');
    expect(doc.filters.sort).toBe('key');
  });
});

describe('issue 34: npm start says what it could not do', () => {
  it.each<[string, () => Promise<string[]>, (argv: string[]) => string, number]>([
    [
      'a misspelled flag, with a pointer to --help (exit 2)',
      async () => ['--sqlte', 'x.db'],
      () => 'unknown option --sqlte: did you mean --sqlite?',
      EXIT.usage,
    ],
    [
      '--sqlite into a folder that does not exist (exit 2)',
      async () => ['--sqlite', join(dir, 'nodir', 'x.db')],
      () =>
        `--sqlite ${join(dir, 'nodir', 'x.db')}: the folder ${join(dir, 'nodir')} does not exist; create it (mkdir -p ${join(dir, 'nodir')}) or choose a path in a folder that exists`,
      EXIT.usage,
    ],
    [
      'issue 58 #12: --sqlite given a sqlite: URL says it takes a path, never to mkdir a folder named sqlite: (exit 2)',
      async () => ['--sqlite', 'sqlite:/root/x/y.db'],
      () =>
        '--sqlite takes a file path, not a URL (got "sqlite:/root/x/y.db"): give --sqlite /root/x/y.db (or --database-url sqlite:/root/x/y.db)',
      EXIT.usage,
    ],
    [
      'a PostgreSQL it cannot reach, by host:port (exit 1)',
      async () => ['--database-url', `postgres://postgres@127.0.0.1:${await closedPort()}/x`],
      (argv) =>
        `local stack failed: cannot reach PostgreSQL at 127.0.0.1:${new URL(argv[1]!).port}: connection refused: start the server, or fix the host and port in --database-url (or DATABASE_URL)`,
      EXIT.failure,
    ],
  ])(
    '%s',
    async (_, argv, first, code) => {
      const args = await argv();
      const run = await npmStart(...args);
      expect(run.first).toBe(first(args));
      expect(run.code).toBe(code);
    },
    90_000,
  );
});

describe('issue 36: SQLite hints never name a server; 57014 names --statement-timeout', () => {
  it.each(HINT_CLASSES)('%s on SQLite', (cls) => {
    for (const caller of ['cli', 'function'] as const)
      expect(hint(cls, caller, 'sqlite')).not.toMatch(/server|createdb/);
  });
  it('57014 is the statement timeout, worded with its flag', () => {
    expect(hintClassOf('57014')).toBe('statement_timeout');
    expect(hint('statement_timeout', 'cli')).toMatch(/raise --statement-timeout <seconds>/);
  });
});
