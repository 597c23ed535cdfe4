import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../lib/db/open.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { createHostSchema } from '../../../local/host-schema.js';
import { nobodyCheckout } from '../../support/as-nobody.js';
import { runCliJson } from '../../support/cli-run.js';

/*
 * R4-5: a read-only command on a SQLite store leaves no file that was not there, none owned by
 * another user, works on a read-only snapshot, and says how it read the store. The faults are
 * real: the tests run as root, for whom chmod changes nothing, so the "other user" is a child
 * process of the real CLI run as nobody (setpriv), which the kernel refuses to let write.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
// issue 51: where nobody can run the CLI from (a copy when this checkout is under a private folder)
const NOBODY_CHECKOUT = nobodyCheckout(ROOT);
const AS_NOBODY = NOBODY_CHECKOUT.root ?? ROOT;
if (NOBODY_CHECKOUT.skip !== undefined)
  console.warn(`sqlite-readonly: the tests that run the CLI as user nobody are skipped: ${NOBODY_CHECKOUT.skip}`);
const asNobody = it.skipIf(NOBODY_CHECKOUT.skip !== undefined);
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'sqlite-readonly-'));
chmodSync(work, 0o755); // nobody must reach the stores below
afterAll(() => {
  chmodRecursive(work);
  rmSync(work, { recursive: true, force: true });
  if (AS_NOBODY !== ROOT) rmSync(AS_NOBODY, { recursive: true, force: true });
});

function chmodRecursive(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true }))
    if (entry.isDirectory()) chmodRecursive(join(dir, entry.name));
}

let stores = 0;
/** A migrated host store in a folder of its own, in WAL mode (`--create` makes it so), nobody has it open. */
async function walStore(options: { migrated?: boolean } = {}): Promise<{ dir: string; path: string; url: string }> {
  const dir = join(work, `s${++stores}`);
  mkdirSync(dir);
  chmodSync(dir, 0o755); // readable by nobody (the umask may be tighter)
  const path = join(dir, 'kandev.db');
  const db = openDatabase(`sqlite:${path}`, { create: true });
  await createHostSchema(db);
  if (options.migrated !== false) await runMigration(db);
  await db.query("INSERT INTO task_sessions (id, task_id) VALUES ('s1', 't1')");
  await db.close();
  expect(readFileSync(path)[18]).toBe(2); // WAL, as the header says
  return { dir, path, url: `sqlite:${path}` };
}

const files = (dir: string) => readdirSync(dir).sort();

/** The real CLI as user nobody (uid 65534), from this checkout's bin; `wrap` runs it under another program (time). */
function cliAsNobody(...args: string[]) {
  return cliAs({}, ...args);
}

function cliAs(options: { env?: NodeJS.ProcessEnv; wrap?: string[] }, ...args: string[]) {
  return run(
    'setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      ...(options.wrap ?? []),
      process.execPath,
      join(AS_NOBODY, 'bin/subagent-context.mjs'),
      ...args,
    ],
    {
      cwd: AS_NOBODY,
      env: {
        PATH: process.env.PATH,
        HOME: '/tmp',
        TSX_TSCONFIG_PATH: join(AS_NOBODY, 'tsconfig.json'),
        ...options.env,
      },
      maxBuffer: 64 << 20,
    },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}

