import { randomBytes } from 'node:crypto';
import { Client, neonConfig, Pool, type PoolClient } from '@neondatabase/serverless';
import ws from 'ws';
import { beforeDeadline, msUntil } from '../deadline.js';
import { SubagentContextError } from '../errors.js';
import { type DeadlineOwner, hint } from '../hints.js';
import { terminalSafe } from '../terminal-text.js';
import { coalescingWebSocket } from './coalescing-websocket.js';
import type { Database, Queryable, QueryOptions, Row } from './database.js';
import { postgresDialect } from './dialect/postgres.js';
import { classifySqlstate, DatabaseError, hintFor, outOfTime, sqlstateOf } from './errors.js';
import { Pipeline, type PipelinedStatement } from './pipeline.js';
import { type OpenTransaction, runTransaction } from './transaction.js';

// Node 22 (Lambda nodejs22.x) has a global WebSocket; `ws` is the fallback for local Node 20 and
// is replaced by a stub in the deployed bundle (serverless.yml custom.esbuild.alias), 48 KiB less.
// The driver's own write coalescing waits a 1 ms timer per round trip; ours flushes in a
// microtask (coalescing-websocket.ts).
neonConfig.webSocketConstructor = coalescingWebSocket((globalThis.WebSocket as unknown as typeof ws | undefined) ?? ws);
neonConfig.coalesceWrites = false;

const TIMESTAMP_OIDS = [1114, 1184];
const INT8_OID = 20;

export interface NeonOptions {
  /** `host:port` of a plain-ws proxy (ws-proxy.ts) to a local server; unset in production */
  wsProxy?: string;
  max?: number;
  /**
   * The server's cap on each statement (R2-5), set on every connection: the server ends a statement
   * (57014) on its own even when this process is frozen or gone. Default
   * DEFAULT_STATEMENT_TIMEOUT_MS; longer for callers with long statements (lib/defaults.ts
   * STATEMENT_TIMEOUT_SECONDS). The invocation's own deadline (setDeadline) is tighter and also
   * enforced from this side.
   */
  statementTimeoutMs?: number;
  /**
   * The cap on getting a connection (R2-5), opening one or waiting for one of the pool's `max`
   * (a pool wait, R4-12). Default CONNECT_TIMEOUT_MS, which every caller in the product keeps; a
   * test gives a shorter one to see the same bound reached in less time.
   */
  connectTimeoutMs?: number;
  /**
   * The connections only read (`report`, `health --full`): each new one first turns PostgreSQL's
   * JIT off for its session. The report's statements are large (hundreds of expressions) and
   * planned as costly, so the server JIT-compiles them, which took longer than running them: 0.6 s
   * at 1M messages, 12 s once the plan's cost passed jit_optimize_above_cost (R4-12, BENCHMARKS.md
   * "The read side"). Writers keep the server's setting.
   */
  readOnly?: boolean;
  /** where PGSSLMODE is read (R4-5: libpq's fallback when the URL names no sslmode); default process.env */
  env?: NodeJS.ProcessEnv;
}

/** A read-only connection's session (NeonOptions.readOnly): one statement, sent once per connection. */
export const READ_ONLY_SESSION_SQL = 'SET jit = off';

/** The server's cap on one statement unless the caller sets one: under ingest's 30 s function timeout. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 25_000;

/** PostgreSQL's largest `statement_timeout` (an int of milliseconds); larger is refused with 22023 on connect. */
export const MAX_STATEMENT_TIMEOUT_MS = 2_147_483_647;

/**
 * A statement cap in seconds as the server takes it (R2-5, issue 20 D8): whole milliseconds rounded
 * UP, at least 1 ms — the server rounds a fraction of a millisecond down to 0, which means no limit
 * at all — and at most MAX_STATEMENT_TIMEOUT_MS. Anything else is a RangeError saying what to give.
 */
