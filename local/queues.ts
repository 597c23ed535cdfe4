import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { MAX_RECEIVE_COUNT } from '../lib/defaults.js';

export interface IngestQueuesOptions {
  /** base name; `<name>.fifo` and `<name>-dlq.fifo` are created */
  name?: string;
  /** seconds a received frame stays invisible; a failed record reappears after it */
  visibilityTimeoutSeconds?: number;
  /** receives before SQS moves a frame to the DLQ */
  maxReceiveCount?: number;
}

export interface IngestQueues {
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
}

/**
 * The ingest queue pair as serverless.yml declares it: a FIFO queue whose RedrivePolicy moves a
 * frame to a FIFO dead-letter queue after maxReceiveCount receives. Idempotent (CreateQueue
 * returns an existing queue with the same attributes).
 */
export async function createIngestQueues(sqs: SQSClient, options: IngestQueuesOptions = {}): Promise<IngestQueues> {
  const name = options.name ?? 'subagent-context-frames';
  // As infra/queues.yml declares: frames up to 256 KiB (body + attributes); the DLQ 1 MiB, so a
  // frame of the queue's full size is parked with its failure and reason (R2-3).
  const dlqUrl = await createQueue(sqs, `${name}-dlq.fifo`, {
    FifoQueue: 'true',
    MaximumMessageSize: DLQ_MAX_MESSAGE_BYTES,
  });
  const dlqArn = await arnOf(sqs, dlqUrl);
  const queueUrl = await createQueue(sqs, `${name}.fifo`, {
    FifoQueue: 'true',
    MaximumMessageSize: MAX_MESSAGE_BYTES,
    VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: options.maxReceiveCount ?? MAX_RECEIVE_COUNT,
    }),
  });
  return { queueUrl, queueArn: await arnOf(sqs, queueUrl), dlqUrl, dlqArn };
}

const MAX_MESSAGE_BYTES = String(256 * 1024);
const DLQ_MAX_MESSAGE_BYTES = String(1024 * 1024);

async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string>): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no QueueUrl; check the SQS endpoint`);
  return QueueUrl;
}

async function arnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  if (!Attributes?.QueueArn) throw new Error(`no QueueArn for ${queueUrl}`);
  return Attributes.QueueArn;
}
