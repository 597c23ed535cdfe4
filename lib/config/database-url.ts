import { callAwsJson } from '../aws/json-protocol.js';
import { failureFields, urlMayBeStale } from '../db/errors.js';
import { databaseKind } from '../db/open.js';
import { SubagentContextError } from '../errors.js';

/** Reads one SecureString (decrypted). Injectable so the fetch can be pointed elsewhere. */
export type ParameterReader = (name: string) => Promise<string>;

/** The environment variable that names the SSM parameter holding DATABASE_URL (serverless.yml). */
export const DATABASE_URL_PARAMETER_ENV = 'DATABASE_URL_SSM_PARAMETER';

export class DatabaseUrlConfigError extends SubagentContextError {
  override readonly name = 'DatabaseUrlConfigError';
  constructor(
    message: string,
    /** where the URL came from: `--database-url`, `DATABASE_URL` or the SSM parameter's name */
    readonly parameterName: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Where a database URL came from, as the error names it: a flag, an environment variable, an SSM parameter. */
export type DatabaseUrlSource =
  | { kind: 'flag'; name: string }
  | { kind: 'env'; name: string }
  | { kind: 'ssm'; name: string };

/** `--database-url`, `DATABASE_URL`, `SSM parameter "/x/database-url"`: how a person finds the value to fix. */
export function describeSource(source: DatabaseUrlSource): string {
  return source.kind === 'ssm' ? `SSM parameter "${source.name}"` : source.name;
}

/** A scheme as a URL starts (`mysql://`): the only part of a rejected value ever quoted. */
const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/**
 * Refuses a database URL this project cannot open, naming where it came from (`source`) so the
 * person can fix it there. R2-6: the value is never quoted; of a value that is a URL only its scheme
 * is shown (`mysql://…`), and a value that is not a URL (a bare password, `PGPASSWORD=…`,
 * `host=db password=…`) is described, not shown.
 */
export function checkDatabaseUrl(url: string, source: DatabaseUrlSource): void {
  const where = describeSource(source);
  // issue 51: `sqlite://tmp/x.db` reads as a URL with the host "tmp"; the path it opened (/tmp/x.db)
  // was a guess, so the form is refused with the two that say what they mean
  if (/^sqlite:\/\/[^/]/.test(url))
    throw new DatabaseUrlConfigError(
      `${where}: a sqlite: URL with two slashes would name a host (sqlite://<host>/…); write sqlite:<path>: sqlite:/abs/path.db (or sqlite:///abs/path.db) for an absolute path, sqlite:./path.db for one relative to this folder`,
      source.name,
    );
  if (databaseKind(url) !== undefined) return;
  // issue 51: a file path (or a file: URL) is a SQLite store meant as one: say the form that opens it
  const path = /^(?:file:(?:\/\/)?)?((?:\/|\.\.?\/|~\/)[^\s=@]*|[^\s=@:/]+\.(?:db|sqlite3?))$/.exec(url)?.[1];
  if (path !== undefined)
    throw new DatabaseUrlConfigError(
      `${where} must start with postgres://, postgresql:// or sqlite:; for a SQLite store write sqlite:${path}`,
      source.name,
    );
  const scheme = URL_SCHEME.exec(url)?.[1];
  const got = url === '' ? 'it is empty' : scheme ? `got "${scheme}://…"` : 'the value is not a URL and is not shown';
  throw new DatabaseUrlConfigError(
    `${where} must start with postgres://, postgresql:// or sqlite: (${got}); see README "Configuration"`,
    source.name,
  );
}

/**
 * SSM GetParameter WithDecryption through a signed fetch (lib/aws/json-protocol.ts) instead of
 * @aws-sdk/client-ssm, whose ~560 KiB (with @smithy/core) every cold start paid even when
 * DATABASE_URL was set. Honours AWS_REGION and AWS_ENDPOINT_URL_SSM like the SDK.
 */
export const readSsmParameter: ParameterReader = async (name) => {
  const out = await callAwsJson<{ Parameter?: { Value?: string } }>({
    service: 'ssm',
    target: 'AmazonSSM.GetParameter',
    jsonVersion: '1.1',
    body: { Name: name, WithDecryption: true },
    timeoutMs: 3000, // R2-5: a silent SSM endpoint costs ~10 s over three attempts, not 30
  });
  const value = out.Parameter?.Value;
  if (!value) throw new Error('the parameter has no value');
  return value;
};

/** one fetch per environment (in Lambda: per cold start, or after an authentication failure) */
const loading = new WeakMap<NodeJS.ProcessEnv, Promise<void>>();
/** the value this module put in DATABASE_URL, per environment: only that one is ever forgotten */
const fetchedUrl = new WeakMap<NodeJS.ProcessEnv, string>();

/**
 * Makes DATABASE_URL available to `databaseFromEnv()`. The deployed functions get only the NAME
 * of an SSM SecureString (the secret must never be in the CloudFormation template or the Lambda
 * configuration), so it is fetched once per cold start and kept in the process environment.
 * An explicitly set DATABASE_URL always wins (local runs, the CLI, tests). Concurrent callers
 * share one fetch; a failed fetch is not cached, so the next invocation retries.
 */
export function loadDatabaseUrl(
  options: { env?: NodeJS.ProcessEnv; readParameter?: ParameterReader } = {},
): Promise<void> {
  const env = options.env ?? process.env;
  if (env.DATABASE_URL) {
    if (fetchedUrl.get(env) !== env.DATABASE_URL)
      return checked(env.DATABASE_URL, { kind: 'env', name: 'DATABASE_URL' });
    return Promise.resolve();
  }
  const name = env[DATABASE_URL_PARAMETER_ENV];
  if (!name) return Promise.resolve(); // databaseFromEnv() then explains what to set
  const read = options.readParameter ?? readSsmParameter;
  const pending = loading.get(env);
  if (pending) return pending;
  const fetched = read(name).then(
    (url) => {
      loading.delete(env); // only in-flight fetches are shared; a forgotten URL is fetched again
      if (env.DATABASE_URL) return;
      checkDatabaseUrl(url, { kind: 'ssm', name });
      env.DATABASE_URL = url;
      fetchedUrl.set(env, url);
    },
    (err: unknown) => {
      loading.delete(env);
      throw new DatabaseUrlConfigError(
        `could not read DATABASE_URL from SSM parameter "${name}" (${(err as Error)?.message ?? err}): ` +
          'create it as a SecureString (README "Deploying") and check the function role may ssm:GetParameter and kms:Decrypt it',
        name,
        { cause: err },
      );
    },
  );
  loading.set(env, fetched);
  return fetched;
}

function checked(url: string, source: DatabaseUrlSource): Promise<void> {
  try {
    checkDatabaseUrl(url, source);
    return Promise.resolve();
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * After the database rejected the credentials (SQLSTATE 28xxx) or did not know the database (3D000),
 * R2-4: forget the URL read from SSM, so the next `loadDatabaseUrl()` reads the parameter again and
 * picks up a rotated or corrected secret.
 * A DATABASE_URL set explicitly (not read from SSM) is left alone. Returns whether it forgot.
 */
export function forgetDatabaseUrl(env: NodeJS.ProcessEnv = process.env): boolean {
  const url = fetchedUrl.get(env);
  fetchedUrl.delete(env);
  loading.delete(env);
  if (url === undefined || env.DATABASE_URL !== url) return false;
  delete env.DATABASE_URL;
  return true;
}

/**
 * Runs `fn` (a migrate or health invocation); when it fails because the URL may be stale (errors.ts `urlMayBeStale`),
 * forgets the SSM-read URL before rethrowing, so the next invocation reads the secret again.
 */
export async function refreshingCredentials<T>(fn: () => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (urlMayBeStale(failureFields(err))) forgetDatabaseUrl(env);
    throw err;
  }
}
