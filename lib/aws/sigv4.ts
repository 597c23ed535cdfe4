import { AwsV4Signer } from 'aws4fetch';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignableRequest {
  method: 'POST';
  /** the URL fetch will send, query string included: it is signed as it is sent */
  url: URL;
  /** lower-case names; `x-amz-date` and the session token are added */
  headers: Record<string, string>;
  body: string;
}

/**
 * AWS Signature Version 4 for one JSON-protocol request (lib/aws/json-protocol.ts) by aws4fetch, a
 * maintained signer of ~11 KiB (WebCrypto, no dependencies) instead of a hand-written one: the
 * canonical query string, session tokens and the path encoding are its, and agree with the AWS
 * SDK's signer (test/lib/aws/sigv4.test.ts signs the same requests with @smithy/signature-v4).
 * Returns every header to send, lower-case, without `host` (fetch sets it from the URL, and that is
 * the one signed).
 */
export async function signRequest(
  request: SignableRequest,
  scope: { service: string; region: string; credentials: AwsCredentials },
  now: Date = new Date(),
): Promise<Record<string, string>> {
  const signer = new AwsV4Signer({
    method: request.method,
    url: request.url.toString(),
    headers: request.headers,
    body: request.body,
    accessKeyId: scope.credentials.accessKeyId,
    secretAccessKey: scope.credentials.secretAccessKey,
    sessionToken: scope.credentials.sessionToken,
    service: scope.service,
    region: scope.region,
    datetime: now.toISOString().replace(/[:-]|\.\d{3}/g, ''),
    // sign content-type too, as the SDK does (aws4fetch leaves it out by default)
    allHeaders: true,
  });
  const signed = await signer.sign();
  const headers: Record<string, string> = {};
  signed.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  return headers;
}
