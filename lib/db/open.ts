import type { Database } from './database.js';
import { openNeon } from './neon.js';
import { openSqlite } from './sqlite.js';

export interface OpenOptions {
  /** `host:port` of the local ws→TCP proxy; defaults to DATABASE_WS_PROXY */
  wsProxy?: string;
  max?: number;
  /** PostgreSQL: the server's cap on each statement (neon.ts); SQLite has none (it runs in this process) */
  statementTimeoutMs?: number;
  /** PostgreSQL: the cap on getting a connection (neon.ts NeonOptions.connectTimeoutMs); SQLite opens a file */
  connectTimeoutMs?: number;
  /**
   * SQLite: open the file read-only (lib/db/sqlite.ts). PostgreSQL: sessions tuned for reading
   * (neon.ts NeonOptions.readOnly: JIT off); give the read-only commands a role with SELECT only
   * (README "Configuration").
   */
  readonly?: boolean;
  /**
   * SQLite, with `readonly`: reader threads that answer statements side by side (lib/db/sqlite.ts,
   * issue 59), as PostgreSQL's pool of `max` does; default none (one connection).
   */
  readers?: number;
  /** SQLite: make the file when it does not exist (`--create`); otherwise such a path is refused */
  create?: boolean;
  /** PostgreSQL: the environment PGSSLMODE is read from (R4-5; the CLI's own); default process.env */
  env?: NodeJS.ProcessEnv;
}

/** The dialect a database URL names, or undefined when this project cannot open it (one home for that rule). */
export function databaseKind(url: string): 'postgres' | 'sqlite' | undefined {
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  if (url.startsWith('sqlite:')) return 'sqlite';
  return undefined;
}

/**
 * `postgres://…`/`postgresql://…` → PostgreSQL through the Neon driver;
 * `sqlite:<path>` → SQLite (the host's local store). Callers check the URL first and name where it
 * came from (lib/config/database-url.ts checkDatabaseUrl); this refusal never quotes it (R2-6: a
 * value that is not a URL may be a bare password).
 */
export function openDatabase(url: string, options: OpenOptions = {}): Database {
  const kind = databaseKind(url);
  if (kind === 'postgres') {
    const wsProxy = options.wsProxy ?? (process.env.DATABASE_WS_PROXY || undefined);
    return openNeon(url, {
      wsProxy,
      max: options.max,
      statementTimeoutMs: options.statementTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs,
      readOnly: options.readonly,
      env: options.env,
    });
  }
  if (kind === 'sqlite') {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!path) throw new Error('DATABASE_URL "sqlite:" needs a path, e.g. sqlite:./kandev.db or sqlite::memory:');
    return openSqlite(path, { readonly: options.readonly, create: options.create, readers: options.readers });
  }
  throw new Error(
    'the database URL must start with postgres://, postgresql:// or sqlite: (the value is not shown); see README "Configuration"',
  );
}
