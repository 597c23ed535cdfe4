import { type ChildProcess, spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
