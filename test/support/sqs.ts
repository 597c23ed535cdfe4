import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type LocalSqs, startLocalSqs } from '../../local/fauxqs.js';
import { createIngestQueues, type IngestQueues } from '../../local/queues.js';

export interface TestQueues extends IngestQueues {
  readonly sqs: SQSClient;
  /** a URL on the same emulator that does not exist: sending to it fails */
  readonly missingQueueUrl: string;
  /** the emulator's endpoint (AWS_ENDPOINT_URL_SQS) */
  readonly endpoint: string;
  /** a client of its own (e.g. to add fault-injecting middleware without touching `sqs`) */
  newClient(): SQSClient;
}

let sequence = 0;

/**
 * An in-process SQS emulator (fauxqs) per test file, and a fresh FIFO queue + FIFO DLQ per test
 * (visibility timeout 1 s so failed records come back quickly; maxReceiveCount 5).
 */
export function useSqs(options: { maxReceiveCount?: number } = {}): TestQueues {
  let local: LocalSqs;
  let sqs: SQSClient;
  let current: IngestQueues | undefined;
  beforeAll(async () => {
    local = await startLocalSqs();
    sqs = local.client();
  });
  afterAll(async () => {
    await local?.stop();
  });
  beforeEach(async () => {
    current = await createIngestQueues(sqs, {
      name: `frames-${process.pid}-${++sequence}`,
      visibilityTimeoutSeconds: 1,
      maxReceiveCount: options.maxReceiveCount ?? 5,
    });
  });
  const need = () => {
    if (!current) throw new Error('queues exist only inside a test');
    return current;
  };
  return {
    get sqs() {
      return sqs;
    },
    get queueUrl() {
      return need().queueUrl;
    },
    get queueArn() {
      return need().queueArn;
    },
    get dlqUrl() {
      return need().dlqUrl;
    },
    get dlqArn() {
      return need().dlqArn;
    },
    newClient: () => local.client(),
    get endpoint() {
      return local.endpoint;
    },
    get missingQueueUrl() {
      return need().dlqUrl.replace(/[^/]+$/, 'no-such-queue.fifo');
    },
  };
}

/**
 * Receives and deletes everything visible on a queue, in FIFO order per group (a FIFO queue hands
 * out a group's next message only once the previous one is deleted).
 */
export async function takeAll(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const taken: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return taken;
    taken.push(...Messages);
    for (const m of Messages)
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
  }
}

export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return Object.values(Attributes).reduce((sum, v) => sum + Number(v), 0);
}

/** A raw message, bypassing the producer (invalid bodies, forced duplicates). */
export async function sendRaw(
  sqs: SQSClient,
  queueUrl: string,
  body: string,
  group: string,
  dedup: string,
): Promise<void> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      MessageGroupId: group,
      MessageDeduplicationId: dedup,
    }),
  );
}
