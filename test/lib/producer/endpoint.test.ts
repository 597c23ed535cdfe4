import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueEndpoint } from '../../../lib/producer/endpoint.js';
import { createFrameProducer } from '../../../lib/producer/producer.js';
import { startLocalSqs } from '../../../local/fauxqs.js';
import { frame } from '../../support/frames.js';

/* R4-11: the queue URL's host is where frames go (docs/producers.md "Which endpoint"). */
describe('R4-11: the endpoint of a queue URL', () => {
  it.each([
    [
      'an AWS URL: the SDK in its region',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/frames.fifo',
      {},
      { endpoint: undefined, region: 'eu-west-1', label: 'sqs.eu-west-1.amazonaws.com:443' },
    ],
    [
      'an AWS China URL',
      'https://sqs.cn-north-1.amazonaws.com.cn/123456789012/frames.fifo',
      {},
      { endpoint: undefined, region: 'cn-north-1', label: 'sqs.cn-north-1.amazonaws.com.cn:443' },
    ],
    [
      'a legacy AWS URL',
      'https://us-east-2.queue.amazonaws.com/123456789012/frames.fifo',
      {},
      { endpoint: undefined, region: 'us-east-2', label: 'us-east-2.queue.amazonaws.com:443' },
    ],
    [
      'an AWS URL with AWS_ENDPOINT_URL_SQS (a VPC endpoint): the label is where the SDK sends',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/frames.fifo',
      { AWS_ENDPOINT_URL_SQS: 'https://vpce-1.sqs.eu-west-1.vpce.amazonaws.com' },
      { endpoint: undefined, region: 'eu-west-1', label: 'vpce-1.sqs.eu-west-1.vpce.amazonaws.com:443' },
    ],
    [
      'fauxqs',
      'http://127.0.0.1:39071/000000000000/frames.fifo',
      { AWS_ENDPOINT_URL_SQS: 'http://elsewhere:1' },
      { endpoint: 'http://127.0.0.1:39071', region: undefined, label: '127.0.0.1:39071' },
    ],
    [
      "fauxqs's own queue URLs: a *.localhost name is this machine (RFC 6761), reached on 127.0.0.1",
      'http://sqs.us-east-1.localhost:39071/000000000000/frames.fifo',
      {},
      { endpoint: 'http://127.0.0.1:39071', region: undefined, label: 'sqs.us-east-1.localhost:39071' },
    ],
    [
      'localhost itself: 127.0.0.1, never ::1 (an emulator on IPv4 only)',
      'http://localhost:9324/000000000000/frames.fifo',
      {},
      { endpoint: 'http://127.0.0.1:9324', region: undefined, label: 'localhost:9324' },
    ],
    [
      'LocalStack',
      'http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/frames.fifo',
      {},
      {
        endpoint: 'http://sqs.us-east-1.localhost.localstack.cloud:4566',
        region: undefined,
        label: 'sqs.us-east-1.localhost.localstack.cloud:4566',
      },
    ],
    [
      'ElasticMQ without a port: the scheme default',
      'http://elasticmq/000000000000/frames.fifo',
      {},
      { endpoint: 'http://elasticmq', region: undefined, label: 'elasticmq:80' },
    ],
    [
      'user info in the URL never reaches the label',
      'https://user:hunter2@proxy.internal:8443/000000000000/frames.fifo?token=abc',
      {},
      { endpoint: 'https://proxy.internal:8443', region: undefined, label: 'proxy.internal:8443' },
    ],
  ])('R4-11: %s', (_name, url, env, expected) => {
    expect(queueEndpoint(url, env)).toEqual(expected);
  });

  it.each([
    [
      'a FIPS URL',
      'https://sqs-fips.us-east-2.amazonaws.com/123456789012/frames.fifo',
      { region: 'us-east-2', useFipsEndpoint: true, label: 'sqs-fips.us-east-2.amazonaws.com:443' },
    ],
    [
      'a dual-stack URL',
      'https://sqs.eu-west-1.api.aws/123456789012/frames.fifo',
      { region: 'eu-west-1', useDualstackEndpoint: true, label: 'sqs.eu-west-1.api.aws:443' },
    ],
    [
      'a FIPS dual-stack URL',
      'https://sqs-fips.us-gov-west-1.api.aws/123456789012/frames.fifo',
      {
        region: 'us-gov-west-1',
        useFipsEndpoint: true,
        useDualstackEndpoint: true,
        label: 'sqs-fips.us-gov-west-1.api.aws:443',
      },
    ],
    [
      'a VPC endpoint URL: the endpoint itself, signed for its region',
      'https://vpce-0a1b2c3d4e5f67890-abcdefgh.sqs.eu-west-1.vpce.amazonaws.com/123456789012/frames.fifo',
      {
        endpoint: 'https://vpce-0a1b2c3d4e5f67890-abcdefgh.sqs.eu-west-1.vpce.amazonaws.com',
        region: 'eu-west-1',
        label: 'vpce-0a1b2c3d4e5f67890-abcdefgh.sqs.eu-west-1.vpce.amazonaws.com:443',
      },
    ],
  ])('R4-11 (issue 48): %s names its region, with AWS_REGION unset', async (_name, url, expected) => {
    const target = queueEndpoint(url, {});
    expect(target).toEqual(expected);
    if (target.endpoint !== undefined) return;
    // the SDK's own resolution of that region and variant is the URL's host: where AWS expects the signature
    const client = new SQSClient({
      region: target.region,
      useFipsEndpoint: target.useFipsEndpoint ?? false,
      useDualstackEndpoint: target.useDualstackEndpoint ?? false,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    });
    const resolved = client.config.endpointProvider({
      Region: target.region,
      UseFIPS: target.useFipsEndpoint ?? false,
      UseDualStack: target.useDualstackEndpoint ?? false,
    });
    expect(resolved.url.hostname).toBe(new URL(url).hostname);
    client.destroy();
  });

  it('R4-11: a queue URL that is no URL gives no endpoint and says so', () => {
    expect(queueEndpoint('frames.fifo', {})).toEqual({ label: 'unknown (the queue URL is not a URL)' });
  });
});

