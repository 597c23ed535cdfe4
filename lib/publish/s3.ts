import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { msUntil, signalAt } from '../deadline.js';
import { PUBLISH_DEFAULTS, PUBLISH_TIMEOUT_SECONDS } from '../defaults.js';
import { SubagentContextError } from '../errors.js';
import { describeEndpoint, peerBody, secretsOf } from '../peer.js';
import { s3Url } from './target.js';

/*
 * The S3 side of a publish (R5-6): the SDK's client, configured by the SDK itself (region,
 * credentials, and the endpoint from AWS_ENDPOINT_URL_S3: the local stack reaches fauxqs' S3 with
 * no variable of ours; an IP endpoint is addressed path-style by the SDK's own rules), bounded in
 * time, and its failures worded for the operator: which bucket, which action on which keys, what
 * to change. A message never holds a presigned URL or a credential (lib/errors.ts redacts anyway);
 * the endpoint is shown as scheme, host, port and path, and S3's own text as a peer's answer is
 * (lib/peer.ts: masked, cut, one line, terminal-safe; issue 57 #2, #7).
 */

export class PublishError extends SubagentContextError {
  override readonly name = 'PublishError';
}

export interface PutRequest {
  key: string;
  body: Buffer;
  contentType: string;
  /** user metadata (x-amz-meta-*) */
  metadata?: Record<string, string>;
  /** object tags, `k=v&k2=v2` (the lifecycle rule expires the dated copies by theirs) */
  tagging?: string;
}

/** Where a run's objects go: put one object, or fail with a PublishError that says what to fix. */
export interface ObjectWriter {
  put(request: PutRequest): Promise<void>;
}

export interface S3Bounds {
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxAttempts?: number;
  /**
   * told of each attempt that failed and will be retried, as it happens (issue 57 #21, R4-9's
   * "retries say so on stderr"): the CLI writes it to stderr, as the export does
   */
  onRetry?: (text: string) => void;
}

/** What S3 (or the network) answered an attempt, for the retry line: the status or the code. */
function attemptFailure(err: unknown): { retried: boolean; what: string } {
  const e = (err ?? {}) as SdkError;
  const status = e.$metadata?.httpStatusCode;
  const code = codeOf(err);
  const retried =
    (status !== undefined && (status >= 500 || status === 429)) ||
    (code !== undefined && (NO_ANSWER.has(code) || REFUSED.has(code)));
  const name = typeof e.name === 'string' ? e.name : 'Error';
  return { retried, what: status === undefined ? (code ?? name) : `${name} (HTTP ${status})` };
}

/** The variable that names a custom endpoint, and its value: the SDK's own order. */
function customEndpoint(env: NodeJS.ProcessEnv): { variable: string; value: string } | undefined {
  if (env.AWS_ENDPOINT_URL_S3) return { variable: 'AWS_ENDPOINT_URL_S3', value: env.AWS_ENDPOINT_URL_S3 };
  if (env.AWS_ENDPOINT_URL) return { variable: 'AWS_ENDPOINT_URL', value: env.AWS_ENDPOINT_URL };
  return undefined;
}

/**
 * A custom endpoint the SDK could not use, refused before anything runs (issue 58 #14): without a
 * scheme (`127.0.0.1:4566`) the SDK fails each request with "TypeError: Invalid URL", which read
 * as if S3 had answered.
 */
export function checkS3Endpoint(env: NodeJS.ProcessEnv = process.env): void {
  const custom = customEndpoint(env);
  if (custom === undefined) return;
  let protocol = '';
  try {
    protocol = new URL(custom.value).protocol;
  } catch {
    // not a URL at all: refused below
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new PublishError(
      `${custom.variable} ${JSON.stringify(describeEndpoint(custom.value))} is not an http(s) URL: give the scheme too, e.g. http://127.0.0.1:4566 (unset it for AWS itself)`,
    );
}

/** The SDK's client with the run's bounds; everything else from the SDK's own configuration. */
export function createS3Client(bounds: S3Bounds = {}, env: NodeJS.ProcessEnv = process.env): S3Client {
  checkS3Endpoint(env);
  const maxAttempts = bounds.maxAttempts ?? PUBLISH_DEFAULTS.maxAttempts;
  const client = new S3Client({
    maxAttempts: bounds.maxAttempts ?? PUBLISH_DEFAULTS.maxAttempts,
    // Never follow S3 to another region (issue 57 #6): the SDK would write the objects and the
    // link, signed for AWS_REGION, would never open. The redirect fails the run, naming the region.
    followRegionRedirects: false,
    requestHandler: {
      connectionTimeout: bounds.connectTimeoutMs ?? PUBLISH_DEFAULTS.connectTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs ?? PUBLISH_DEFAULTS.requestTimeoutMs,
    },
  });
  const onRetry = bounds.onRetry;
  if (onRetry !== undefined) {
    // inside the SDK's retry loop: each attempt passes here, so a failed one that is not the last
    // and that the SDK retries (a 5xx, a throttle, a connection that failed) is said as it happens
    type Middleware = Parameters<typeof client.middlewareStack.addRelativeTo>[0];
    client.middlewareStack.addRelativeTo(
      ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string; __attempt?: number }) =>
        async (args: unknown) => {
          const attempt = (context.__attempt ?? 0) + 1;
          context.__attempt = attempt;
          try {
            return await next(args);
          } catch (err) {
            const failure = attemptFailure(err);
            if (failure.retried && attempt < maxAttempts)
              onRetry(
                `S3 answered ${failure.what} to ${context.commandName ?? 'a request'} (attempt ${attempt} of ${maxAttempts}); retrying`,
              );
            throw err;
          }
        }) as unknown as Middleware,
      { relation: 'after', toMiddleware: 'retryMiddleware', name: 'sayRetries', override: true },
    );
  }
  return client;
}

