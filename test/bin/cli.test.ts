import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { openDatabase } from '../../lib/db/open.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { formatRfc3339, nowMicros } from '../../lib/time.js';
import { createHostSchema } from '../../local/host-schema.js';
import { at, seedMessage } from '../lib/health/seed.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { schemaErrors } from '../support/command-schema.js';
import { frame, seedSession } from '../support/frames.js';
import { badInstants, instantsIn } from '../support/instants.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real CLI in-process (test/support/cli-run.ts), without the production pause before a shortfall counts. */
const cli = (...argv: string[]) => runCliJson(argv, { HEALTH_CONFIRM_DELAY_SECONDS: '0', ...testProxyEnv() });

function framesFile(name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe.each(TARGETS)('subagent-context on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });
  const now = () => formatRfc3339(nowMicros());

  it('migrate creates the table, backfills, and reports it as JSON (AC-17, AC-22)', async () => {
    const run = await cli('migrate', '--database-url', t.url, '--json');
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({ backfill: 'completed', inserted: 0, matched: 0, backfillThrough: '' });
    expect((await cli('migrate', '--database-url', t.url, '--json')).json).toMatchObject({ backfill: 'skipped' });
  });

  it('R3-4: migrate on a store whose backfilled rows are gone says so (exit 3); --rerun-backfill inserts them again', async () => {
    await seedMessage(t.db, { toolCallId: 'c1', createdAt: at('2026-08-12T12:00:00Z') });
    expect((await cli('migrate', '--database-url', t.url, '--json')).json).toMatchObject({ inserted: 1 });
    await t.db.query('DELETE FROM task_session_subagents');
    const lost = await cli('migrate', '--database-url', t.url);
    expect(lost.code).toBe(EXIT.attention);
    expect(lost.stdout).toMatch(/1 subagent invocations before capture_since have no row.*--rerun-backfill/s);
    const rerun = await cli('migrate', '--rerun-backfill', '--database-url', t.url, '--json');
    expect(rerun.code).toBe(EXIT.ok);
    expect(rerun.json).toMatchObject({ backfill: 'rerun', inserted: 1, historyMissing: 0 });
  });

  it('migrate prints a human table by default', async () => {
    const run = await cli('migrate', '--database-url', t.url);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^backfill\s+completed$/m);
  });

  it('health exits 3 when capture is not activated (AC-28a)', async () => {
    const run = await cli('health', '--database-url', t.url, '--json');
    expect(run.code).toBe(EXIT.attention);
    expect(run.json).toMatchObject({ status: 'not_activated' });
  });

  it('health exits 3 while nothing was observed since activation, 0 once rows arrive', async () => {
    await cli('migrate', '--database-url', t.url);
    expect((await cli('health', '--database-url', t.url, '--json')).json).toMatchObject({ status: 'silent' });
    await seedSession(t.db, 's1', 't1');
    const file = framesFile(`ok-${name}.jsonl`, [JSON.stringify(frame({ observed_at: now() }))]);
    expect((await cli('ingest', file, '--database-url', t.url)).code).toBe(EXIT.ok);
    const healthy = await cli('health', '--database-url', t.url, '--grace-seconds', '0', '--json');
    expect(healthy.json).toMatchObject({ status: 'healthy', shortfall: 0 });
    expect(healthy.code).toBe(EXIT.ok);
  });

  it('health runs the scheduled window by default, --full audits since activation, --acknowledge-through accepts a shortfall', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedMessage(t.db, { toolCallId: 'lost', createdAt: nowMicros() });
    const scheduled = await cli('health', '--database-url', t.url, '--grace-seconds', '0', '--json');
    expect(scheduled.code).toBe(EXIT.attention);
    expect(scheduled.json).toMatchObject({
      status: 'shortfall',
      kind: 'scheduled',
      shortfall: 1,
      checkpoint: { moved: true },
    });

    const through = now();
    const ack = await cli('health', '--database-url', t.url, '--grace-seconds', '0', '--acknowledge-through', through);
    expect(ack.code).toBe(EXIT.ok);
    expect(ack.stdout).toMatch(/^checkpoint\s+.*→ .*\(acknowledged/m);
    expect((await cli('health', '--database-url', t.url, '--grace-seconds', '0', '--json')).json).toMatchObject({
      kind: 'scheduled',
      shortfall: 0,
    });

    const full = await cli('health', '--database-url', t.url, '--grace-seconds', '0', '--full');
    // issue 34: the audit still counts the acknowledged message, and nothing is open (exit 0)
    expect(full.code).toBe(EXIT.ok);
    expect(full.stdout).toMatch(/^kind\s+full audit since capture_since$/m);
    expect(full.stdout).toMatch(/^shortfall\s+1 \(acknowledged 1, open 0\)$/m);
  });

  it.each([
    [['--acknowledge-through', 'yesterday'], /RFC 3339/],
    [['--full', '--acknowledge-through', '2026-08-12T13:00:00Z'], /exclude each other/],
    [['--full', '--statement-timeout', '0'], /positive number of seconds.*0 would mean no limit/],
    [['--statement-timeout', 'soon'], /--statement-timeout needs a positive number/],
    // R2-5 (D8): beyond PostgreSQL's maximum statement_timeout (2147483647 ms) every connection would fail with 22023
    [['--statement-timeout', '3e6'], /--statement-timeout .* up to 2147483\.647 .*more than PostgreSQL's maximum/],
    [['--statement-timeout=-1'], /--statement-timeout needs a positive number/],
  ])('health refuses %j as a usage error', async (args, message) => {
    const run = await cli('health', '--database-url', t.url, ...args);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
  });

  it('ingest feeds a file through the handler, drops exact duplicates, parks invalid lines and exits 3 (AC-2)', async () => {
    await cli('migrate', '--database-url', t.url);
    await seedSession(t.db, 's1', 't1');
    await seedSession(t.db, 's2', 't2');
    const first = JSON.stringify(frame({ tool_call_id: 'c1', observed_at: now() }));
    const file = framesFile(`mixed-${name}.jsonl`, [
      first,
      JSON.stringify(frame({ task_session_id: 's2', task_id: 't2', tool_call_id: 'c2', observed_at: now() })),
      first,
      JSON.stringify(frame({ tool_call_id: '', observed_at: now() })),
      'not a frame',
    ]);
    const rejected = join(dir, `rejected-${name}.jsonl`);
    const run = await cli('ingest', file, '--database-url', t.url, '--rejected', rejected, '--json');
    expect(run.code).toBe(EXIT.attention);
    expect(run.json.frames).toBe(5);
    expect(schemaErrors('ingest.v1.schema.json', run.json)).toEqual([]); // issue 51
    expect(run.json.counts).toMatchObject({
      attempted: 3,
      persisted: 2,
      skippedNoIdentity: 1,
      invalid: 1,
      failed: 0,
    });
    expect(run.json.deadLetters).toEqual([
      { failure: 'invalid_frame', reason: expect.stringMatching(/not JSON/), count: 1, lines: [5] },
    ]);
    const parked = readFileSync(rejected, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(parked).toMatchObject([{ line: 5, failure: 'invalid_frame', body: 'not a frame' }]);
    const [rows] = await t.db.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM task_session_subagents');
    expect(Number(rows!.n)).toBe(2);
  });

  it.skipIf(name === 'sqlite')(
    'ingest exits 1 and names the connection problem when the database is unreachable',
    async () => {
      const file = framesFile(`down-${name}.jsonl`, [JSON.stringify(frame())]);
      t.proxy!.setAvailable(false);
      const run = await cli('ingest', file, '--database-url', t.url);
      t.proxy!.setAvailable(true);
      expect(run.code).toBe(EXIT.failure);
      expect(run.stderr).not.toMatch(/migrate/);
    },
  );

  it('issue 25: every --json document (migrate, ingest, health, health --full, report) gives its instants as RFC 3339 UTC strings', async () => {
    const docs: Record<string, unknown> = {};
    docs.migrate = (await cli('migrate', '--database-url', t.url, '--json')).json;
    await seedSession(t.db, 's1', 't1');
    const file = framesFile(`instants-${name}.jsonl`, [JSON.stringify(frame({ observed_at: now() }))]);
    docs.ingest = (await cli('ingest', file, '--database-url', t.url, '--json', '--quiet')).json;
    docs.health = (await cli('health', '--database-url', t.url, '--json')).json;
    docs.full = (await cli('health', '--full', '--database-url', t.url, '--json')).json;
    docs.report = (await cli('report', '--by', 'day', '--trees', '1', '--database-url', t.url, '--json')).json;
    for (const [command, doc] of Object.entries(docs)) expect(doc, command).toBeInstanceOf(Object);
    expect(badInstants(docs)).toEqual([]);
    expect(instantsIn(docs).length).toBeGreaterThan(10);
  });

  it('ingest refuses to run before migrate, exit 1 with what to do', async () => {
    const file = framesFile(`early-${name}.jsonl`, [JSON.stringify(frame())]);
    const run = await cli('ingest', file, '--database-url', t.url);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toMatch(/run `subagent-context migrate`/);
  });
});

describe('subagent-context usage', () => {
  it.each([
    [['bogus'], /unknown command "bogus"/],
    [[], /no command given/],
    [['ingest'], /ingest needs one argument, the frames file/],
    [['health', '--nope'], /^unknown option --nope$/m],
  ])('exits 2 for %j', async (argv, message) => {
    const run = await cli(...argv);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
  });

  it('exits 2 when no database is configured', async () => {
    const run = await cli('health');
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/--database-url/);
  });

  it('R3-3: a sqlite: path that does not exist is refused (exit 1, names --create) and no file appears', async () => {
    const path = join(dir, 'typo.db');
    const run = await cli('migrate', '--database-url', `sqlite:${path}`, '--json');
    expect(run.code).toBe(EXIT.failure);
    expect(run.json.error).toMatch(/typo\.db does not exist.*--create/);
    expect(existsSync(path)).toBe(false);
  });

  it('exits 1 and says why when migrate fails (no host tables), creating nothing in the new store (AC-20)', async () => {
    const path = join(dir, 'empty.db');
    const run = await cli('migrate', '--database-url', `sqlite:${path}`, '--create', '--json');
    expect(run.code).toBe(EXIT.failure);
    expect(run.json.error).toMatch(/no task_sessions or task_session_messages table: this is not the host's store/);
    // issue 34: the file --create made for the failed command is removed, not left as an empty store
    expect(existsSync(path)).toBe(false);
  });

  it('R3-3: health --full runs on a read-only SQLite store and leaves it unchanged', async () => {
    const path = join(dir, 'readonly.db');
    const store = openDatabase(`sqlite:${path}`, { create: true });
    await createHostSchema(store);
    await runMigration(store);
    await store.close();
    // As the host keeps it: its own journal mode (opening must not switch it to WAL).
    const host = new BetterSqlite3(path);
    host.pragma('journal_mode = DELETE');
    host.close();
    const bytes = readFileSync(path);
    chmodSync(path, 0o444);
    const run = await cli('health', '--full', '--database-url', `sqlite:${path}`, '--json');
    // R4-5: it says how it read the store
    expect(run.stderr).toBe(
      'note: the SQLite store was opened read-only (a rollback-journal store: SQLite creates nothing to read it)\n',
    );
    expect(run.json).toMatchObject({ kind: 'full', shortfall: 0 });
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('the installed bin runs the TypeScript CLI', async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['bin/subagent-context.mjs', '--help']);
    expect(stdout).toMatch(/^Usage: subagent-context <command>/);
    const failed = await run(process.execPath, ['bin/subagent-context.mjs', 'bogus']).catch(
      (err: { code: number }) => err,
    );
    expect(failed).toMatchObject({ code: EXIT.usage });
  }, 60_000);
});