export function statementTimeoutMsOf(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new RangeError(
      `a statement timeout must be a positive number of seconds (got ${seconds}); 0 would mean no limit`,
    );
  const ms = Math.max(1, Math.ceil(seconds * 1000));
  if (ms > MAX_STATEMENT_TIMEOUT_MS)
    throw new RangeError(
      `a statement timeout of ${seconds} s is more than PostgreSQL's maximum, ${MAX_STATEMENT_TIMEOUT_MS / 1000} s (about 24.8 days)`,
    );
  return ms;
}

/** The time left as a transaction's SET LOCAL statement_timeout: 1 ms at least (0 is no limit), the server's maximum at most. */
function localTimeoutMs(leftMs: number): number {
  return Math.min(MAX_STATEMENT_TIMEOUT_MS, Math.max(1, Math.floor(leftMs)));
}

/** The connection attempt's cap (R2-5), whatever the invocation. */
const CONNECT_TIMEOUT_MS = 10_000;

/** A TLS setting of the database URL that this connection cannot honour (R4-5); the URL is never quoted. */
export class TlsModeError extends SubagentContextError {
  override readonly name = 'TlsModeError';
}

/** sslmode values that ask for an encrypted connection (libpq's; `no-verify` is node-postgres's). */
const ENCRYPTED_MODES = new Set(['require', 'verify-ca', 'verify-full', 'no-verify']);
/** Every sslmode value there is: libpq's six and node-postgres's `no-verify`. Anything else is refused, as libpq does. */
const SSL_MODES = new Set(['disable', 'allow', 'prefer', ...ENCRYPTED_MODES]);
/** `ssl=` (node-postgres's and JDBC's form; libpq has none): these values, and only these, are understood. */
const SSL_FLAGS = new Map([
  ['true', true],
  ['1', true],
  ['false', false],
  ['0', false],
]);

/** A setting's value as a message shows it: quoted, terminal-safe, short (it came from the URL or the environment). */
const shownValue = (value: string) =>
  JSON.stringify(terminalSafe(value.length > 40 ? `${value.slice(0, 40)}…` : value));

/**
 * What the URL and the environment ask of TLS, read as libpq reads them (issue 48): of a parameter
 * given twice the last counts; `sslmode` from the URL, else PGSSLMODE; a value that is not exactly
 * one of libpq's (`REQUIRE`, `require `) is refused, as psql refuses it, never read as "no TLS".
 * Beyond libpq, so that no spelling the driver might honour goes unread: parameter names in any
 * case (`SSLMODE=`), `ssl=true|1|false|0` (node-postgres's form, which the driver honours), and
 * libpq's deprecated `requiressl=1`. Returns the setting that asks for encryption, if any.
 */
export function tlsRequest(connectionString: string, env: NodeJS.ProcessEnv): string | undefined {
  let params: URLSearchParams;
  try {
    params = new URL(connectionString).searchParams;
  } catch {
    return undefined; // not a URL: the driver refuses it, as a DatabaseError that does not quote it
  }
  const last = new Map<string, string>();
  for (const [key, value] of params) last.set(key.toLowerCase(), value);
  const asks: string[] = [];
  const mode = last.get('sslmode') ?? env.PGSSLMODE;
  const modeFrom = last.has('sslmode') ? 'sslmode' : 'PGSSLMODE';
  if (mode !== undefined) {
    if (!SSL_MODES.has(mode))
      throw new TlsModeError(
        `${modeFrom === 'sslmode' ? "the database URL's sslmode" : 'PGSSLMODE'} ${shownValue(mode)} is not an sslmode: use one of disable, allow, prefer, require, verify-ca, verify-full (exactly, in lower case, as libpq and psql require)`,
      );
    if (ENCRYPTED_MODES.has(mode)) asks.push(`${modeFrom}=${mode}`);
  }
  const ssl = last.get('ssl');
  if (ssl !== undefined) {
    const on = SSL_FLAGS.get(ssl);
    if (on === undefined)
      throw new TlsModeError(
        `the database URL's ssl parameter ${shownValue(ssl)} is not understood: use sslmode=require (or disable) instead`,
      );
    if (on) asks.push(`ssl=${ssl}`);
  }
  const requiressl = last.get('requiressl');
  if (requiressl !== undefined && requiressl !== '0') asks.push(`requiressl=${requiressl}`);
  // sslnegotiation=direct (PGSSLNEGOTIATION): TLS from the first byte, so a request for TLS
  const negotiation = setting(last, env, 'sslnegotiation', 'PGSSLNEGOTIATION', ['postgres', 'direct']);
  if (negotiation?.value === 'direct') asks.push(negotiation.shown);
  return asks[0];
}

