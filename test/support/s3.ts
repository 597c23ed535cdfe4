import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/*
 * fauxqs' real S3 for the publish tests (R5-6), reached through a small HTTP proxy of ours on
 * 127.0.0.1: the proxy records every request as it went over the wire (method, key, headers: what
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
  /** every key in the bucket, sorted */
  keys(): Promise<string[]>;
  /** an object's body and headers as S3 serves it */
  get(key: string): Promise<{ body: string; contentType?: string; metadata: Record<string, string> }>;
}

const SDK_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
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
      if (refusal !== undefined) {
        req.resume();
        const { status, code, message, headers = {}, body } = refusal.answer;
        res.writeHead(status, {
          'content-type': body === undefined ? 'application/xml' : 'text/html',
          'x-amz-request-id': 'proxy',
          ...headers,
        });
        res.end(
          body ??
            `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>proxy</RequestId></Error>`,
        );
        return;
      }
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
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
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
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

/** The object writes that went over the wire, in order (`PUT key`). */
export const puts = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === 'PUT' && r.key !== '').map((r) => r.key);
