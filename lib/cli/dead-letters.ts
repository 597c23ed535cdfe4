import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** One message taken off the dead-letter queue, with why it is there. */
export interface DeadLetter {
  /** the line of the input file (the CLI's ingest); absent for a letter of unknown origin */
  line?: number;
  /** `invalid_frame`, `permanent_write_error` (parked by ingest) or `retries_exhausted` (moved by SQS redrive) */
  failure: string;
  reason: string;
  messageGroupId: string | undefined;
  body: string;
}

/**
 * Receives and deletes everything on a dead-letter queue. Deleting is what lets a FIFO queue hand
 * out the next message of a group; callers keep what they took (print it, write it to a file).
 * Only for local queues: a production DLQ is inspected and redriven, never drained like this.
 */
export async function drainDeadLetters(sqs: SQSClient, dlqUrl: string): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return letters;
    for (const message of Messages) {
      const attributes = message.MessageAttributes ?? {};
      const parked = attributes.failure?.StringValue;
      letters.push({
        failure: parked ?? 'retries_exhausted',
        reason:
          attributes.reason?.StringValue ??
          `redelivered ${message.Attributes?.ApproximateReceiveCount ?? 'maxReceiveCount'} times without success (transient write failures)`,
        messageGroupId: message.Attributes?.MessageGroupId,
        body: message.Body ?? '',
      });
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: dlqUrl,
        Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
}

/** Dead letters grouped by (failure, reason), most frequent first. */
export interface DeadLetterGroup {
  failure: string;
  reason: string;
  count: number;
  /** the input file's lines of these letters, when known (the CLI's ingest) */
  lines?: number[];
}

export function groupDeadLetters(letters: readonly DeadLetter[]): DeadLetterGroup[] {
  const groups = new Map<string, DeadLetterGroup>();
  for (const { failure, reason, line } of letters) {
    const key = `${failure}\u0000${reason}`;
    const group = groups.get(key) ?? { failure, reason, count: 0 };
    group.count += 1;
    if (line !== undefined) group.lines = [...(group.lines ?? []), line];
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}
