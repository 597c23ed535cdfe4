import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3Failure } from './s3.js';

/*
 * The link the CLI prints (R5-6, docs/publish.md#how-long-a-link-lives): a SigV4 presigned GET of
 * latest/index.html, signed locally with the caller's credentials (no request is made). It opens
 * the page for `seconds` unless those credentials end sooner (a role session's link dies with the
 * session). Its own module: the scheduled function presigns nothing and does not bundle the signer.
 */

export interface SignedLink {
  url: string;
  /**
   * when S3 stops serving it: its X-Amz-Date + X-Amz-Expires, to the second (the signing instant
   * is a whole second, as X-Amz-Date holds no fraction), so the expiry printed is the link's own
   */
  expiresAt: Date;
}

/** `signedAt` (epoch ms): the signing instant, cut to its whole second; now if not given. */
export async function presignedUrl(
  client: S3Client,
  at: { bucket: string; key: string; prefix: string },
  seconds: number,
  env?: NodeJS.ProcessEnv,
  signedAt: number = Date.now(),
): Promise<SignedLink> {
  const signingDate = new Date(Math.floor(signedAt / 1000) * 1000);
  try {
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: at.bucket, Key: at.key }), {
      expiresIn: seconds,
      signingDate,
    });
    return { url, expiresAt: new Date(signingDate.getTime() + seconds * 1000) };
  } catch (err) {
    throw s3Failure(err, { action: 's3:GetObject (presigning the link)', ...at, env });
  }
}
