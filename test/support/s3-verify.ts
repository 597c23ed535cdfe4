import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from './sha256.js';

/*
 * What S3 checks before it serves a request, for the publish tests' S3 (test/support/s3.ts; issue
 * 58, issue 57 #1 and #6): fauxqs' S3 serves any request, signed or not, expired or not, so a
 * test through it alone cannot fail on a link that would never open. Each request is checked here
 * the way S3 checks it: the SigV4 signature recomputed with the AWS SDK's own signer
 * (@smithy/signature-v4) from the known test keys and the request as it came over the wire
 * (header-signed writes and presigned reads alike), the body against its signed hash, a presigned
 * link's X-Amz-Date + X-Amz-Expires against the clock, a session token against the instant its
 * credentials end, and the signing region against the bucket's. A request that fails is answered
 * with S3's own error code and status, and never reaches fauxqs.
 */

/** An S3 error answer: its status, code and message (and headers S3 adds, such as x-amz-bucket-region). */
export interface S3ErrorAnswer {
  status: number;
  code: string;
  message: string;
  headers?: Record<string, string>;
}

/** What the verifier knows besides the request: the keys it accepts, where buckets are, when tokens end. */
export interface S3Account {
  /** secret access key by access key id */
  secrets: ReadonlyMap<string, string>;
  /** the region a bucket lives in */
  regionOf(bucket: string): string;
  /** when the credentials a session token belongs to end (epoch ms); undefined: they do not end */
  tokenExpiry(token: string): number | undefined;
}

