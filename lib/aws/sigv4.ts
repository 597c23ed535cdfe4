import { createHash, createHmac } from 'node:crypto';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignableRequest {
  method: 'POST';
  url: URL;
  /** lower-case names; `host`, `x-amz-date`, `x-amz-content-sha256` and the session token are added */
  headers: Record<string, string>;
  body: string;
}

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * AWS Signature Version 4 for one JSON-protocol request (a POST to `/` without a query string),
 * the part of the AWS SDK the functions need (lib/aws/json-protocol.ts). Returns every header to
 * send. The test signs the same request with the SDK's own signer and expects the same signature.
 */
export function signRequest(
  request: SignableRequest,
  scope: { service: string; region: string; credentials: AwsCredentials },
  now: Date = new Date(),
): Record<string, string> {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const payloadHash = sha256Hex(request.body);
  // x-amz-content-sha256 as the SDK's signer sends it (applyChecksum), so requests look the same.
  const headers: Record<string, string> = {
    ...request.headers,
    host: request.url.host,
    'x-amz-content-sha256': payloadHash,
    'x-amz-date': amzDate,
  };
  if (scope.credentials.sessionToken) headers['x-amz-security-token'] = scope.credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const signedHeaders = names.join(';');
  const canonical = [
    request.method,
    request.url.pathname || '/',
    '', // no query string
    ...names.map((name) => `${name}:${headers[name]!.trim().replace(/\s+/g, ' ')}`),
    '',
    signedHeaders,
    payloadHash,
  ].join('\n');
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, credentialScope, sha256Hex(canonical)].join('\n');
  let key = hmac(`AWS4${scope.credentials.secretAccessKey}`, day);
  for (const part of [scope.region, scope.service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${scope.credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}
