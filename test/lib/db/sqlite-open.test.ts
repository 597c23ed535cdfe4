import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/database.js';
import { openDatabase } from '../../../lib/db/open.js';

/*
 * The host's SQLite store is left as it was (issue 26, R3-3): opening it changes nothing, a
 * read-only command opens it read-only, and a path that does not exist is not silently a new store.
 */
describe('R3-3: opening the host SQLite store leaves it as it was', () => {
  const dirs: string[] = [];
  const opened: Database[] = [];
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((db) => db.close()));
    for (const dir of dirs.splice(0)) {
      chmodSync(dir, 0o755);
      rmSync(dir, { recursive: true, force: true });
    }
  });
  const open = (url: string, options?: Parameters<typeof openDatabase>[1]) => {
    const db = openDatabase(url, options);
    opened.push(db);
    return db;
  };

  /** A store as the host leaves it: its own journal mode (DELETE, SQLite's default), one table. */
  function hostStore(): string {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
    dirs.push(dir);
    const path = join(dir, 'kandev.db');
    const host = new BetterSqlite3(path);
    host.pragma('journal_mode = DELETE');
    host.exec(
      "CREATE TABLE kandev_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT ''); INSERT INTO kandev_meta VALUES ('k', 'v')",
    );
    host.close();
    return path;
  }
  const journalMode = (path: string) => {
    const probe = new BetterSqlite3(path, { readonly: true });
    try {
      return probe.pragma('journal_mode', { simple: true });
    } finally {
      probe.close();
    }
  };

  it('R3-3: opening (and querying) a DELETE-mode store leaves it in DELETE mode', async () => {
    const path = hostStore();
    const db = open(`sqlite:${path}`);
    await db.query("INSERT INTO kandev_meta (key, value) VALUES ('k2', 'v')");
    await db.close();
    expect(journalMode(path)).toBe('delete');
  });

  it('R3-3: a read-only open reads a store on read-only storage and never writes', async () => {
    const path = hostStore();
    chmodSync(path, 0o444);
    chmodSync(join(path, '..'), 0o555);
    const db = open(`sqlite:${path}`, { readonly: true });
    expect(await db.query('SELECT value FROM kandev_meta')).toEqual([{ value: 'v' }]);
    await expect(db.query("INSERT INTO kandev_meta (key, value) VALUES ('x', 'y')")).rejects.toMatchObject({
      sqlstate: '25006',
    });
  });

  it('R3-3: a path that does not exist is refused, names the path and --create, and creates nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
    dirs.push(dir);
    const path = join(dir, 'typo.db');
    expect(() => open(`sqlite:${path}`)).toThrow(/typo\.db does not exist.*--create/);
    expect(() => open(`sqlite:${path}`, { readonly: true })).toThrow(/typo\.db does not exist/);
    expect(existsSync(path)).toBe(false);
  });

  it('R3-3: with create a new store is made (ours, so in WAL mode)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
    dirs.push(dir);
    const path = join(dir, 'new.db');
    const db = open(`sqlite:${path}`, { create: true });
    await db.query('CREATE TABLE t (a TEXT)');
    await db.close();
    expect(existsSync(path)).toBe(true);
    expect(journalMode(path)).toBe('wal');
  });

  it('R3-3: an in-memory store needs no create', async () => {
    expect(await open('sqlite::memory:').query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