describe('R4-5: a read-only command on a SQLite store leaves it as it was', () => {
  it('R4-5: a report on a WAL store nobody has open leaves no -wal or -shm, and says how it read it', async () => {
    const { dir, url } = await walStore();
    expect(files(dir)).toEqual(['kandev.db']);
    const report = await runCliJson(['report', '--database-url', url, '--json']);
    expect(report.code).toBe(0);
    expect(report.json).toBeTypeOf('object');
    expect(report.stderr).toBe(
      'note: the SQLite store was opened read-only; the -wal and -shm SQLite makes to read a WAL store are removed when it closes (kept only if the host opened the store meanwhile)\n',
    );
    expect(files(dir)).toEqual(['kandev.db']);
  });

  it("R4-5: while the host has the store open, a report reads the host's -wal (pages not yet in the file) and leaves both files to it", async () => {
    const { dir, path, url } = await walStore();
    const host = new BetterSqlite3(path);
    host.pragma('wal_autocheckpoint = 0'); // the new session stays in the -wal only
    host.exec("INSERT INTO task_sessions (id, task_id) VALUES ('s2', 't2')");
    try {
      expect(files(dir)).toEqual(['kandev.db', 'kandev.db-shm', 'kandev.db-wal']);
      const report = await runCliJson(['report', '--database-url', url, '--by', 'session', '--json']);
      expect(report.code).toBe(0);
      expect(report.stderr).toMatch(/^note: the SQLite store was opened read-only, through the -wal and -shm already/);
      expect(files(dir)).toEqual(['kandev.db', 'kandev.db-shm', 'kandev.db-wal']);
      // the host still writes its own store
      host.exec("INSERT INTO task_sessions (id, task_id) VALUES ('s3', 't3')");
      expect(host.prepare('SELECT count(*) AS n FROM task_sessions').get()).toEqual({ n: 3 });
    } finally {
      host.close();
    }
    expect(files(dir)).toEqual(['kandev.db']);
  });

  it("R4-5: another user's WAL store, in a folder that user may write: read from a copy, no file of this user is left beside it", async () => {
    const { dir, path, url } = await walStore();
    chownSync(path, 65534, 65534);
    chownSync(dir, 65534, 65534);
    const before = readFileSync(path);
    const report = await runCliJson(['report', '--database-url', url, '--json']);
    expect(report.code).toBe(0);
    expect(report.stderr).toMatch(
      /^note: the SQLite store was read from a copy of the file in a temporary folder under .*: a WAL store in a folder or file this user may not make files beside/,
    );
    expect(files(dir)).toEqual(['kandev.db']);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(statSync(path).uid).toBe(65534);
  });

  asNobody(
    'R4-5: a read-only WAL store in a read-only folder (a snapshot) is reported on by a user who may write neither',
    async () => {
      const { dir, path, url } = await walStore();
      chmodSync(path, 0o444);
      chmodSync(dir, 0o555);
      const report = await cliAsNobody('report', '--database-url', url, '--json');
      expect(report.stderr).toMatch(
        /^note: the SQLite store was read from a copy of the file in a temporary folder under .*: a WAL store in a folder or file this user may not make files beside/,
      );
      expect(report.code).toBe(0);
      expect(JSON.parse(report.stdout)).toBeTypeOf('object');
      expect(files(dir)).toEqual(['kandev.db']);
      // the same store read-only for real: SQLite itself refuses the user a plain read-only open
      const direct = await run(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          process.execPath,
          '-e',
          `try { new (require(${JSON.stringify(join(AS_NOBODY, 'node_modules/better-sqlite3'))}))(${JSON.stringify(path)}, { readonly: true }).prepare('SELECT 1 FROM task_sessions').get() } catch (e) { console.log(e.code) }`,
        ],
        { cwd: '/' },
      );
      expect(direct.stdout.trim()).toBe('SQLITE_READONLY_DIRECTORY');
    },
    60_000,
  );

  asNobody(
    'R4-5: a write the store refuses (migrate on a read-only snapshot) says what is read-only, never "server"',
    async () => {
      const { dir, path, url } = await walStore({ migrated: false }); // so migrate has something to write
      // a rollback-journal store, so SQLite opens it and the write itself is refused
      const host = new BetterSqlite3(path);
      host.pragma('journal_mode = DELETE');
      host.close();
      chmodSync(path, 0o444);
      chmodSync(dir, 0o555);
      const migrate = await cliAsNobody('migrate', '--database-url', url);
      expect(migrate).toMatchObject({ code: 1 });
      expect(migrate.stderr).toMatch(/read-only for this user/);
      expect(migrate.stderr).not.toMatch(/server/i);
      expect(migrate.stderr).not.toMatch(/\n\s+at /); // no stack
    },
    60_000,
  );

  asNobody(
    'issue 51: ingest into a store this user may not write fails at once, before any frame is sent (exit 1)',
    async () => {
      const { dir, path, url } = await walStore();
      const host = new BetterSqlite3(path);
      host.pragma('journal_mode = DELETE'); // so SQLite opens it and the write itself is refused
      host.close();
      chmodSync(path, 0o444);
      chmodSync(dir, 0o555);
      const frames = join(work, 'frames.jsonl');
      writeFileSync(frames, readFileSync(join(ROOT, 'examples/frames.jsonl')));
      chmodSync(frames, 0o644);
      const started = performance.now();
      const ingest = await cliAsNobody('ingest', frames, '--database-url', url, '--json');
      expect(ingest.code).toBe(1);
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(ingest.stderr).toMatch(
        // the file check (lib/db/sqlite.ts refuseUnwritable) finds it before the write probe would
        /^subagent-context: the SQLite store .* is read-only for this user \(EACCES\), and this command writes: SQLite could not write: [^\n]*$/m,
      );
      expect(ingest.stderr).not.toMatch(/retries_exhausted|ERROR/);
      // the hint is said once
      expect(ingest.stderr.split('SQLite could not write').length).toBe(2);
      expect(JSON.parse(ingest.stdout)).toMatchObject({ name: 'DatabaseError' });
    },
    60_000,
  );
});

