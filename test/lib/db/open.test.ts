import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/database.js';
import { openDatabase } from '../../../lib/db/open.js';

describe('openDatabase', () => {
  let opened: Database | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['postgres://u@h/db', 'postgres'],
    ['postgresql://u@h/db', 'postgres'],
    ['sqlite::memory:', 'sqlite'],
  ])('opens %s with the %s dialect', async (url, dialect) => {
    opened = openDatabase(url);
    expect(opened.dialect.name).toBe(dialect);
  });

  it('opens sqlite:/// as an absolute path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'open-test-'));
    dirs.push(dir);
    opened = openDatabase(`sqlite://${join(dir, 'x.db')}`, { create: true });
    await opened.query('CREATE TABLE t (a TEXT)');
    expect(existsSync(join(dir, 'x.db'))).toBe(true);
  });

  it('enforces foreign keys on SQLite', async () => {
    opened = openDatabase('sqlite::memory:');
    await opened.query('CREATE TABLE p (id TEXT PRIMARY KEY)');
    await opened.query('CREATE TABLE c (p TEXT REFERENCES p(id))');
    await expect(opened.query("INSERT INTO c VALUES ('none')")).rejects.toMatchObject({ kind: 'foreign_key' });
  });

  it.each([
    ['mysql://u@h/db', /must start with postgres:\/\/, postgresql:\/\/ or sqlite: \(the value is not shown\)/],
    ['', /must start with/],
    ['sqlite:', /needs a path, e\.g\. sqlite:\.\/kandev\.db/],
  ])('rejects %j with a message that says what to give', (url, message) => {
    expect(() => openDatabase(url)).toThrow(message);
  });

  it.each(['mysql://admin:hunter2@h/db', 'hunter2', 'PGPASSWORD=hunter2'])(
    'R2-6: does not echo any part of an unsupported value %j',
    (url) => {
      expect(() => openDatabase(url)).toThrow(/^(?!.*hunter2)/s);
    },
  );
});