describe('R4-11: the producer sends to its queue URL with no endpoint variable', () => {
  const saved = { ...process.env };
  beforeAll(() => {
    delete process.env.AWS_ENDPOINT_URL_SQS;
    delete process.env.AWS_ENDPOINT_URL;
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    process.env.AWS_ACCESS_KEY_ID = 'AKIDLOCAL';
    process.env.AWS_SECRET_ACCESS_KEY = 'local-secret-41';
  });
  afterAll(() => {
    process.env = saved;
  });

  it('R4-11: frames reach fauxqs by the queue URL alone', async () => {
    const sqs = await startLocalSqs();
    try {
      const client = sqs.client();
      const { QueueUrl } = await client.send(
        new CreateQueueCommand({
          QueueName: 'by-url.fifo',
          Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
        }),
      );
      const producer = createFrameProducer({ queueUrl: QueueUrl! });
      producer.record(frame({ tool_call_id: 'toolu_by_url' }));
      await producer.close();
      expect(producer.stats).toMatchObject({ recorded: 1, sent: 1 });
      const got = await client.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 }));
      expect(got.Messages?.map((m) => JSON.parse(m.Body!).tool_call_id)).toEqual(['toolu_by_url']);
    } finally {
      await sqs.stop();
    }
  }, 30_000);

  it("R4-11: a dropped frame's WARN (one JSON line on stderr by default) names the endpoint and no credential", async () => {
    const lines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => lines.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      const producer = createFrameProducer({ queueUrl: 'http://127.0.0.1:1/000000000000/q.fifo', maxAttempts: 1 });
      producer.record(frame());
      await producer.close();
    } finally {
      process.stderr.write = write;
    }
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 'WARN',
      message: 'subagent frames dropped by the producer',
      service: 'subagent-context-producer',
      reason: 'send_failed',
      count: 1,
      endpoint: '127.0.0.1:1',
    });
    expect(lines[0]).not.toMatch(/local-secret-41|AKIDLOCAL/);
  }, 30_000);
});
