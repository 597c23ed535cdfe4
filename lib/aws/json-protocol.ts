import { type AwsCredentials, signRequest } from './sigv4.js';

/**
 * One call of an AWS JSON-protocol API (SSM's GetParameter, SQS's SendMessageBatch) with a signed
 * `fetch`: the functions need two calls, and the AWS SDK clients for them are ~450 KiB minified
 * each, most of a function's cold start (docs/security.md keeps the secret handling). Credentials
 * and region come from the environment, as Lambda provides them; the endpoint honours
 * AWS_ENDPOINT_URL_<SERVICE> and AWS_ENDPOINT_URL like the SDK (local emulators, tests).
 */
export interface JsonCall {
  service: 'ssm' | 'sqs';
  /** X-Amz-Target, e.g. AmazonSSM.GetParameter */
  target: string;
  /** application/x-amz-json-1.1 (SSM) or 1.0 (SQS) */
  jsonVersion: '1.0' | '1.1';
  body: unknown;
  env?: NodeJS.ProcessEnv;
  /** per attempt */
  timeoutMs?: number;
  /** ends the whole call, retries and backoff included (R2-5: the invocation's deadline) */
  signal?: AbortSignal;
}

/** An error answer of the service (`__type`, e.g. ParameterNotFound) or a failed request. */
export class AwsCallError extends Error {
  override readonly name = 'AwsCallError';
  constructor(
    message: string,
    readonly code: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const ATTEMPTS = 3;

export async function callAwsJson<T>(call: JsonCall): Promise<T> {
  const env = call.env ?? process.env;
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (!region)
    throw new AwsCallError(
      `${call.target}: AWS_REGION is not set (Lambda sets it; set it for local runs)`,
      'ConfigError',
      undefined,
    );
  const credentials = credentialsFrom(env, call.target);
  const url = new URL(endpointFor(call.service, region, env));
  const body = JSON.stringify(call.body);
  let last: AwsCallError | undefined;
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    if (call.signal?.aborted)
      throw new AwsCallError(
        `${call.target} to ${url.host}: out of time (${String(call.signal.reason)})`,
        'TimeoutError',
        undefined,
        { cause: last },
      );
    const headers = await signRequest(
      {
        method: 'POST',
        url,
        headers: { 'content-type': `application/x-amz-json-${call.jsonVersion}`, 'x-amz-target': call.target },
        body,
      },
      { service: call.service, region, credentials },
    );
    // fetch derives Host from the URL itself (it may not be set by hand); it is the one signed.
    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers, body, signal: attemptSignal(call) });
    } catch (err) {
      if (call.signal?.aborted)
        throw new AwsCallError(`${call.target} to ${url.host}: out of time`, 'TimeoutError', undefined, { cause: err });
      last = new AwsCallError(
        `${call.target} to ${url.host} failed: ${(err as Error).message}`,
        'NetworkError',
        undefined,
        { cause: err },
      );
      continue;
    }
    const text = await response.text();
    if (response.ok) return (text ? JSON.parse(text) : {}) as T;
    last = errorFrom(call.target, response.status, text);
    if (!retryable(response.status, last.code)) throw last;
  }
  throw last!;
}

function attemptSignal(call: JsonCall): AbortSignal {
  const perAttempt = AbortSignal.timeout(call.timeoutMs ?? 10_000);
  return call.signal ? AbortSignal.any([perAttempt, call.signal]) : perAttempt;
}

function endpointFor(service: string, region: string, env: NodeJS.ProcessEnv): string {
  return (
    env[`AWS_ENDPOINT_URL_${service.toUpperCase()}`] ||
    env.AWS_ENDPOINT_URL ||
    `https://${service}.${region}.amazonaws.com`
  );
}

function credentialsFrom(env: NodeJS.ProcessEnv, target: string): AwsCredentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new AwsCallError(
      `${target}: no AWS credentials in the environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; Lambda sets them from the function role)`,
      'CredentialsError',
      undefined,
    );
  }
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

function errorFrom(target: string, status: number, text: string): AwsCallError {
  let code = `HTTP${status}`;
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { __type?: string; message?: string; Message?: string };
    code = parsed.__type?.split('#').pop() ?? code;
    message = parsed.message ?? parsed.Message ?? message;
  } catch {
    // not JSON: keep the start of the text
  }
  return new AwsCallError(`${target} answered ${status} ${code}: ${message}`, code, status);
}

/** Server errors and throttling are worth another attempt; a 4xx answer is not. */
function retryable(status: number, code: string): boolean {
  return status >= 500 || status === 429 || /Throttl|RequestLimitExceeded|TooManyRequests/.test(code);
}