/**
 * A libpq setting from the URL, else from its environment variable (libpq's order), checked against
 * the values libpq takes (exactly, as libpq refuses anything else).
 */
function setting(
  last: ReadonlyMap<string, string>,
  env: NodeJS.ProcessEnv,
  name: string,
  variable: string,
  values: readonly string[],
): { value: string; shown: string } | undefined {
  const fromUrl = last.get(name);
  const value = fromUrl ?? env[variable];
  if (value === undefined || (fromUrl === undefined && value === '')) return undefined;
  const where = fromUrl === undefined ? variable : `the database URL's ${name}`;
  if (!values.includes(value))
    throw new TlsModeError(
      `${where} ${shownValue(value)} is not understood: use one of ${values.join(', ')} (exactly, as libpq requires)`,
    );
  return { value, shown: fromUrl === undefined ? `${variable}=${value}` : `${name}=${value}` };
}

/**
 * gssencmode (PGGSSENCMODE), issue 57 #10: `require` asks for GSSAPI encryption, which the Neon
 * driver cannot give on any path (it has no GSSAPI): refused, never a connection without it.
 * `prefer` and `disable` are met (no GSSAPI encryption is tried).
 */
function checkGssEncryption(connectionString: string, env: NodeJS.ProcessEnv): void {
  const last = new Map<string, string>();
  for (const [key, value] of new URL(connectionString).searchParams) last.set(key.toLowerCase(), value);
  const gss = setting(last, env, 'gssencmode', 'PGGSSENCMODE', ['disable', 'prefer', 'require']);
  if (gss?.value === 'require')
    throw new TlsModeError(
      `${gss.shown.startsWith('PGGSSENCMODE') ? `${gss.shown} asks` : `the database URL asks for ${gss.shown}`} for GSSAPI encryption, which the Neon driver cannot give: remove it (for an encrypted connection use sslmode=require, honoured where the connection is not through a local proxy)`,
    );
}

/** libpq's variables naming certificate files (issue 57 #20): read by libpq as the URL's parameters are. */
const FILE_VARIABLES = {
  PGSSLROOTCERT: 'sslrootcert',
  PGSSLCERT: 'sslcert',
  PGSSLKEY: 'sslkey',
  PGSSLCRL: 'sslcrl',
} as const;
/** URL parameters naming files the driver would read (it cannot: it has no file system of its own). */
const FILE_PARAMETERS = ['sslrootcert', 'sslcert', 'sslkey', 'sslcrl'] as const;

/**
 * R4-5: what the URL asks of TLS is honoured or refused, never dropped. Without a proxy the driver
 * speaks WebSocket over TLS (wss://) and Node verifies the server's certificate and name against
 * its CA store, which meets every sslmode (verify-full included). Through a proxy (the local
 * ws→TCP one, or DATABASE_WS_PROXY) the connection is plain: a mode that asks for encryption is
 * refused. A certificate file (sslrootcert, sslcert, sslkey) is refused everywhere: the driver
 * cannot read it (it crashed with `readFileSync is not a function`); a private CA is given to
 * Node with NODE_EXTRA_CA_CERTS instead.
 */