/**
 * The endpoint as every output shows it (R4-9, issue 57 #2): the SDK's variable as scheme, host,
 * port and path (never its user, password or query: lib/peer.ts), else AWS's S3 in the region.
 */
export function endpointName(env: NodeJS.ProcessEnv = process.env): string {
  const custom = customEndpoint(env);
  return custom
    ? `${describeEndpoint(custom.value)} (${custom.variable})`
    : `S3 in ${configuredRegion(env) ?? 'the default region'}`;
}

const configuredRegion = (env: NodeJS.ProcessEnv) => env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined;

export function s3Writer(
  client: S3Client,
  bucket: string,
  options: {
    prefix: string;
    requestTimeoutMs?: number;
    env?: NodeJS.ProcessEnv;
    /**
     * the scheduled run's deadline (epoch ms; lib/deadline.ts): every PUT ends by then, whatever
     * its own bound (issue 57 #8), so the function logs its failure before Lambda stops it
     */
    deadline?: number;
  },
): ObjectWriter {
  const timeoutMs = options.requestTimeoutMs ?? PUBLISH_DEFAULTS.requestTimeoutMs;
  return {
    async put(request) {
      const own = AbortSignal.timeout(timeoutMs);
      const invocation = signalAt(options.deadline);
      try {
        if (invocation?.aborted || (options.deadline !== undefined && msUntil(options.deadline) === 0))
          throw outOfInvocationTime(bucket, request.key);
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: request.key,
            Body: request.body,
            ContentType: request.contentType,
            ContentLength: request.body.length,
            CacheControl: 'no-store',
            Metadata: request.metadata,
            Tagging: request.tagging,
          }),
          // one object's whole upload, retries included: an endpoint that never answers ends the run
          { abortSignal: invocation === undefined ? own : AbortSignal.any([own, invocation]) },
        );
      } catch (err) {
        if (err instanceof PublishError) throw err;
        if (invocation?.aborted && !own.aborted) throw outOfInvocationTime(bucket, request.key);
        throw s3Failure(err, {
          action: request.tagging === undefined ? 's3:PutObject' : 's3:PutObject and s3:PutObjectTagging',
          bucket,
          key: request.key,
          prefix: options.prefix,
          timeoutMs,
          env: options.env,
        });
      }
    },
  };
}

/** The scheduled run's time ran out at a write (issue 57 #8): what to change, said before Lambda stops it. */
function outOfInvocationTime(bucket: string, key: string): PublishError {
  return new PublishError(
    `the scheduled publish ran out of the invocation's time before s3:PutObject of ${s3Url(bucket, key)} was done: raise the publish function's timeout (serverless.yml functions.publish.timeout, ${PUBLISH_TIMEOUT_SECONDS} s), or find what made the run slow (the report's statements, an S3 endpoint that answers slowly)`,
  );
}

