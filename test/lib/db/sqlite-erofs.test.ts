import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../lib/db/open.js';
import { readonlyHintClass } from '../../../lib/db/sqlite.js';
import { hint } from '../../../lib/hints.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { createHostSchema } from '../../../local/host-schema.js';

/*
 * Issue 58 #15: a store on a file system mounted read-only (EROFS) cannot be written by any user,
 * so the hint says so and what to do (a writable copy, or remount read-write), never "run the
 * command as a user who may write both". The real fault: the CLI in a mount namespace of its own
 * (unshare -m) where the store's folder is bind-mounted read-only; skipped where that is refused.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const work = mkdtempSync(join(tmpdir(), 'sqlite-erofs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const probe = spawnSync('unshare', [
  '-m',
  'sh',
  '-c',
  `mount --bind ${work} ${work} && mount -o remount,ro,bind ${work}`,
]);
const mountable = probe.status === 0;
if (!mountable) console.warn(`sqlite-erofs: no read-only mount can be made here (unshare -m): ${probe.stderr}`);

describe('issue 58 #15: the hint for a store on a read-only file system', () => {
  it('issue 58 #15: EROFS picks the read-only file system hint (copy or remount), EACCES the permissions one', () => {
    expect(readonlyHintClass('EROFS')).toBe('sqlite_readonly_fs');
    expect(readonlyHintClass('EACCES')).toBe('sqlite_readonly');
    expect(readonlyHintClass(undefined)).toBe('sqlite_readonly');
    const text = hint(readonlyHintClass('EROFS'), 'cli', 'sqlite');
    expect(text).toMatch(/^the file system the SQLite store is on is mounted read-only, so no user may write/);
    expect(text).toContain('copy the store to a writable place');
    expect(text).toContain('remount the file system read-write');
    expect(text).not.toMatch(/as a user who may write/);
    expect(hint(readonlyHintClass('EROFS'), 'function', 'sqlite')).toMatch(/mounted read-only/);
  });
});

/** The CLI with `args`, in a mount namespace where `dir` is read-only. */
function cliOnReadOnly(dir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"',
        dir,
        process.execPath,
        join(ROOT, 'bin/subagent-context.mjs'),
        ...args,
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!mountable)('issue 58 #15: the CLI on a store mounted read-only (a real EROFS)', () => {
  const dir = join(work, 'ro');
  const path = join(dir, 'host.db');
  const url = `sqlite:${path}`;

  it('issue 58 #15: migrate, health, ingest and export say the file system is mounted read-only (copy or remount), never "a user who may write"; report reads it', async () => {
    mkdirSync(dir);
    const db = openDatabase(url, { create: true });
    await createHostSchema(db);
    await runMigration(db);
    await db.close();
    for (const args of [
      ['migrate'],
      ['health'],
      ['ingest', join(dir, 'frames.jsonl')],
      ['export', '--otlp', 'http://127.0.0.1:9/v1/traces'],
    ]) {
      const run = await cliOnReadOnly(dir, [...args, '--database-url', url]);
      expect(run.code, `${args[0]}: ${run.stderr}`).toBe(1);
      expect(run.stderr, args[0]).toContain(
        `subagent-context: the SQLite store ${path} is on a read-only file system (EROFS), and this command writes: the file system the SQLite store is on is mounted read-only`,
      );
      expect(run.stderr, args[0]).not.toMatch(/as a user who may write/);
    }
    const report = await cliOnReadOnly(dir, ['report', '--database-url', url, '--json']);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).totals).toBeDefined();
  }, 120_000);
});
