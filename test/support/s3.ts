import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { amzDate, type S3ErrorAnswer, verifyS3Request } from './s3-verify.js';

/*
 * fauxqs' real S3 for the publish tests (R5-6), reached through a small HTTP proxy of ours on
 * 127.0.0.1: the proxy first checks each request as S3 does (test/support/s3-verify.ts: the SigV4
 * signature recomputed by the SDK's own signer, a presigned link's expiry, a session token's end,
 * the bucket's region; fauxqs checks none of them, issue 58), answers S3's error to one that
 * fails, and forwards the rest. It records every request as it went over the wire (method, key, headers: what
 * fauxqs does not keep, such as cache-control and the tags) and can refuse the ones a test names,
 * the way S3 refuses them (a 403 AccessDenied, a KMS error), or hold them unanswered. Those are real
 * faults on the real path: the SDK, its retries and its error parsing all run. The SDK is
 * configured the way an operator would: AWS_ENDPOINT_URL_S3, AWS_REGION and keys in the
 * environment (set for the file's duration, restored after).
 */

export interface RecordedRequest {
  method: string;
  /** the path after the bucket, decoded: the object's key ('' for the bucket itself) */
  key: string;
  bucket: string;
  headers: IncomingHttpHeaders;
  /**
   * what the verifier found, once the body has arrived: `valid`, or the S3 error code it answered
   * (SignatureDoesNotMatch, AccessDenied for an expired link, PermanentRedirect for another region…)
   */
  verdict?: string;
}

export interface Refusal {
  /** which requests: method and key */
  when: (r: RecordedRequest) => boolean;
  /**
   * an S3 error document's code and status (with any headers S3 adds, such as x-amz-bucket-region;
   * `body`: a body that is not S3's XML), or 'hang': accept the request and never answer
   */
  answer: { status: number; code: string; message: string; headers?: Record<string, string>; body?: string } | 'hang';
}

export interface TestS3 {
  /** the proxy's URL, set as AWS_ENDPOINT_URL_S3 */
  readonly endpoint: string;
  /** a bucket made for the current test */
  readonly bucket: string;
  /** a client straight to fauxqs (no proxy): reads what a run left */
  readonly client: S3Client;
  /** the requests that reached the proxy since the test started */
  readonly requests: RecordedRequest[];
  refuse(refusal: Refusal): void;
  /** puts the current test's bucket in `region`: a request signed for another region is answered 301 */
  placeBucket(region: string): void;
  /** the credentials of a session token end at `at` (epoch ms): after it, S3 answers ExpiredToken */
  tokenEnds(token: string, at: number): void;
  /** every key in the bucket, sorted */
  keys(): Promise<string[]>;
  /** an object's body and headers as S3 serves it */
  get(key: string): Promise<{ body: string; contentType?: string; metadata: Record<string, string> }>;
}

/** The only keys the test S3 accepts (a request signed with others is refused, as S3 refuses it). */
export const S3_TEST_KEYS = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' } as const;

const SECRETS: ReadonlyMap<string, string> = new Map([
  [S3_TEST_KEYS.AWS_ACCESS_KEY_ID, S3_TEST_KEYS.AWS_SECRET_ACCESS_KEY],
]);

const SDK_ENV = {
  AWS_REGION: 'us-east-1',
  ...S3_TEST_KEYS,
  AWS_ENDPOINT_URL_S3: '',
} as const;

let sequence = 0;