export interface S3FailureContext {
  action: string;
  bucket: string;
  key: string;
  /** the run's prefix: what a policy must grant (`PREFIX/*`) */
  prefix: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Network codes that mean the endpoint did not answer (a connect or a reply that never came). */
const NO_ANSWER = new Set(['ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH']);

/** Codes that say at once that nothing is there: no wait was spent on them, so none is named (issue 58 #14). */
const REFUSED = new Map([
  ['ECONNREFUSED', 'nothing listens there'],
  ['ENOTFOUND', 'the host name does not resolve'],
]);

function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

interface SdkError {
  name?: string;
  message?: string;
  Region?: unknown;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
  $responseBodyText?: unknown;
  body?: unknown;
}

/** What the SDK appends to a message when S3's answer was not its XML: SDK internals, not for a person. */
const SDK_HINT =
  /\s*Deserialization error: to see the raw response, inspect the hidden field \{error\}\.\$response on this object\.?/;

/** An answer the SDK could not read as S3's XML error (a proxy's HTML page, an empty 5xx), with its text if any. */
function notS3Xml(e: SdkError, message: string): { body: string } | undefined {
  if (message !== 'UnknownError' && !SDK_HINT.test(message)) return undefined;
  const body = [e.body, e.$responseBodyText].find((b): b is string => typeof b === 'string') ?? '';
  return { body };
}

/**
 * S3's own text as a message shows it (issue 57 #7, #18): masked (the endpoint's user, password and
 * query values), cut, and on one terminal-safe line (lib/peer.ts, the collectors' rule).
 */
function s3Text(text: string, env: NodeJS.ProcessEnv | undefined): string {
  const custom = customEndpoint(env ?? process.env);
  return peerBody(text, custom === undefined ? [] : secretsOf(custom.value, {}));
}

/** The region S3 names for a bucket that is not in the client's (a 301 PermanentRedirect, a wrong-region 400). */
function bucketRegion(e: SdkError): string | undefined {
  const header = e.$response?.headers?.['x-amz-bucket-region'];
  const region = typeof header === 'string' && header !== '' ? header : e.Region;
  return typeof region === 'string' && /^[a-z0-9-]{1,32}$/.test(region) ? region : undefined;
}

/** An SDK failure as a PublishError naming the bucket, the action, the keys and the fix. */
export function s3Failure(err: unknown, at: S3FailureContext): PublishError {
  const e = (err ?? {}) as SdkError;
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const status = e.$metadata?.httpStatusCode;
  const raw = typeof e.message === 'string' ? e.message : String(err);
  const unread = notS3Xml(e, raw);
  const http = status === undefined ? '' : ` (HTTP ${status})`;
  const message =
    unread === undefined
      ? s3Text(raw, at.env)
      : `a body that is not S3's XML${unread.body.trim() === '' ? '' : ` (${s3Text(unread.body, at.env)})`}`;
  const where = s3Url(at.bucket, at.key);
  const keys = `arn:aws:s3:::${at.bucket}/${at.prefix === '' ? '' : `${at.prefix}/`}*`;
  const endpoint = endpointName(at.env);
  const answered =
    unread === undefined
      ? `S3 answered ${name}${http}`
      : `the endpoint answered ${status === undefined ? '' : `HTTP ${status} `}with ${message}`;
  const region = bucketRegion(e);
  const code = codeOf(err);
  let text: string;
  if (
    region !== undefined &&
    (status === 301 || name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed')
  )
    text = `the bucket "${at.bucket}" is in ${region}, not in ${configuredRegion(at.env ?? process.env) ?? 'the default region'} (${answered} to ${at.action} of ${where}): set AWS_REGION=${region}, so the objects are written there and the link is signed for the bucket's region`;
  else if (name === 'NoSuchBucket')
    text = `the bucket "${at.bucket}" does not exist at ${endpoint} (${answered} to ${at.action} of ${where}): create it (a deployed stack's bucket is its PublishBucketName output), or name an existing one`;
  else if (name.startsWith('KMS.') || /\bkms:/i.test(message) || /\bKMS\b/.test(message))
    text = `the bucket's KMS key refused the write of ${where} (${answered}: ${message}): let the caller use the bucket's key (kms:GenerateDataKey and kms:Decrypt; deployed: the publish role, infra/publish.yml) and check the key is enabled`;
  else if (name === 'AccessDenied' || name === 'Forbidden' || status === 403)
    text = `access denied: ${at.action} of ${where} (${answered}): allow ${at.action} on ${keys} for the caller (deployed: the publish role may write only there; docs/publish.md#who-can-write-and-read)`;
  else if (code !== undefined && REFUSED.has(code))
    text = `the S3 endpoint ${endpoint} could not be reached for ${at.action} of ${where} (${code}: ${REFUSED.get(code)}): check the endpoint (unset AWS_ENDPOINT_URL_S3 for AWS itself) and that the network reaches it`;
  else if (name === 'AbortError' || name === 'TimeoutError' || name === 'RequestTimeout' || NO_ANSWER.has(code ?? ''))
    text = `the S3 endpoint ${endpoint} did not answer ${at.action} of ${where}${at.timeoutMs === undefined ? '' : ` within ${at.timeoutMs / 1000} s`} (${code ?? name}): check the endpoint (unset AWS_ENDPOINT_URL_S3 for AWS itself) and that the network reaches it`;
  else if (/region is missing/i.test(message))
    text = "no AWS region: set AWS_REGION to the bucket's region (e.g. AWS_REGION=eu-west-1)";
  else if (name === 'CredentialsProviderError')
    text = `no AWS credentials for ${at.action} of ${where} (${message}): set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or log in (aws sso login)`;
  else
    text =
      unread === undefined
        ? `${answered} to ${at.action} of ${where}: ${message}`
        : `${answered} to ${at.action} of ${where}`;
  // The cause is the SDK error as shown (name, code, its text cut): its own message can be S3's
  // whole body, which a log would otherwise repeat in the cause and both stacks (issue 57 #7).
  const cause = Object.assign(new Error(message), { name, ...(code === undefined ? {} : { code }) });
  cause.stack = `${name}: ${message}`;
  return new PublishError(text, { cause });
}
