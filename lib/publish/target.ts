import { SubagentContextError } from '../errors.js';
import { terminalSafe } from '../terminal-text.js';

/*
 * Where a run publishes (R5-6, docs/publish.md#what-is-where): `s3://BUCKET/PREFIX`, and the key
 * layout under it. One home for both, so the CLI, the function and the role's policy
 * (infra/publish.yml grants `PREFIX/*`) agree on every key.
 */

export class PublishTargetError extends SubagentContextError {
  override readonly name = 'PublishTargetError';
}

export interface PublishTarget {
  bucket: string;
  /** without a leading or trailing slash; '' puts the keys at the bucket's root */
  prefix: string;
}

/** S3's bucket naming rules (general purpose buckets): 3-63 of a-z 0-9 . -, a letter or digit at each end. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** S3 keys are at most 1,024 bytes; the layout adds `/YYYY-MM-DD/HHMMSSZ/report.json` (30). */
const MAX_PREFIX_BYTES = 900;

/** `s3://bucket/some/prefix/` → { bucket, prefix: 'some/prefix' }; a bad URL says what it takes. */
export function parseS3Url(raw: string): PublishTarget {
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(raw);
  const example = 's3://my-reports-bucket/subagents';
  if (m === null)
    throw new PublishTargetError(`needs an s3://BUCKET/PREFIX URL, e.g. ${example} (got "${terminalSafe(raw)}")`);
  const bucket = m[1]!;
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new PublishTargetError(
      `"${terminalSafe(bucket)}" is not an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens, a letter or digit at each end), e.g. ${example}`,
    );
  // one trailing slash is a folder's usual spelling; any other empty segment (`s3://b//x`, `a//b`)
  // is refused alike (issue 57 #13), never dropped
  const given = m[2] ?? '';
  const prefix = given.endsWith('/') ? given.slice(0, -1) : given;
  if (given !== '' && prefix.split('/').some((part) => part === '' || part === '.' || part === '..'))
    throw new PublishTargetError(
      `the prefix "${terminalSafe(given)}" has an empty, "." or ".." segment: give folder names separated by single slashes, e.g. ${example}`,
    );
  // C0, DEL, C1 and the bidi controls (R4-2's set): a key holding one prints as something else
  if (terminalSafe(prefix) !== prefix)
    throw new PublishTargetError(
      `the prefix "${terminalSafe(prefix)}" holds a control or bidi character: give printable folder names`,
    );
  if (Buffer.byteLength(prefix) > MAX_PREFIX_BYTES)
    throw new PublishTargetError(`the prefix is longer than ${MAX_PREFIX_BYTES} bytes: S3 keys hold at most 1,024`);
  return { bucket, prefix };
}

export const PAGE_FILE = 'index.html';
export const DOCUMENT_FILE = 'report.json';

/** A run's two folders: the dated one (UTC, the run's start) and latest/. */
export interface PublishFolders {
  dated: string;
  latest: string;
}

const two = (n: number) => String(n).padStart(2, '0');

/** `PREFIX/YYYY-MM-DD/HHMMSSZ/` and `PREFIX/latest/` for a run started at `startedAt`. */
export function foldersFor(prefix: string, startedAt: Date): PublishFolders {
  const under = prefix === '' ? '' : `${prefix}/`;
  const d = startedAt;
  const day = `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
  const time = `${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}Z`;
  return { dated: `${under}${day}/${time}/`, latest: `${under}latest/` };
}

/** `s3://bucket/key`, for messages (never a URL that could carry a signature). */
export const s3Url = (bucket: string, key: string) => `s3://${bucket}/${key}`;
