import { existsSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Database } from '../db/database.js';
import { databaseKind, type OpenOptions, openDatabase } from '../db/open.js';
import { CliFailure } from './failure.js';
import { relativeBase } from './user-path.js';

/**
 * The path of a `sqlite:` URL as lib/db/open.ts reads it (`sqlite:///abs` = `/abs`); undefined for
 * an in-memory store or another URL.
 */
function sqlitePath(url: string): string | undefined {
  if (databaseKind(url) !== 'sqlite') return undefined;
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return path === '' || path === ':memory:' || path.startsWith('file:') ? undefined : path;
}

/**
 * Issue 58 #16: a `sqlite:` URL with a relative path, made absolute from where the command was
 * typed (lib/cli/user-path.ts: `npm run cli` runs from the package root), so the store opened and
 * every message name the file it is; `relative`: the folder it was resolved from, for those messages.
 */
export function userDatabaseUrl(url: string, env: NodeJS.ProcessEnv): { url: string; resolvedFrom?: string } {
  const path = sqlitePath(url);
  if (path === undefined || isAbsolute(path)) return { url };
  const from = relativeBase(env);
  return { url: `sqlite:${resolve(from, path)}`, resolvedFrom: from };
}

export interface OpenedStore {
  db: Database;
  /** the SQLite file this open made (`--create`): removed again if the command then fails */
  created?: string;
}

/**
 * The CLI's open: a `sqlite:` path is checked in SQLite's words first (a file and its folder, never
 * `createdb` or a server; issue 34), then opened as lib/db/open.ts opens any URL.
 */
export function openStore(url: string, options: OpenOptions & { resolvedFrom?: string }): OpenedStore {
  const path = sqlitePath(url);
  if (path === undefined) return { db: openDatabase(url, options) };
  const folder = dirname(path);
  // issue 58 #16: a relative path says where it was resolved from (npm runs scripts from the package root)
  const from = options.resolvedFrom === undefined ? '' : ` (the relative path resolved from ${options.resolvedFrom})`;
  if (!existsSync(folder))
    throw new CliFailure(
      `the folder ${folder} of the SQLite store ${path}${from} does not exist: create it (mkdir -p ${folder}) or fix the path in --database-url`,
    );
  if (existsSync(path)) {
    if (statSync(path).isDirectory())
      throw new CliFailure(
        `the SQLite store ${path} is a directory, not a file: fix the path in --database-url (sqlite:<file>)`,
      );
    return { db: openDatabase(url, options) };
  }
  if (!options.create)
    throw new CliFailure(
      options.readonly
        ? `the SQLite store ${path}${from} does not exist: fix the path in --database-url (sqlite:<path>); this command only reads a store (a demo store: \`npm start -- --sqlite <path>\`)`
        : `the SQLite store ${path}${from} does not exist: fix the path in --database-url (sqlite:<path>), or pass --create to make a new, empty store there`,
    );
  return { db: openDatabase(url, options), created: path };
}

/**
 * A store `--create` made for a command that then failed is removed with its journal files, so the
 * next run meets the same "does not exist" and not a 4 KB empty store (issue 34). Returns the note.
 */
export function discardCreatedStore(path: string): string {
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(file, { force: true });
  return `removed ${path}, the new store --create made for this command: the command failed, so it is not left behind`;
}
