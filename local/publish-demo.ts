import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { startFauxqs } from 'fauxqs';
import type { Queryable } from '../lib/db/database.js';
import { PUBLISH_DEFAULTS } from '../lib/defaults.js';
import { presignedUrl } from '../lib/publish/presign.js';
import { publishReport } from '../lib/publish/run.js';
import { createS3Client, s3Writer } from '../lib/publish/s3.js';
import { PAGE_FILE } from '../lib/publish/target.js';

/*
 * `npm start`'s publish (R5-6, docs/publish.md): the demo's report to fauxqs' S3 through the very
 * code path of `publish --to` and the scheduled function, configured the SDK's own way
 * (AWS_ENDPOINT_URL_S3, AWS_REGION and keys in this process's environment, as an operator sets
 * them; nothing of ours), then the printed link fetched once to check it opens the page.
 */

export const DEMO_BUCKET = 'subagent-context-demo';
export const DEMO_PREFIX = 'reports';

export interface PublishedDemo {
  /** the presigned link to latest/index.html (answers while the emulator runs) */
  url: string;
  keys: string[];
  /** the page fetched through the link is the page that was written */
  linkServesPage: boolean;
}

/**
 * What `npm start -- --serve` prints so a person can publish by hand against the local S3 (issue
 * 58 #9): the SDK's variables and the `--to` target.
 */
export interface LocalS3 {
  env: Record<'AWS_ENDPOINT_URL_S3' | 'AWS_REGION' | 'AWS_ACCESS_KEY_ID' | 'AWS_SECRET_ACCESS_KEY', string>;
  /** `s3://BUCKET/PREFIX` for publish --to */
  to: string;
}

export interface DemoPublisher {
  published: PublishedDemo;
  s3: LocalS3;
  stop(): Promise<void>;
}

export async function publishDemo(db: Queryable, options: { port?: number } = {}): Promise<DemoPublisher> {
  const server = await startFauxqs({ port: options.port ?? 0, logger: false });
  const env = {
    AWS_ENDPOINT_URL_S3: server.address,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const client = createS3Client();
  try {
    await client.send(new CreateBucketCommand({ Bucket: DEMO_BUCKET }));
    const summary = await publishReport(
      db,
      s3Writer(client, DEMO_BUCKET, { prefix: DEMO_PREFIX }),
      {
        bucket: DEMO_BUCKET,
        prefix: DEMO_PREFIX,
      },
      { graceSeconds: 0 },
    );
    const key = `${summary.latest}${PAGE_FILE}`;
    const { url } = await presignedUrl(
      client,
      { bucket: DEMO_BUCKET, key, prefix: DEMO_PREFIX },
      PUBLISH_DEFAULTS.urlSeconds,
    );
    const served = await fetch(url);
    const page = summary.objects.find((o) => o.key === key)!;
    const body = Buffer.from(await served.arrayBuffer());
    return {
      published: {
        url,
        keys: summary.objects.map((o) => o.key),
        linkServesPage:
          served.ok && served.headers.get('content-type') === 'text/html; charset=utf-8' && body.length === page.bytes,
      },
      s3: { env, to: `s3://${DEMO_BUCKET}/${DEMO_PREFIX}` },
      stop: async () => {
        await server.stop();
      },
    };
  } catch (err) {
    await server.stop();
    throw err;
  } finally {
    client.destroy();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