export function checkTls(connectionString: string, proxied: boolean, env: NodeJS.ProcessEnv = process.env): void {
  let params: URLSearchParams;
  try {
    params = new URL(connectionString).searchParams;
  } catch {
    return; // not a URL: the driver refuses it, as a DatabaseError that does not quote it
  }
  const keys = new Set([...params.keys()].map((k) => k.toLowerCase()));
  const file = FILE_PARAMETERS.find((name) => keys.has(name));
  // the environment's certificate files, as libpq reads them (issue 57 #20): one rule for both
  const variable = (Object.keys(FILE_VARIABLES) as (keyof typeof FILE_VARIABLES)[]).find((v) => env[v]);
  const named = file ?? (variable === undefined ? undefined : FILE_VARIABLES[variable]);
  if (named)
    throw new TlsModeError(
      `${file ? `the database URL's ${file} parameter` : `${variable} (libpq's ${named})`} is not supported: the Neon driver reaches the server over a WebSocket whose TLS uses Node's CA store; remove ${file ? `${file} from the URL` : `${variable} from the environment`} and give a private CA to Node with NODE_EXTRA_CA_CERTS=<file.pem>${named === 'sslcert' || named === 'sslkey' ? ' (client certificates cannot be used)' : ''}`,
    );
  checkGssEncryption(connectionString, env);
  // Read on every path: an invalid value is refused even where the connection is TLS anyway (wss://).
  const asked = tlsRequest(connectionString, env);
  if (proxied && asked !== undefined)
    throw new TlsModeError(
      `${asked.startsWith('PGSSLMODE') ? `${asked} asks for TLS` : `the database URL asks for ${asked}`}, but this connection goes through a plain WebSocket proxy (the CLI's own for a local server, or DATABASE_WS_PROXY) and would not be encrypted: remove it (or use sslmode=disable or prefer) for a server on this machine, or connect to the server by a name that is not local so the driver uses TLS`,
    );
}

