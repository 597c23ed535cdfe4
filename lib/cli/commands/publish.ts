import type { Queryable } from '../../db/database.js';
import { PUBLISH_DEFAULTS } from '../../defaults.js';
import { presignedUrl } from '../../publish/presign.js';
import { type PublishSummary, publishReport } from '../../publish/run.js';
import { createS3Client, endpointName, PublishError, s3Writer } from '../../publish/s3.js';
import { PAGE_FILE, type PublishTarget, PublishTargetError, parseS3Url } from '../../publish/target.js';
import { EXIT } from '../exit-codes.js';
import { countFlag } from '../flags.js';
import type { CommandResult } from '../io.js';
import { UsageError } from '../usage-error.js';

/** The flags `publish` reads, as parseArgs gives them. */
export interface PublishFlags {
  to?: string;
  'url-seconds'?: string;
}

export interface PublishRequest {
  target: PublishTarget;
  urlSeconds: number;
}

/** `publish --json`: what the run wrote, and the link to latest/index.html. */
export interface PublishResult extends PublishSummary {
  /** a presigned GET of latest/index.html */
  url: string;
  /** when the link stops opening the page: --url-seconds, or the signing credentials' end if sooner */
  url_expires_at: string;
  /** `credentials` when the signing credentials end before --url-seconds would (issue 57 #1) */
  url_expires_with: 'url-seconds' | 'credentials';
}

/** Flags → the run's target and the link's lifetime; a bad flag is a usage error naming it (exit 2). */
export function parsePublishFlags(flags: PublishFlags): PublishRequest {
  if (flags.to === undefined || flags.to === '')
    throw new UsageError('publish needs --to s3://BUCKET/PREFIX: the bucket and the folder the report goes to');
  let target: PublishTarget;
  try {
    target = parseS3Url(flags.to);
  } catch (err) {
    if (err instanceof PublishTargetError) throw new UsageError(`--to ${err.message}`);
    throw err;
  }
  const max = PUBLISH_DEFAULTS.maxUrlSeconds;
  const urlSeconds = countFlag('--url-seconds', flags['url-seconds'], 'seconds') ?? PUBLISH_DEFAULTS.urlSeconds;
  if (urlSeconds > max)
    throw new UsageError(
      `--url-seconds is at most ${max} (7 days: the longest a presigned S3 link lives; got "${flags['url-seconds']}")`,
    );
  return { target, urlSeconds };
}

const bytes = (n: number) => n.toLocaleString('en-US');

/** How long, in the largest unit that divides it: 3600 → "1 hour". */
function lifetime(seconds: number): string {
  for (const [unit, size] of [
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size} ${unit}${seconds === size ? '' : 's'}`;
  }
  return `${seconds} seconds`;
}

/**
 * When the signing credentials end (issue 57 #1): a role session's, SSO's or
 * AWS_CREDENTIAL_EXPIRATION's `expiration`, as the SDK's credential provider gives it; undefined
 * for long-term keys. A link signed with them dies then, whatever X-Amz-Expires says.
 */
async function credentialsExpiry(client: ReturnType<typeof createS3Client>): Promise<number | undefined> {
  const identity = await client.config.credentials();
  const at = identity.expiration?.getTime();
  return at === undefined || Number.isNaN(at) ? undefined : at;
}

/** The link without any user:password of the endpoint's (R2-6): its signature is what opens it. */
function withoutUserinfo(url: string): string {
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

/**
 * `subagent-context publish --to s3://BUCKET/PREFIX` (R5-6, docs/publish.md): the report's page
 * and JSON to S3 (lib/publish/run.ts, the scheduled function's code path), then a presigned link to
 * latest/index.html. Read-only on the database. The result is data (printed unredacted): the link's
 * signature is what opens it, and it goes to stdout only, never to a log.
 */
export async function publishCommand(
  db: Queryable,
  request: PublishRequest,
  ctx: { graceSeconds?: number; env?: NodeJS.ProcessEnv; say?: (line: string) => void },
): Promise<CommandResult<PublishResult>> {
  const { target } = request;
  const client = createS3Client({ onRetry: ctx.say });
  try {
    const writer = s3Writer(client, target.bucket, { prefix: target.prefix, env: ctx.env });
    const summary = await publishReport(db, writer, target, { graceSeconds: ctx.graceSeconds });
    // The link lives the shorter of --url-seconds and the signing credentials (issue 57 #1): it is
    // signed for that long, and the expiry printed is the one it has.
    const expiry = await credentialsExpiry(client);
    // one instant for both: the whole second the link is signed at (X-Amz-Date has no fraction), so
    // the printed expiry is its X-Amz-Date + X-Amz-Expires and never after the credentials' end
    const signedAt = Math.floor(Date.now() / 1000) * 1000;
    const credentialSeconds = expiry === undefined ? undefined : Math.floor((expiry - signedAt) / 1000);
    if (credentialSeconds !== undefined && credentialSeconds < 1)
      throw new PublishError(
        `the report was published, but the credentials that would sign its link expired at ${new Date(expiry!).toISOString()}: renew them (aws sso login, a new role session) and run publish again for a link`,
      );
    const short = credentialSeconds !== undefined && credentialSeconds < request.urlSeconds;
    const seconds = short ? credentialSeconds : request.urlSeconds;
    const link = await presignedUrl(
      client,
      { bucket: target.bucket, key: `${summary.latest}${PAGE_FILE}`, prefix: target.prefix },
      seconds,
      ctx.env,
      signedAt,
    );
    const url = withoutUserinfo(link.url);
    const result: PublishResult = {
      ...summary,
      url,
      url_expires_at: link.expiresAt.toISOString(),
      url_expires_with: short ? 'credentials' : 'url-seconds',
    };
    const written = summary.objects.map((o) => `  s3://${target.bucket}/${o.key} (${bytes(o.bytes)} bytes)`);
    const text = [
      `published the report generated ${summary.generated_at} to ${endpointName(ctx.env)}:`,
      ...written,
      `completeness: ${summary.completeness}`,
      short
        ? `the page, for ${lifetime(seconds)} (until ${result.url_expires_at}, when the credentials that signed the link expire; --url-seconds asked for ${lifetime(request.urlSeconds)}: sign with longer-lived credentials for that):`
        : `the page, for ${lifetime(seconds)} (until ${result.url_expires_at}):`,
      url,
    ].join('\n');
    return { exitCode: EXIT.ok, result, text, data: true };
  } finally {
    client.destroy();
  }
}