export interface WireRequest {
  method: string;
  /** the request target as sent: the encoded path and the query string */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** How long a header-signed request's x-amz-date may be from the server's clock (S3: 15 minutes). */
const SKEW_MS = 15 * 60_000;
/** The longest a presigned link may be signed for (S3: 7 days). */
const MAX_EXPIRES = 604_800;

const refuse = (status: number, code: string, message: string, headers?: Record<string, string>): S3ErrorAnswer => ({
  status,
  code,
  message,
  headers,
});

/** `20260812T130000Z` → its instant, or undefined when it is not one. */
export function amzDate(text: string | undefined): Date | undefined {
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(text ?? '');
  if (m === null) return undefined;
  const at = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** One header's value as the signer canonicalises it (node joins repeated headers with ", "). */
const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : (value ?? ''));

/** The query as the SDK's signer takes it: decoded names and values, a repeated name as a list. */
function parseQuery(search: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(search)) {
    const seen = Object.hasOwn(query, key) ? query[key] : undefined;
    query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return query;
}

interface Signed {
  mechanism: 'header' | 'query';
  credential: string;
  signedHeaders: string;
  signature: string;
  date: Date | undefined;
  token: string | undefined;
}

/** The signature's parts from the Authorization header or the presigned query; a refusal if malformed. */
function signatureOf(headers: IncomingHttpHeaders, query: Record<string, string | string[]>): Signed | S3ErrorAnswer {
  const authorization = headerValue(headers.authorization);
  const presigned = Object.hasOwn(query, 'X-Amz-Algorithm');
  if (authorization === '' && !presigned) return refuse(403, 'AccessDenied', 'Access Denied');
  if (authorization !== '' && presigned)
    return refuse(400, 'InvalidArgument', 'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter…');
  if (presigned) {
    const one = (name: string) => {
      const value = query[name];
      return typeof value === 'string' ? value : undefined;
    };
    const [credential, signedHeaders, signature] = [
      one('X-Amz-Credential'),
      one('X-Amz-SignedHeaders'),
      one('X-Amz-Signature'),
    ];
    if (one('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || !credential || !signedHeaders || !signature)
      return refuse(
        400,
        'AuthorizationQueryParametersError',
        'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
      );
    return {
      mechanism: 'query',
      credential,
      signedHeaders,
      signature,
      date: amzDate(one('X-Amz-Date')),
      token: one('X-Amz-Security-Token'),
    };
  }
  const m = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(
    authorization,
  );
  if (m === null) return refuse(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
  return {
    mechanism: 'header',
    credential: m[1]!,
    signedHeaders: m[2]!,
    signature: m[3]!,
    date: amzDate(headerValue(headers['x-amz-date'])),
    token: headers['x-amz-security-token'] === undefined ? undefined : headerValue(headers['x-amz-security-token']),
  };
}

/**
 * S3's answer to a request it would refuse, or undefined for one it would serve. `now`: the
 * server's clock (epoch ms).
 */
export async function verifyS3Request(
  request: WireRequest,
  account: S3Account,
  now = Date.now(),
): Promise<S3ErrorAnswer | undefined> {
  const question = request.url.indexOf('?');
  const path = question === -1 ? request.url : request.url.slice(0, question);
  const query = parseQuery(question === -1 ? '' : request.url.slice(question + 1));
  const signed = signatureOf(request.headers, query);
  if ('status' in signed) return signed;

  const [accessKeyId = '', day = '', region = '', service = '', terminal = '', ...extra] = signed.credential.split('/');
  if (service !== 's3' || terminal !== 'aws4_request' || extra.length > 0 || !/^\d{8}$/.test(day))
    return refuse(400, 'AuthorizationHeaderMalformed', `The credential "${signed.credential}" is malformed.`);
  const secretAccessKey = account.secrets.get(accessKeyId);
  if (secretAccessKey === undefined)
    return refuse(403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  const date = signed.date;
  if (date === undefined || date.toISOString().slice(0, 10).replaceAll('-', '') !== day)
    return refuse(403, 'AccessDenied', 'AWS authentication requires a valid X-Amz-Date whose day is the credential’s.');

  let expiresIn: number | undefined;
  if (signed.mechanism === 'query') {
    const text = query['X-Amz-Expires'];
    expiresIn = typeof text === 'string' && /^\d{1,7}$/.test(text) ? Number(text) : Number.NaN;
    if (!(expiresIn >= 1 && expiresIn <= MAX_EXPIRES))
      return refuse(
        400,
        'AuthorizationQueryParametersError',
        'X-Amz-Expires must be a count of seconds from 1 to 604800 (7 days).',
      );
    if (now > date.getTime() + expiresIn * 1000) return refuse(403, 'AccessDenied', 'Request has expired');
  } else if (Math.abs(now - date.getTime()) > SKEW_MS) {
    return refuse(
      403,
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    );
  }
  if (signed.token !== undefined) {
    const ends = account.tokenExpiry(signed.token);
    if (ends !== undefined && now >= ends) return refuse(400, 'ExpiredToken', 'The provided token has expired.');
  }

  // The bucket's region: a request signed for another is not served (S3 names the right one).
  const bucket = decodeURIComponent(path.split('/')[1] ?? '');
  const bucketRegion = bucket === '' ? region : account.regionOf(bucket);
  if (region !== bucketRegion)
    return refuse(
      301,
      'PermanentRedirect',
      'The bucket you are attempting to access must be addressed using the specified endpoint.',
      { 'x-amz-bucket-region': bucketRegion },
    );

  // The signature, recomputed by the SDK's signer from exactly the headers the client signed.
  const names = signed.signedHeaders.split(';');
  const headers: Record<string, string> = {};
  for (const name of names) {
    if (request.headers[name] === undefined && signed.mechanism === 'header')
      return refuse(403, 'SignatureDoesNotMatch', `The signed header "${name}" is not in the request.`);
    if (request.headers[name] !== undefined) headers[name] = headerValue(request.headers[name]);
  }
  const signer = new SignatureV4({
    service: 's3',
    region,
    credentials: { accessKeyId, secretAccessKey, sessionToken: signed.token },
    sha256: Sha256,
    uriEscapePath: false, // S3 signs the path as sent, encoded once
    applyChecksum: names.includes('x-amz-content-sha256'),
  });
  const base = { method: request.method, protocol: 'http:', hostname: 'localhost', path, headers };
  let computed: { signature: string | undefined; signedHeaders: string | undefined };
  if (signed.mechanism === 'query') {
    const { 'X-Amz-Signature': _, ...rest } = query;
    // a presigned request's payload is UNSIGNED-PAYLOAD, always: S3 reads no hash from the link
    const out = await signer.presign(
      { ...base, query: rest, headers: { ...headers, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } },
      {
        signingDate: date,
        expiresIn,
        signingRegion: region,
        signingService: 's3',
        unsignableHeaders: new Set(['x-amz-content-sha256']),
        unhoistableHeaders: new Set(['x-amz-content-sha256']),
      },
    );
    computed = {
      signature: String(out.query?.['X-Amz-Signature']),
      signedHeaders: String(out.query?.['X-Amz-SignedHeaders']),
    };
  } else {
    const hash = headers['x-amz-content-sha256'];
    if (hash?.startsWith('STREAMING-'))
      return refuse(501, 'NotImplemented', `this test S3 does not read ${hash} bodies`);
    if (
      hash !== undefined &&
      hash !== 'UNSIGNED-PAYLOAD' &&
      hash !== createHash('sha256').update(request.body).digest('hex')
    )
      return refuse(
        400,
        'XAmzContentSHA256Mismatch',
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
      );
    const out = await signer.sign(
      { ...base, query, body: request.body },
      { signingDate: date, signingRegion: region, signingService: 's3' },
    );
    const parts = /SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/.exec(String(out.headers.authorization));
    computed = { signature: parts?.[2], signedHeaders: parts?.[1] };
  }
  if (computed.signature !== signed.signature || computed.signedHeaders !== signed.signedHeaders)
    return refuse(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    );
  return undefined;
}