/** PostgreSQL through the real Neon serverless driver (`Pool` over WebSocket). */
export function openNeon(connectionString: string, options: NeonOptions = {}): Database {
  const proxy = options.wsProxy;
  checkTls(connectionString, proxy !== undefined, options.env);
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
  const max = options.max ?? 4;
  const connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const pool = new Pool({
    connectionString,
    max,
    // whole milliseconds within the server's range (a fraction would reach it as 0: no limit)
    statement_timeout: statementTimeoutMsOf((options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS) / 1000),
    connectionTimeoutMillis: connectTimeoutMs,
  });
  // Neon's Pool pins its own Client class as an instance field, ignoring the `Client` option.
  (pool as unknown as { Client: typeof Client }).Client = ProxiedClient;
  // An idle connection that dies (e.g. while a Lambda is frozen) is dropped by the pool; without
  // a listener the error would crash the process.
  pool.on('error', ignore);
  const stats = { roundTrips: 0 };
  let deadline: number | undefined;
  let owner: DeadlineOwner | undefined;
  const late = (what: string) => (waitedMs: number) =>
    outOfTime(
      `${what} did not finish within ${waitedMs} ms, the time left before the deadline: the database accepts connections but does not answer`,
      owner,
    );

  /** failures to open a connection: a retry "on a fresh connection" would only wait again */
  const connectFailures = new WeakSet<Error>();
  /** connections whose session READ_ONLY_SESSION_SQL has set up (options.readOnly) */
  const sessionsSet = new WeakSet<PoolClient>();

  /** A pooled connection, within the deadline; one that arrives after it is handed back. */
  const connect = async (): Promise<PoolClient> => {
    // Every connection already checked out: the pool queues the request, and pg-pool applies
    // connectionTimeoutMillis to that wait too. Failing it is no network failure (R4-12).
    const saturated = pool.totalCount >= max && pool.idleCount === 0;
    try {
      // inside the try: the driver throws a malformed URL's TypeError (its `input` holds the URL)
      // synchronously, and it must leave as a DatabaseError like any other connect failure (R2-6)
      const pending = pool.connect();
      const client = await beforeDeadline(pending, deadline, late('connecting'), () => {
        pending.then((client) => client.release(), ignore);
      });
      if (options.readOnly && !sessionsSet.has(client)) {
        try {
          await run(client, READ_ONLY_SESSION_SQL);
          sessionsSet.add(client);
        } catch (err) {
          client.release(err as Error);
          throw err;
        }
      }
      return client;
    } catch (err) {
      const error =
        saturated && !(err instanceof DatabaseError) && sqlstateOf(err) === undefined && !isSocketError(err)
          ? poolWait(max, connectTimeoutMs, err)
          : toDatabaseError(err);
      connectFailures.add(error);
      throw error;
    }
  };

  const run = async <T>(client: PoolClient, sql: string, params?: readonly unknown[], options?: QueryOptions) => {
    stats.roundTrips += 1;
    try {
      // A named statement is parsed once per connection; the driver sends Bind/Execute after that.
      const sent = options?.prepareAs
        ? client.query({ name: statementName(client, options.prepareAs), text: sql, values: params as unknown[] })
        : client.query(sql, params as unknown[]);
      // A connection that hangs past the deadline is destroyed, not reused.
      const result = await beforeDeadline(sent, deadline, late('a statement'), () =>
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy(),
      );
      return result.rows as T[];
    } catch (err) {
      throw toDatabaseError(err);
    }
  };

  /** One statement on a connection of its own (what pool.query does, with the deadline). */
  const runAlone = async <T>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
    const client = await connect();
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      return await run<T>(client, sql, params, options);
    } catch (err) {
      if ((err as DatabaseError).sqlstate === undefined) broken = err as Error; // the connection is suspect
      throw err;
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  };

  /**
   * A pooled connection with BEGIN sent. One that died while idle fails BEGIN before the server
   * sees anything, so it is discarded and BEGIN is tried once more on a fresh connection.
   */
  const begin = async (): Promise<PoolClient> => {
    for (let attempt = 1; ; attempt += 1) {
      const client = await connect();
      // A connection dropping while checked out also emits 'error' on the client; without a
      // listener that would crash the process. The failing statement reports it instead.
      client.on('error', ignore);
      try {
        // The transaction's statements are also bounded on the server (R2-5), at no extra round trip.
        const left = msUntil(deadline);
        await run(
          client,
          Number.isFinite(left) ? `BEGIN; SET LOCAL statement_timeout = ${localTimeoutMs(left)}` : 'BEGIN',
        );
        return client;
      } catch (err) {
        client.off('error', ignore);
        client.release(err as Error);
        if (
          attempt > 1 ||
          !(err instanceof DatabaseError) ||
          err.sqlstate !== undefined ||
          err.driverCode === 'ETIMEDOUT'
        )
          throw err;
      }
    }
  };

  /**
   * BEGIN (with the statement timeout of `begin`), the statements and COMMIT as one pipeline on
   * one connection: one round trip. The server skips whatever follows a failed statement, COMMIT
   * included, so a failure leaves an aborted transaction that ROLLBACK ends (or none, when COMMIT
   * itself failed; ROLLBACK then only warns).
   */
  const runBatch = async (statements: readonly PipelinedStatement[]): Promise<void> => {
    const client = await connect();
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      const left = msUntil(deadline);
      const pipeline = new Pipeline([
        { sql: 'BEGIN' },
        ...(Number.isFinite(left) ? [{ sql: `SET LOCAL statement_timeout = ${localTimeoutMs(left)}` }] : []),
        ...statements,
        { sql: 'COMMIT' },
      ]);
      stats.roundTrips += 1;
      try {
        client.query(pipeline);
        await beforeDeadline(pipeline.done, deadline, late('a transaction'), () =>
          (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy(),
        );
      } catch (err) {
        const error = toDatabaseError(err);
        if (error.sqlstate === undefined) {
          broken = error; // the connection is lost or suspect: the server ends its transaction
        } else {
          try {
            await run(client, 'ROLLBACK');
          } catch (rollbackError) {
            broken = rollbackError as Error;
          }
        }
        throw error;
      }
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  };

  /**
   * A connection that died unnoticed (e.g. while a Lambda was frozen) fails before the server sees
   * anything; what is sent outside a caller's transaction here (a statement, a whole batch) is
   * safe to send again, so it is, once, on a fresh connection. A database that is really down
   * fails again and is reported. Not after running out of time (none is left) nor when opening
   * the connection failed (the fresh connection is what failed).
   */
  const onceMoreIfDead = async <T>(send: () => Promise<T>): Promise<T> => {
    try {
      return await send();
    } catch (err) {
      const deadConnection =
        err instanceof DatabaseError &&
        err.sqlstate === undefined &&
        err.driverCode !== 'ETIMEDOUT' &&
        !connectFailures.has(err);
      if (deadConnection) return send();
      throw err;
    }
  };

  return {
    dialect: postgresDialect,
    stats,
    connections: max,
    query: <T = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) =>
      onceMoreIfDead(() => runAlone<T>(sql, params, options)),
    setDeadline(next: number | undefined, by?: DeadlineOwner) {
      deadline = next;
      owner = by;
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await begin();
      let broken: Error | undefined;
      try {
        const open: OpenTransaction = {
          tx: { dialect: postgresDialect, query: (sql, params, options) => run(client, sql, params, options) },
          commit: async () => void (await run(client, 'COMMIT')),
          rollback: async () => void (await run(client, 'ROLLBACK')),
          onRollbackError: (error) => {
            broken = error; // released as broken: the pool discards the connection
          },
        };
        return await runTransaction(open, fn);
      } finally {
        client.off('error', ignore);
        client.release(broken);
      }
    },
    // Re-applying a batch is safe too: every merge rule is replay-safe (AC-3, R2-7, docs/merge.md).
    batch: (statements) => onceMoreIfDead(() => runBatch(statements)),
    close: () => pool.end(),
  };
}

