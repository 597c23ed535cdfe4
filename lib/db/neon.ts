import { Client, Pool, neonConfig, type PoolClient } from '@neondatabase/serverless';
import ws from 'ws';
import { postgresDialect } from './dialect/postgres.js';
import { DatabaseError, classifySqlstate, hintFor, sqlstateOf } from './errors.js';
import type { Database, Queryable, Row } from './database.js';

// Node 22 (Lambda nodejs22.x) has a global WebSocket; `ws` is the fallback for local Node 20 and
// is replaced by a stub in the deployed bundle (serverless.yml custom.esbuild.alias), 48 KiB less.
neonConfig.webSocketConstructor = (globalThis.WebSocket as unknown as typeof ws | undefined) ?? ws;

const TIMESTAMP_OIDS = [1114, 1184];
const INT8_OID = 20;

export interface NeonOptions {
  /** `host:port` of a plain-ws proxy (ws-proxy.ts) to a local server; unset in production */
  wsProxy?: string;
  max?: number;
}

/** PostgreSQL through the real Neon serverless driver (`Pool` over WebSocket). */
export function openNeon(connectionString: string, options: NeonOptions = {}): Database {
  const proxy = options.wsProxy;
  // Per-pool proxy settings, so one process can talk to several local servers (tests do).
  class ProxiedClient extends Client {
    constructor(config: ConstructorParameters<typeof Client>[0]) {
      super(config);
      // Timestamps cross the driver as text (a JS Date is millisecond-true); int8 becomes a
      // number (every stored metric is a safe integer by validation).
      for (const oid of TIMESTAMP_OIDS) this.setTypeParser(oid, (value: string) => value);
      this.setTypeParser(INT8_OID, (value: string) => Number(value));
      if (proxy) {
        this.neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
        this.neonConfig.useSecureWebSocket = false;
        this.neonConfig.pipelineTLS = false;
        this.neonConfig.pipelineConnect = false;
      }
    }
  }
  const pool = new Pool({ connectionString, max: options.max ?? 4 });
  // Neon's Pool pins its own Client class as an instance field, ignoring the `Client` option.
  (pool as unknown as { Client: typeof Client }).Client = ProxiedClient;
  // An idle connection that dies (e.g. while a Lambda is frozen) is dropped by the pool; without
  // a listener the error would crash the process.
  pool.on('error', ignore);
  const stats = { roundTrips: 0 };

  const run = async <T>(client: Pick<PoolClient, 'query'> | Pool, sql: string, params?: readonly unknown[]) => {
    stats.roundTrips += 1;
    try {
      const result = await client.query(sql, params as unknown[]);
      return result.rows as T[];
    } catch (err) {
      throw toDatabaseError(err);
    }
  };

  /**
   * A pooled connection with BEGIN sent. One that died while idle fails BEGIN before the server
   * sees anything, so it is discarded and BEGIN is tried once more on a fresh connection.
   */
  const begin = async (): Promise<PoolClient> => {
    for (let attempt = 1; ; attempt += 1) {
      let client: PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw toDatabaseError(err);
      }
      // A connection dropping while checked out also emits 'error' on the client; without a
      // listener that would crash the process. The failing statement reports it instead.
      client.on('error', ignore);
      try {
        await run(client, 'BEGIN');
        return client;
      } catch (err) {
        client.off('error', ignore);
        client.release(err as Error);
        if (attempt > 1 || !(err instanceof DatabaseError) || err.sqlstate !== undefined) throw err;
      }
    }
  };

  return {
    dialect: postgresDialect,
    stats,
    async query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      try {
        return await run<T>(pool, sql, params);
      } catch (err) {
        // A connection that died unnoticed fails before the server sees the statement; every
        // statement sent outside a transaction here is idempotent, so one retry on a fresh
        // connection is safe. A database that is really down fails again and is reported.
        if (err instanceof DatabaseError && err.sqlstate === undefined) return run<T>(pool, sql, params);
        throw err;
      }
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await begin();
      const tx: Queryable = { dialect: postgresDialect, query: (sql, params) => run(client, sql, params) };
      let broken: Error | undefined;
      try {
        const result = await fn(tx);
        await tx.query('COMMIT');
        return result;
      } catch (err) {
        try {
          await tx.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError as Error;
        }
        throw err;
      } finally {
        client.off('error', ignore);
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

function ignore(): void {}

export function toDatabaseError(err: unknown): DatabaseError {
  if (err instanceof DatabaseError) return err;
  const e = err as { code?: unknown; message?: string; constraint?: string; detail?: string };
  const sqlstate = sqlstateOf(err);
  const driverCode = typeof e.code === 'string' && !sqlstate ? e.code : undefined;
  const message = `${e.message ?? String(err)}${sqlstate ? ` (SQLSTATE ${sqlstate})` : ''}: ${hintFor(sqlstate)}`;
  return new DatabaseError(message, classifySqlstate(sqlstate), sqlstate, driverCode, { cause: err });
}