export function useS3(): TestS3 {
  let fauxqs: Awaited<ReturnType<typeof startFauxqs>>;
  let proxy: Server;
  let endpoint = '';
  let client: S3Client;
  let bucket = '';
  const requests: RecordedRequest[] = [];
  let refusals: Refusal[] = [];
  const held = new Set<Socket>();
  const saved = new Map<string, string | undefined>();
  const regions = new Map<string, string>();
  const tokens = new Map<string, number>();
  const account = {
    secrets: SECRETS,
    regionOf: (name: string) => regions.get(name) ?? SDK_ENV.AWS_REGION,
    tokenExpiry: (token: string) => tokens.get(token),
  };

  beforeAll(async () => {
    fauxqs = await startFauxqs({ port: 0, logger: false });
    const upstream = new URL(fauxqs.address);
    proxy = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://proxy');
      const [, first = '', ...rest] = url.pathname.split('/');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        bucket: decodeURIComponent(first),
        key: decodeURIComponent(rest.join('/')),
        headers: req.headers,
      };
      requests.push(recorded);
      const refusal = refusals.find((r) => r.when(recorded));
      if (refusal?.answer === 'hang') {
        held.add(req.socket);
        req.resume();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        void verifyS3Request(
          { method: recorded.method, url: req.url ?? '/', headers: req.headers, body },
          account,
        ).then(
          (refused) => {
            recorded.verdict = refused?.code ?? 'valid';
            if (refused !== undefined) return answer(res, refused);
            if (refusal !== undefined && refusal.answer !== 'hang') return answer(res, refusal.answer);
            const forward = httpRequest(
              { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
              (up) => {
                res.writeHead(up.statusCode ?? 502, up.headers);
                up.pipe(res);
              },
            );
            forward.on('error', () => res.destroy());
            forward.end(body);
          },
          () => res.destroy(),
        );
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    for (const [name, value] of Object.entries({ ...SDK_ENV, AWS_ENDPOINT_URL_S3: endpoint })) {
      saved.set(name, process.env[name]);
      process.env[name] = value;
    }
    for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL']) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
    client = new S3Client({
      endpoint: fauxqs.address,
      region: SDK_ENV.AWS_REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: S3_TEST_KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: S3_TEST_KEYS.AWS_SECRET_ACCESS_KEY },
    });
  });
  afterAll(async () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    for (const socket of held) socket.destroy();
    client?.destroy();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await fauxqs?.stop();
  });
  beforeEach(async () => {
    requests.length = 0;
    refusals = [];
    regions.clear();
    tokens.clear();
    bucket = `reports-${process.pid}-${++sequence}`;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  return {
    get endpoint() {
      return endpoint;
    },
    get bucket() {
      return bucket;
    },
    get client() {
      return client;
    },
    requests,
    refuse: (refusal) => {
      refusals.push(refusal);
    },
    placeBucket: (region) => {
      regions.set(bucket, region);
    },
    tokenEnds: (token, at) => {
      tokens.set(token, at);
    },
    async keys() {
      const { Contents = [] } = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return Contents.map((o) => o.Key!).sort();
    },
    async get(key) {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return { body: await out.Body!.transformToString(), contentType: out.ContentType, metadata: out.Metadata ?? {} };
    },
  };
}

/** Text as XML character data (a verifier's message may quote the request). */
const xmlText = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** An S3 error document, as S3 sends it. */
function answer(res: ServerResponse, refused: Exclude<Refusal['answer'], 'hang'> | S3ErrorAnswer): void {
  const { status, code, message, headers = {} } = refused;
  const body = 'body' in refused ? refused.body : undefined;
  res.writeHead(status, {
    'content-type': body === undefined ? 'application/xml' : 'text/html',
    'x-amz-request-id': 'proxy',
    ...headers,
  });
  res.end(
    body ??
      `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlText(message)}</Message><RequestId>proxy</RequestId></Error>`,
  );
}

/** The object writes that went over the wire, in order (`PUT key`). */
export const puts = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === 'PUT' && r.key !== '').map((r) => r.key);

/** When a presigned link stops opening, by its own parameters: X-Amz-Date + X-Amz-Expires (epoch ms). */
export function linkExpiry(url: string): number {
  const query = new URL(url).searchParams;
  const signedAt = amzDate(query.get('X-Amz-Date') ?? undefined);
  if (signedAt === undefined) throw new Error(`no X-Amz-Date in ${url}`);
  return signedAt.getTime() + Number(query.get('X-Amz-Expires')) * 1000;
}