function ignore(): void {}

/** An error the socket raised (it names its system call): a connection attempt that failed. */
function isSocketError(err: unknown): boolean {
  return typeof (err as { syscall?: unknown } | null)?.syscall === 'string';
}

/**
 * R4-12: a statement that waited the connect timeout (`waitedMs`) for one of the pool's `max`
 * connections, all in use by this process: the server was reached, so it is not worded as an
 * unreachable one.
 */
function poolWait(max: number, waitedMs: number, cause: unknown): DatabaseError {
  const detail = `no pooled connection became free within ${waitedMs} ms (all ${max} in use by this process's other statements)`;
  return new DatabaseError(`${detail}: ${hint('pool_wait', 'function')}`, 'system', undefined, 'POOL_WAIT', {
    cause,
    detail,
    hintClass: 'pool_wait',
  });
}

const connectionTags = new WeakMap<PoolClient, string>();

/**
 * `name` made unique per connection: the driver remembers which names it prepared on each
 * connection, but PGlite's socket server runs every connection in one session, where a name
 * another connection prepared already exists (42P05) — another module instance's too (a bundled
 * function beside the CLI in one process), so the tag is random, not a counter.
 */
function statementName(client: PoolClient, name: string): string {
  let tag = connectionTags.get(client);
  if (tag === undefined) {
    tag = randomBytes(6).toString('hex');
    connectionTags.set(client, tag);
  }
  return `${name}_${tag}`;
}

export function toDatabaseError(err: unknown): DatabaseError {
  if (err instanceof DatabaseError) return err;
  const e = err as { code?: unknown; message?: string; constraint?: string; detail?: string };
  const sqlstate = sqlstateOf(err);
  const driverCode = typeof e.code === 'string' && !sqlstate ? e.code : undefined;
  const detail = `${e.message ?? String(err)}${sqlstate ? ` (SQLSTATE ${sqlstate})` : ''}`;
  return new DatabaseError(`${detail}: ${hintFor(sqlstate)}`, classifySqlstate(sqlstate), sqlstate, driverCode, {
    cause: err,
    detail,
  });
}
