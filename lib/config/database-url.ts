import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

/** Reads one SecureString (decrypted). Injectable so the fetch can be pointed elsewhere. */
export type ParameterReader = (name: string) => Promise<string>;

/** The environment variable that names the SSM parameter holding DATABASE_URL (serverless.yml). */
export const DATABASE_URL_PARAMETER_ENV = 'DATABASE_URL_SSM_PARAMETER';

export class DatabaseUrlConfigError extends Error {
  constructor(
    message: string,
    readonly parameterName: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUrlConfigError';
  }
}

/** SSM GetParameter WithDecryption; honours AWS_REGION and AWS_ENDPOINT_URL_SSM like every SDK client. */
export const readSsmParameter: ParameterReader = async (name) => {
  const client = new SSMClient({});
  try {
    const out = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
    const value = out.Parameter?.Value;
    if (!value) throw new Error('the parameter has no value');
    return value;
  } finally {
    client.destroy();
  }
};

/** one fetch per environment (in Lambda: per cold start) */
const loading = new WeakMap<NodeJS.ProcessEnv, Promise<void>>();

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
  if (env.DATABASE_URL) return Promise.resolve();
  const name = env[DATABASE_URL_PARAMETER_ENV];
  if (!name) return Promise.resolve(); // databaseFromEnv() then explains what to set
  const read = options.readParameter ?? readSsmParameter;
  const pending = loading.get(env);
  if (pending) return pending;
  const fetched = read(name).then(
    (url) => {
      env.DATABASE_URL ||= url;
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
