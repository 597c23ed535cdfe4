import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../lib/aws/sigv4.js';
import { Sha256 } from '../../support/sha256.js';

// The AWS SDK's own signer (@smithy/signature-v4, a dependency of @aws-sdk/client-sqs) is the
// reference: the signer the functions use (aws4fetch, lib/aws/sigv4.ts) must produce the same
// Authorization for the same request, credentials and instant — query strings, session tokens and
// names outside ASCII included.
interface Scope {
  service: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

/** The SDK signs what fetch sends: the URL's path and its query string, parsed as fetch parses it. */
async function sdkSignature(
  url: URL,
  headers: Record<string, string>,
  body: string,
  scope: Scope,
  now: Date,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: scope.service,
    region: scope.region,
    credentials: scope.credentials,
    sha256: Sha256,
    applyChecksum: false, // x-amz-content-sha256 is S3's; SSM and SQS do not ask for it
  });
  const query: Record<string, string | string[]> = Object.create(null); // a key may be `valueOf`
  for (const [key, value] of url.searchParams) {
    const seen = Object.hasOwn(query, key) ? query[key] : undefined;
    query[key] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname, // as sent on the wire (percent-encoded); the signer encodes it once more, as AWS asks of every service but S3
      headers: { ...headers, host: url.host },
      body,
      query,
    },
    { signingDate: now },
  );
  return Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
}

const SSM_HEADERS = { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AmazonSSM.GetParameter' };
const NOW = new Date('2026-08-12T13:24:58.123Z');
const SCOPE: Scope = {
  service: 'ssm',
  region: 'eu-west-1',
  credentials: {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    sessionToken: 'token/with+chars=',
  },
};

describe('signRequest (AWS Signature Version 4, aws4fetch)', () => {
  it('signs an SSM GetParameter exactly as the AWS SDK does', async () => {
    const url = new URL('https://ssm.eu-west-1.amazonaws.com/');
    const body = JSON.stringify({ Name: '/subagent-context/dev/database-url', WithDecryption: true });
    const ours = await signRequest({ method: 'POST', url, headers: SSM_HEADERS, body }, SCOPE, NOW);
    const sdk = await sdkSignature(url, SSM_HEADERS, body, SCOPE, NOW);
    expect(ours.authorization).toBe(sdk.authorization);
    expect(ours['x-amz-date']).toBe('20260812T132458Z');
    expect(ours['x-amz-security-token']).toBe('token/with+chars=');
    expect(ours.host).toBeUndefined(); // fetch sets it from the URL
  });

  it.each([
    ['a query string', 'http://127.0.0.1:4566/?x=1'],
    ['several parameters, out of order', 'http://localhost:9324/?b=2&a=1&a=0'],
    ['characters to escape in the query', 'http://localhost:9324/?q=a%20b%2Bc&k=%E2%9C%93'],
    ['a path', 'https://sqs.us-east-1.amazonaws.com/000000000000/frames.fifo?Action=x'],
    ['a unicode path', 'http://localhost:9324/%C3%A9t%C3%A9/d%C3%A9j%C3%A0'],
    ['a unicode query', 'http://localhost:9324/?n%C3%A4me=v%C3%A4lue'],
  ])(
    'signs an endpoint with %s exactly as the AWS SDK does (what fetch sends is what is signed)',
    async (_what, endpoint) => {
      const url = new URL(endpoint);
      const body = JSON.stringify({ Name: '/p/ünïcödé-名前', WithDecryption: true });
      const ours = await signRequest({ method: 'POST', url, headers: SSM_HEADERS, body }, SCOPE, NOW);
      expect(ours.authorization).toBe((await sdkSignature(url, SSM_HEADERS, body, SCOPE, NOW)).authorization);
    },
  );

  it('signs a session token: with and without one, as the AWS SDK does', async () => {
    const url = new URL('https://ssm.eu-west-1.amazonaws.com/');
    for (const sessionToken of [undefined, 'IQoJb3JpZ2luX2VjEPT//////////wEaCXVzLWVhc3QtMSJGMEQCIF+token==']) {
      const scope = { ...SCOPE, credentials: { ...SCOPE.credentials, sessionToken } };
      const ours = await signRequest({ method: 'POST', url, headers: SSM_HEADERS, body: '{}' }, scope, NOW);
      expect(ours.authorization).toBe((await sdkSignature(url, SSM_HEADERS, '{}', scope, NOW)).authorization);
      expect(ours['x-amz-security-token']).toBe(sessionToken);
      expect(ours.authorization).toContain(sessionToken ? 'x-amz-security-token' : 'x-amz-date');
    }
  });

  it('agrees with the AWS SDK for any body, endpoint, query, region, credentials and session token', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.constantFrom('https://sqs.us-east-1.amazonaws.com/', 'http://127.0.0.1:4566/', 'http://localhost:9324/q/'),
        fc.dictionary(
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }),
          fc.string({ unit: 'grapheme', maxLength: 8 }),
          {
            maxKeys: 3,
          },
        ),
        fc.constantFrom('us-east-1', 'eu-west-1', 'ap-southeast-2'),
        fc.record(
          {
            accessKeyId: fc.stringMatching(/^[A-Z0-9]{16,20}$/),
            secretAccessKey: fc.stringMatching(/^[A-Za-z0-9/+]{20,40}$/),
            sessionToken: fc.stringMatching(/^[A-Za-z0-9/+=]{16,64}$/),
          },
          { requiredKeys: ['accessKeyId', 'secretAccessKey'] },
        ),
        fc.date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true }),
        async (body, endpoint, query, region, credentials, now) => {
          const url = new URL(endpoint);
          for (const [key, value] of Object.entries(query)) url.searchParams.append(key, value);
          const headers = {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'AmazonSQS.SendMessageBatch',
          };
          const scope = { service: 'sqs', region, credentials };
          const ours = await signRequest({ method: 'POST', url, headers, body }, scope, now);
          expect(ours.authorization).toBe((await sdkSignature(url, headers, body, scope, now)).authorization);
        },
      ),
      { numRuns: 100 },
    );
  });
});
