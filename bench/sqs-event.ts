import { createHash } from 'node:crypto';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { QueuedFrame } from './frames.js';

const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:subagent-context-frames.fifo';

/**
 * One delivery as Lambda's SQS event source would hand it over: FIFO records with their group id,
 * a deduplication id from the content and receive attributes. `sequence` numbers the first record.
 */
export function toSqsEvent(frames: readonly QueuedFrame[], sequence: number): SQSEvent {
  return { Records: frames.map((frame, i) => record(frame, sequence + i)) };
}

function record(frame: QueuedFrame, sequence: number): SQSRecord {
  const md5 = createHash('md5').update(frame.body).digest('hex');
  const sent = String(1_786_525_200_000 + sequence);
  return {
    messageId: `00000000-0000-4000-8000-${sequence.toString(16).padStart(12, '0')}`,
    receiptHandle: `bench-${sequence}`,
    body: frame.body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: sent,
      SenderId: 'AIDABENCHMARK',
      ApproximateFirstReceiveTimestamp: sent,
      SequenceNumber: String(18_000_000_000_000_000_000n + BigInt(sequence)),
      MessageGroupId: frame.groupId,
      MessageDeduplicationId: createHash('sha256').update(frame.body).digest('hex'),
    },
    messageAttributes: {},
    md5OfBody: md5,
    eventSource: 'aws:sqs',
    eventSourceARN: QUEUE_ARN,
    awsRegion: 'us-east-1',
  };
}
