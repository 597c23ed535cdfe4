import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typedFrom, userPath } from '../../lib/cli/user-path.js';
import { openDatabase } from '../../lib/db/open.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { createHostSchema } from '../../local/host-schema.js';
import { runCliCaptured } from '../support/cli-run.js';

/*
 * Issue 58 #16: `npm run cli` runs the CLI from the package root, so a relative path the person
 * typed is resolved from where they typed it (npm's INIT_CWD), for every path the CLI takes; a
 * store that does not exist is named by its absolute path and where a relative one was resolved from.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'typed-from-'));
// inside the checkout (test-output/ is ignored), so a path relative to a folder in it means another
// file from the package root (outside it, `..` chains can both end at / and name the same file)
mkdirSync(join(ROOT, 'test-output'), { recursive: true });
const inside = mkdtempSync(join(ROOT, 'test-output', 'typed-from-'));
const store = join(work, 'stores', 'demo.db');
const insideStore = join(inside, 'stores', 'demo.db');
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(inside, { recursive: true, force: true });
});

beforeAll(async () => {
  for (const path of [store, insideStore]) {
    mkdirSync(dirname(path));
    const db = openDatabase(`sqlite:${path}`, { create: true });
    await createHostSchema(db);
    await runMigration(db);
    await db.close();
  }
}, 60_000);

/** npm's environment for `npm run cli` typed in `from` (what npm sets for this package's script). */
const npmEnv = (from: string): NodeJS.ProcessEnv => ({
  INIT_CWD: from,
  npm_lifecycle_event: 'cli',
  npm_package_name: 'subagent-context',
});

describe('issue 58 #16: paths typed through npm run cli', () => {
  it("issue 58 #16: a relative path is resolved from INIT_CWD only for this package's own cli script, typed elsewhere than the package root", () => {
    const elsewhere = join(work, 'a');
    expect(typedFrom(npmEnv(elsewhere), ROOT)).toBe(elsewhere);
    expect(userPath('x/y.html', npmEnv(elsewhere))).toBe(join(elsewhere, 'x/y.html'));
    expect(userPath('/abs/y.html', npmEnv(elsewhere))).toBe('/abs/y.html');
    // typed at the package root; another package's script (its paths are its root's); no npm at all
    expect(typedFrom(npmEnv(ROOT), ROOT)).toBeUndefined();
    expect(typedFrom({ ...npmEnv(elsewhere), npm_package_name: 'their-app' }, ROOT)).toBeUndefined();
    expect(typedFrom({ ...npmEnv(elsewhere), npm_lifecycle_event: 'report' }, ROOT)).toBeUndefined();
    expect(typedFrom({}, ROOT)).toBeUndefined();
    expect(userPath('x/y.html', {})).toBe('x/y.html');
  });

  it('issue 58 #16: a store that does not exist is named by its absolute path, with where the relative path was resolved from', async () => {
    const from = join(work, 'docs');
    // `../../` from it is the temporary folder itself: a name no other program's store has there
    const missing = `../../${basename(work)}-missing.db`;
    const typed = await runCliCaptured(['report', '--database-url', `sqlite:${missing}`], npmEnv(from));
    expect(typed.code).toBe(1);
    expect(typed.stderr).toContain(
      `the SQLite store ${join(from, missing)} (the relative path resolved from ${from}) does not exist`,
    );
    // without npm a relative path is the process's folder's, and said so too
    const plain = await runCliCaptured(['report', '--database-url', 'sqlite:no-such-store.db']);
    expect(plain.stderr).toContain(
      `the SQLite store ${join(process.cwd(), 'no-such-store.db')} (the relative path resolved from ${process.cwd()}) does not exist`,
    );
  });

  it("issue 58 #16: npm run cli from a folder of the checkout reads a store, writes --html and reads ingest's frames by paths relative to that folder", async () => {
    const docs = join(inside, 'docs');
    mkdirSync(docs);
    const rel = (path: string) => relative(docs, path);
    const page = join(inside, 'out', 'page.html');
    mkdirSync(dirname(page));
    const { stdout } = await run(
      'npm',
      [
        'run',
        '--silent',
        'cli',
        '--',
        'report',
        '--database-url',
        `sqlite:${rel(insideStore)}`,
        '--html',
        rel(page),
        '--json',
      ],
      { cwd: docs, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    );
    expect(JSON.parse(stdout).totals).toBeDefined();
    expect(readFileSync(page, 'utf8')).toMatch(/^<!doctype html>/i);
    const frames = join(inside, 'frames.jsonl');
    writeFileSync(frames, '{"not":"a frame"}\n'); // invalid: it ends on the dead-letter queue, so --rejected is written
    const rejected = join(inside, 'out', 'rejected.jsonl');
    const ingest = await run(
      'npm',
      [
        'run',
        '--silent',
        'cli',
        '--',
        'ingest',
        rel(frames),
        '--database-url',
        `sqlite:${rel(insideStore)}`,
        '--rejected',
        rel(rejected),
        '--json',
        '--quiet',
      ],
      { cwd: docs, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    ).catch((err: { stdout: string; stderr: string }) => err);
    expect(JSON.parse(ingest.stdout), ingest.stderr).toMatchObject({ frames: 1, counts: { invalid: 1 } });
    expect(readFileSync(rejected, 'utf8')).toContain('not');
  }, 120_000);

  it('issue 58 #16: from outside the checkout, npm --prefix <checkout> run cli resolves the paths from where it was typed', async () => {
    const outside = join(work, 'elsewhere');
    mkdirSync(outside);
    const { stdout } = await run(
      'npm',
      [
        '--prefix',
        ROOT,
        'run',
        '--silent',
        'cli',
        '--',
        'report',
        '--database-url',
        'sqlite:../stores/demo.db',
        '--json',
      ],
      { cwd: outside, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    );
    expect(JSON.parse(stdout).totals).toBeDefined();
  }, 120_000);
});

describe('issue 58 #16: npm start', () => {
  it('issue 58 #16: npm start -- --sqlite <relative> --page <relative> from a folder of the checkout writes both there and names them by their absolute paths', async () => {
    const docs = join(inside, 'start-docs');
    const out = join(inside, 'start');
    mkdirSync(docs);
    mkdirSync(out);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME };
    // the smallest demo that passes its checks: a small host store, no live stream
    const args = ['start', '--silent', '--', '--sqlite', '../start/demo.db', '--page', '../start/page.html'];
    const { stdout } = await run('npm', [...args, '--messages', '200', '--live', '0'], { cwd: docs, env });
    const store = join(out, 'demo.db');
    expect(statSync(store).size).toBeGreaterThan(0);
    expect(readFileSync(join(out, 'page.html'), 'utf8')).toMatch(/^<!doctype html>/i);
    expect(stdout).toContain(`The store stays at ${store}:`);
    expect(stdout).toContain(join(out, 'page.html'));
    // typed again from there: the store it made is named by its absolute path and where it was resolved from
    const again = await run('npm', args, { cwd: docs, env }).catch((err: { code: number; stderr: string }) => err);
    expect('code' in again ? again.code : 0).toBe(2);
    expect('stderr' in again ? again.stderr : '').toContain(
      `--sqlite ../start/demo.db (${store}: the relative path resolved from ${docs}) already exists`,
    );
  }, 180_000);
});
