import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../../lib/aws/sigv4.js';

// The AWS SDK's own signer (a dependency of @aws-sdk/client-sqs) is the reference: our small
// signer must produce byte-identical headers for the same request, credentials and instant.
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

const bytes = (data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : data instanceof ArrayBuffer
      ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

async function sdkSignature(
  url: URL,
  headers: Record<string, string>,
  body: string,
  scope: {
    service: string;
    region: string;
    credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  },
  now: Date,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: scope.service,
    region: scope.region,
    credentials: scope.credentials,
    sha256: Sha256,
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      headers: { ...headers, host: url.host },
      body,
      query: {},
    },
    { signingDate: now },
  );
  return Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
}

describe('signRequest (AWS Signature Version 4)', () => {
  it('signs an SSM GetParameter exactly as the AWS SDK does', async () => {
    const url = new URL('https://ssm.eu-west-1.amazonaws.com/');
    const headers = { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AmazonSSM.GetParameter' };
    const body = JSON.stringify({ Name: '/subagent-context/dev/database-url', WithDecryption: true });
    const scope = {
      service: 'ssm',
      region: 'eu-west-1',
      credentials: {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
        sessionToken: 'token/with+chars=',
      },
    };
    const now = new Date('2026-08-12T13:24:58.123Z');
    const ours = signRequest({ method: 'POST', url, headers, body }, scope, now);
    const sdk = await sdkSignature(url, headers, body, scope, now);
    expect(ours.authorization).toBe(sdk.authorization);
    expect(ours['x-amz-date']).toBe('20260812T132458Z');
    expect(ours['x-amz-security-token']).toBe('token/with+chars=');
  });

  it('agrees with the AWS SDK for any body, endpoint port, region and credentials', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.constantFrom('https://sqs.us-east-1.amazonaws.com/', 'http://127.0.0.1:4566/', 'http://localhost:9324/'),
        fc.constantFrom('us-east-1', 'eu-west-1', 'ap-southeast-2'),
        fc.record({
          accessKeyId: fc.stringMatching(/^[A-Z0-9]{16,20}$/),
          secretAccessKey: fc.stringMatching(/^[A-Za-z0-9/+]{20,40}$/),
        }),
        fc.date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true }),
        async (body, endpoint, region, credentials, now) => {
          const url = new URL(endpoint);
          const headers = {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'AmazonSQS.SendMessageBatch',
          };
          const scope = { service: 'sqs', region, credentials };
          const ours = signRequest({ method: 'POST', url, headers, body }, scope, now);
          expect(ours.authorization).toBe((await sdkSignature(url, headers, body, scope, now)).authorization);
        },
      ),
      { numRuns: 50 },
    );
  });
});
