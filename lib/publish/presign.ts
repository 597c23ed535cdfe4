import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3Failure } from './s3.js';

/*
 * The link the CLI prints (R5-6, docs/publish.md#how-long-a-link-lives): a SigV4 presigned GET of
 * latest/index.html, signed locally with the caller's credentials (no request is made). It opens
 * the page for `seconds` unless those credentials end sooner (a role session's link dies with the
 * session). Its own module: the scheduled function presigns nothing and does not bundle the signer.
 */
export async function presignedUrl(
  client: S3Client,
  at: { bucket: string; key: string; prefix: string },
  seconds: number,
  env?: NodeJS.ProcessEnv,
): Promise<string> {
  try {
    return await getSignedUrl(client, new GetObjectCommand({ Bucket: at.bucket, Key: at.key }), { expiresIn: seconds });
  } catch (err) {
    throw s3Failure(err, { action: 's3:GetObject (presigning the link)', ...at, env });
  }
}
