import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PUBLISH_DEFAULTS } from '../defaults.js';
import { SubagentContextError } from '../errors.js';
import { s3Url } from './target.js';

/*
 * The S3 side of a publish (R5-6): the SDK's client, configured by the SDK itself (region,
 * credentials, and the endpoint from AWS_ENDPOINT_URL_S3: the local stack reaches fauxqs' S3 with
 * no variable of ours; an IP endpoint is addressed path-style by the SDK's own rules), bounded in
 * time, and its failures worded for the operator: which bucket, which action on which keys, what
 * to change. A message never holds a presigned URL or a credential (lib/errors.ts redacts anyway).
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
}

/** The SDK's client with the run's bounds; everything else from the SDK's own configuration. */
export function createS3Client(bounds: S3Bounds = {}): S3Client {
  return new S3Client({
    maxAttempts: bounds.maxAttempts ?? PUBLISH_DEFAULTS.maxAttempts,
    // a bucket in another region than AWS_REGION is still written (S3 names its region)
    followRegionRedirects: true,
    requestHandler: {
      connectionTimeout: bounds.connectTimeoutMs ?? PUBLISH_DEFAULTS.connectTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs ?? PUBLISH_DEFAULTS.requestTimeoutMs,
    },
  });
}

/** The endpoint as the operator configured it, for messages: the SDK's variables, else AWS's. */
export function endpointName(env: NodeJS.ProcessEnv = process.env): string {
  const custom = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  return custom
    ? `${custom} (AWS_ENDPOINT_URL_S3)`
    : `S3 in ${env.AWS_REGION || env.AWS_DEFAULT_REGION || 'the default region'}`;
}

export function s3Writer(
  client: S3Client,
  bucket: string,
  options: { prefix: string; requestTimeoutMs?: number; env?: NodeJS.ProcessEnv },
): ObjectWriter {
  const timeoutMs = options.requestTimeoutMs ?? PUBLISH_DEFAULTS.requestTimeoutMs;
  return {
    async put(request) {
      try {
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
          { abortSignal: AbortSignal.timeout(timeoutMs) },
        );
      } catch (err) {
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
const NO_ANSWER = new Set([
  'ETIMEDOUT',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNREFUSED',
  'EHOSTUNREACH',
]);

function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** An SDK failure as a PublishError naming the bucket, the action, the keys and the fix. */
export function s3Failure(err: unknown, at: S3FailureContext): PublishError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const name = e?.name ?? 'Error';
  const message = e?.message ?? String(err);
  const status = e?.$metadata?.httpStatusCode;
  const where = s3Url(at.bucket, at.key);
  const keys = `arn:aws:s3:::${at.bucket}/${at.prefix === '' ? '' : `${at.prefix}/`}*`;
  const endpoint = endpointName(at.env);
  const answered = `S3 answered ${name}${status === undefined ? '' : ` (HTTP ${status})`}`;
  let text: string;
  if (name === 'NoSuchBucket')
    text = `the bucket "${at.bucket}" does not exist at ${endpoint} (${answered} to ${at.action} of ${where}): create it (a deployed stack's bucket is its PublishBucketName output), or name an existing one`;
  else if (name.startsWith('KMS.') || /\bkms:/i.test(message) || /\bKMS\b/.test(message))
    text = `the bucket's KMS key refused the write of ${where} (${answered}: ${message}): let the caller use the bucket's key (kms:GenerateDataKey and kms:Decrypt; deployed: the publish role, infra/publish.yml) and check the key is enabled`;
  else if (name === 'AccessDenied' || name === 'Forbidden' || status === 403)
    text = `access denied: ${at.action} of ${where} (${answered}): allow ${at.action} on ${keys} for the caller (deployed: the publish role may write only there; docs/publish.md#who-can-write-and-read)`;
  else if (
    name === 'AbortError' ||
    name === 'TimeoutError' ||
    name === 'RequestTimeout' ||
    NO_ANSWER.has(codeOf(err) ?? '')
  )
    text = `the S3 endpoint ${endpoint} did not answer ${at.action} of ${where}${at.timeoutMs === undefined ? '' : ` within ${at.timeoutMs / 1000} s`} (${codeOf(err) ?? name}): check the endpoint (unset AWS_ENDPOINT_URL_S3 for AWS itself) and that the network reaches it`;
  else if (/region is missing/i.test(message))
    text = "no AWS region: set AWS_REGION to the bucket's region (e.g. AWS_REGION=eu-west-1)";
  else if (name === 'CredentialsProviderError')
    text = `no AWS credentials for ${at.action} of ${where} (${message}): set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or log in (aws sso login)`;
  else text = `${answered} to ${at.action} of ${where}: ${message}`;
  return new PublishError(text, { cause: err });
}