/** A WAL store as a backup leaves it: the file and its -wal (holding session s2), no -shm. */
async function backupShape(): Promise<{ dir: string; path: string; url: string }> {
  const store = await walStore();
  const host = new BetterSqlite3(store.path);
  host.pragma('wal_autocheckpoint = 0');
  host.exec("INSERT INTO task_sessions (id, task_id) VALUES ('s2', 't2')");
  const db = readFileSync(store.path);
  const wal = readFileSync(`${store.path}-wal`);
  host.close(); // checkpoints and removes both: put the backup's two files back
  writeFileSync(store.path, db);
  writeFileSync(`${store.path}-wal`, wal);
  expect(files(store.dir)).toEqual(['kandev.db', 'kandev.db-wal']);
  return store;
}

/** The copies a read left in `tmp` (tsx keeps its own cache there too). */
const copiesIn = (tmp: string) => files(tmp).filter((name) => name.startsWith('subagent-context-'));

/** A folder for TMPDIR that nobody may write, so a copy left behind is seen. */
function tempFolder(): string {
  const dir = join(work, `tmp${++stores}`);
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  return dir;
}

describe('R4-5: a WAL store with a -wal but no -shm (a backup) is read in place of nothing', () => {
  it('R4-5: in a writable folder a report reads the -wal, leaves no -shm, and says it read a copy', async () => {
    const { dir, url } = await backupShape();
    const tmp = tempFolder();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const report = await runCliJson(['report', '--database-url', url, '--by', 'session', '--json']);
      expect(report.code).toBe(0);
      expect(report.stderr).toMatch(/^note: the SQLite store was read from a copy of the file and its -wal/);
      expect(report.stderr).not.toMatch(/already beside it/);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    expect(files(dir)).toEqual(['kandev.db', 'kandev.db-wal']);
    expect(copiesIn(tmp)).toEqual([]);
  });

  asNobody(
    'R4-5: in a read-only folder a user who may write nothing reads it (no SQLITE_CANTOPEN), the -wal included',
    async () => {
      const { dir, path, url } = await backupShape();
      chmodSync(path, 0o444);
      chmodSync(`${path}-wal`, 0o444);
      chmodSync(dir, 0o555);
      const tmp = tempFolder();
      const report = await cliAs({ env: { TMPDIR: tmp } }, 'report', '--database-url', url, '--json');
      expect(report.stderr).not.toMatch(/CANTOPEN/);
      expect(report.code).toBe(0);
      expect(files(dir)).toEqual(['kandev.db', 'kandev.db-wal']);
      expect(copiesIn(tmp)).toEqual([]);
    },
    60_000,
  );
});

