import { type ChildProcess, spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../lib/db/open.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { createHostSchema } from '../../local/host-schema.js';
import { insertGeneratedTurn } from '../support/subagent-rows.js';

/*
 * Real signals to the real CLI, as a supervisor, a closed terminal or a terminal's Ctrl-C sends
 * them (issue 57 #9, #11; issue 58 #9–#11): every wait bounded, every child ended.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'subagent-context-signals-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `node args` (cwd: the checkout) with `env`; `ended` resolves when it exits, or rejects after `boundMs`. */
function start(args: string[], env: NodeJS.ProcessEnv, boundMs: number, detached = false) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, detached });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const ended = new Promise<Ended>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ended within ${boundMs} ms: ${stderr}`));
    }, boundMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, ended, output: () => ({ stdout, stderr }) };
}

/** Polls `check` every 10 ms until it holds, at most `boundMs`. */
async function until(check: () => boolean, boundMs: number, what: string): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('R4-5 / issue 57 #9: SIGTERM or SIGHUP while a store is read from its private copy', () => {
  const store = join(dir, 'other-users.db');
  beforeAll(async () => {
    const db = openDatabase(`sqlite:${store}`, { create: true });
    await createHostSchema(db);
    await runMigration(db);
    await insertGeneratedTurn(db, 30_000, 'wide');
    await db.close();
    // another user's WAL store: this user may not make -wal/-shm beside it, so it is read from a copy
    chownSync(store, 65534, 65534);
  }, 120_000);

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'R4-5 / issue 57 #9: %s during report removes the copy from TMPDIR and ends the CLI by that signal',
    async (signal) => {
      const tmp = join(dir, `tmp-${signal}`);
      mkdirSync(tmp, { mode: 0o700 });
      const copies = () => readdirSync(tmp).filter((f) => f.startsWith('subagent-context-read-'));
      const run = start(
        [
          join(ROOT, 'bin/subagent-context.mjs'),
          'report',
          '--database-url',
          `sqlite:${store}`,
          '--json',
          '--trees',
          '50',
        ],
        { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmp },
        60_000,
      );
      await until(() => copies().length > 0 || run.child.exitCode !== null, 30_000, 'the copy');
      expect(
        run.child.exitCode,
        `the report was still running when the signal was sent: ${run.output().stderr}`,
      ).toBeNull();
      run.child.kill(signal);
      const ended = await run.ended;
      expect(ended.signal).toBe(signal);
      expect(copies()).toEqual([]);
    },
    90_000,
  );

  it('R4-5 / issue 57 (owed from round 2): a copy a SIGKILLed command left is removed at the next copy; a live process’s is kept', async () => {
    const tmp = join(dir, 'tmp-stale');
    mkdirSync(tmp, { mode: 0o700 });
    const gone = start(['-e', ''], { PATH: process.env.PATH }, 10_000);
    const deadPid = gone.child.pid!;
    await gone.ended;
    const stale = join(tmp, `subagent-context-read-${deadPid}-AbC123`);
    const live = join(tmp, `subagent-context-read-${process.pid}-XyZ789`);
    for (const folder of [stale, live]) {
      mkdirSync(folder);
      writeFileSync(join(folder, 'store.db'), 'a copy');
    }
    const run = start(
      [join(ROOT, 'bin/subagent-context.mjs'), 'report', '--database-url', `sqlite:${store}`, '--json'],
      { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmp },
      60_000,
    );
    const ended = await run.ended;
    expect(ended.code, ended.stderr).toBe(0);
    expect(readdirSync(tmp).filter((f) => f.startsWith('subagent-context-read-'))).toEqual([
      `subagent-context-read-${process.pid}-XyZ789`,
    ]);
  }, 90_000);
});

describe('issue 57 #11, issue 58 #11: Ctrl-C during report on SQLite', () => {
  const folder = join(dir, 'own');
  const store = join(folder, 'own.db');
  beforeAll(async () => {
    mkdirSync(folder);
    const db = openDatabase(`sqlite:${store}`, { create: true });
    await createHostSchema(db);
    await runMigration(db);
    await insertGeneratedTurn(db, 30_000, 'wide');
    await db.close();
  }, 120_000);

  it('issue 57 #11, issue 58 #11: SIGINT while report reads on SQLite is not swallowed: exit 130 and an "interrupted" line, no -wal/-shm left', async () => {
    const run = start(
      [
        join(ROOT, 'bin/subagent-context.mjs'),
        'report',
        '--database-url',
        `sqlite:${store}`,
        '--json',
        '--trees',
        '50',
      ],
      { PATH: process.env.PATH, HOME: process.env.HOME },
      60_000,
    );
    // reading: SQLite made its -shm beside the store (removed when it closes)
    await until(
      () => storeFiles(folder, 'own.db').includes('own.db-shm') || run.child.exitCode !== null,
      30_000,
      'the read',
    );
    expect(run.child.exitCode, run.output().stderr).toBeNull();
    run.child.kill('SIGINT');
    const ended = await run.ended;
    expect(ended.code, ended.stderr).toBe(130);
    // its statements are synchronous: it stops before its result, or says it ran to its end
    expect(ended.stderr).toMatch(
      /\nsubagent-context: interrupted: report (?:stopped before its result; it wrote nothing; run the same command again|ran to its end \(it wrote nothing; the result above is complete\); nothing is left to run)\n$/,
    );
    expect(storeFiles(folder, 'own.db')).toEqual(['own.db']);
  }, 90_000);
});

/** `npm start -- …` as a person starts it: npm, then tsx, then node, in a process group of its own. */
function npmStart(args: string[], boundMs: number, command = ['npm', 'start', '--']) {
  const npm = spawn(command[0]!, [...command.slice(1), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    detached: true,
  });
  children.add(npm);
  let stdout = '';
  let stderr = '';
  npm.stdout.on('data', (d) => (stdout += d));
  npm.stderr.on('data', (d) => (stderr += d));
  const ended = new Promise<Ended>((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-npm.pid!, 'SIGKILL');
      reject(new Error(`npm start not ended within ${boundMs} ms: ${stderr.slice(-2000)}`));
    }, boundMs);
    npm.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  /** Ctrl-C as a terminal sends it: SIGINT to every process of the foreground group */
  const ctrlC = () => process.kill(-npm.pid!, 'SIGINT');
  return { npm, ended, ctrlC, output: () => ({ stdout, stderr }) };
}

const storeFiles = (folder: string, name: string) => readdirSync(folder).filter((f) => f.startsWith(name));

describe('issue 58 #10: Ctrl-C from a terminal during `npm start -- --sqlite F`', () => {
  it('issue 58 #10: SIGINT to the process group of npm start (npm, tsx, node) removes the partial store and its -wal/-shm promptly and says so; the path is free for a rerun', async () => {
    const folder = join(dir, 'group');
    mkdirSync(folder);
    const store = join(folder, 'big.db');
    const run = npmStart(['--sqlite', store, '--messages', '400000'], 120_000);
    // well into the store's generation: the file and its -wal are being written
    await until(
      () => storeFiles(folder, 'big.db').length > 1 && statSync(store).size > 1_000_000,
      90_000,
      'the partial store',
    );
    const sent = Date.now();
    run.ctrlC();
    const ended = await run.ended;
    const tookMs = Date.now() - sent;
    expect(ended.stderr).toContain(`its partial store ${store} was removed`);
    expect(storeFiles(folder, 'big.db')).toEqual([]);
    expect(tookMs).toBeLessThan(10_000);
  }, 150_000);
});

describe('issue 58 #9: `npm start -- --sqlite F --serve`', () => {
  it('issue 58 #9: prints the summary and the local S3 settings before serving; Ctrl-C keeps the finished store and exits 0', async () => {
    const folder = join(dir, 'serve');
    mkdirSync(folder);
    const store = join(folder, 'demo.db');
    // the program npm start runs (package.json: tsx bin/local-stack.ts), in a group of its own: npm
    // itself dies by the terminal's SIGINT whatever its child does, so the exit status is the program's
    const run = npmStart(['--sqlite', store, '--serve', '--messages', '200', '--live', '10'], 240_000, [
      process.execPath,
      '--import',
      'tsx',
      'bin/local-stack.ts',
    ]);
    await until(() => run.output().stderr.includes('the local S3 answers until Ctrl-C'), 200_000, 'serving');
    const { stdout, stderr } = run.output();
    expect(stdout).toContain('== database ==');
    expect(stderr).toMatch(/AWS_ENDPOINT_URL_S3=http:\/\/127\.0\.0\.1:\d+ AWS_REGION=us-east-1 /);
    expect(stderr).toContain('publish --to s3://subagent-context-demo/reports');
    run.ctrlC();
    const ended = await run.ended;
    expect(ended.code, ended.stderr.slice(-2000)).toBe(0);
    expect(ended.stderr).not.toContain('was removed');
    expect(statSync(store).size).toBeGreaterThan(0);
  }, 300_000);
});