describe('R4-5: a failing read leaves nothing either', () => {
  asNobody(
    'R4-5: a report that fails (a store never migrated) on a read-only snapshot leaves no copy and no file beside it',
    async () => {
      const { dir, path, url } = await walStore({ migrated: false });
      chmodSync(path, 0o444);
      chmodSync(dir, 0o555);
      const tmp = tempFolder();
      const report = await cliAs({ env: { TMPDIR: tmp } }, 'report', '--database-url', url, '--json');
      expect(report.code).not.toBe(0);
      expect(files(dir)).toEqual(['kandev.db']);
      expect(copiesIn(tmp)).toEqual([]);
    },
    60_000,
  );
});

describe('R4-12: a read-only WAL snapshot is read with memory bounded, whatever its size', () => {
  asNobody(
    'R4-12: a 2.5 GiB (sparse) WAL snapshot in a read-only folder is reported on at a peak RSS far below its size, its copy removed',
    async () => {
      const { dir, path, url } = await walStore();
      // past 2 GiB: a Buffer of the whole file is refused (ERR_FS_FILE_TOO_LARGE); SQLite reads the
      // pages the header counts and ignores the rest
      truncateSync(path, 2.5 * 2 ** 30);
      chmodSync(path, 0o444);
      chmodSync(dir, 0o555);
      const tmp = tempFolder();
      const report = await cliAs(
        { env: { TMPDIR: tmp }, wrap: ['/usr/bin/time', '-f', 'maxrss=%M'] },
        'report',
        '--database-url',
        url,
        '--json',
      );
      expect(report.stderr).not.toMatch(/ERR_FS_FILE_TOO_LARGE/);
      expect(report.code).toBe(0);
      expect(JSON.parse(report.stdout)).toBeTypeOf('object');
      const maxRssKiB = Number(/maxrss=(\d+)/.exec(report.stderr)?.[1]);
      expect(maxRssKiB).toBeLessThan(400 * 1024); // 400 MiB, a sixth of the file
      expect(files(dir)).toEqual(['kandev.db']);
      expect(copiesIn(tmp)).toEqual([]);
    },
    120_000,
  );
});

describe('R4-5: a command that writes leaves no file beside a store this user may not write', () => {
  /** A store nobody may read but not write, in a folder nobody may write (so SQLite could make files there). */
  async function foreignStore() {
    const store = await walStore();
    chmodSync(store.path, 0o644);
    chownSync(store.dir, 65534, 65534);
    return store;
  }

  asNobody(
    'R4-5: a failing health (the scheduled check writes its checkpoint) leaves no -wal or -shm, says read-only',
    async () => {
      const { dir, url } = await foreignStore();
      const health = await cliAsNobody('health', '--database-url', url);
      expect(health.code).toBe(1);
      expect(health.stderr).toMatch(/read-only for this user/);
      expect(files(dir)).toEqual(['kandev.db']);
      // the next report does not meet files it would blame on the host
      const report = await runCliJson(['report', '--database-url', url, '--json']);
      expect(report.stderr).not.toMatch(/already beside it/);
    },
    60_000,
  );

  asNobody(
    'R4-5: ingest as another user leaves no -wal or -shm, says read-only',
    async () => {
      const { dir, url } = await foreignStore();
      const frames = join(work, `frames${++stores}.jsonl`);
      writeFileSync(frames, '{}\n');
      chmodSync(frames, 0o644);
      const ingest = await cliAsNobody('ingest', frames, '--database-url', url);
      expect(ingest.code).toBe(1);
      expect(ingest.stderr).toMatch(/read-only for this user/);
      expect(files(dir)).toEqual(['kandev.db']);
    },
    60_000,
  );
});
