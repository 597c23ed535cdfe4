import { SendMessageBatchCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { messageSize, packBatches } from '../queue/pack.js';

/** Why a record was parked: the `failure` message attribute, for filtering the DLQ. */
export type ParkKind = 'invalid_frame' | 'permanent_write_error';

export interface Parcel {
  record: SQSRecord;
  kind: ParkKind;
  /** what a person must fix; the `reason` message attribute */
  reason: string;
}

/** SQS allows 256 KiB per attribute value, but a reason longer than this helps nobody. */
const MAX_REASON_CHARS = 4096;

function attributesFor(parcel: Parcel): Record<string, MessageAttributeValue> {
  return {
    reason: { DataType: 'String', StringValue: parcel.reason.slice(0, MAX_REASON_CHARS) || 'unknown' },
    failure: { DataType: 'String', StringValue: parcel.kind },
    source_message_id: { DataType: 'String', StringValue: parcel.record.messageId },
  };
}

/**
 * Sends records to the FIFO dead-letter queue: the original body unchanged, the same
 * MessageGroupId, the reason as a message attribute. The deduplication id is the source message id,
 * so parking a redelivered record again within SQS's 5-minute window does not duplicate it.
 * Returns the message ids that could NOT be parked, with why: the caller must not acknowledge those.
 */
export async function parkOnDeadLetter(sqs: SQSClient, dlqUrl: string, parcels: readonly Parcel[]): Promise<Map<string, string>> {
  const notParked = new Map<string, string>();
  if (parcels.length === 0) return notParked;
  const entries = parcels.map((parcel, i) => ({
    Id: `p${i}`,
    MessageBody: parcel.record.body,
    MessageGroupId: parcel.record.attributes.MessageGroupId ?? 'ungrouped',
    MessageDeduplicationId: parcel.record.messageId,
    MessageAttributes: attributesFor(parcel),
  }));
  const idOf = new Map(entries.map((entry, i) => [entry.Id, parcels[i]!.record.messageId]));
  const { batches, oversize } = packBatches(entries, (e) => messageSize(e.MessageBody, e.MessageAttributes));
  for (const entry of oversize) notParked.set(idOf.get(entry.Id)!, 'larger than an SQS batch can carry');
  await Promise.all(
    batches.map(async (batch) => {
      try {
        const result = await sqs.send(new SendMessageBatchCommand({ QueueUrl: dlqUrl, Entries: batch }));
        for (const failed of result.Failed ?? []) if (failed.Id) notParked.set(idOf.get(failed.Id)!, `${failed.Code}: ${failed.Message}`);
      } catch (err) {
        for (const entry of batch) notParked.set(idOf.get(entry.Id)!, (err as Error).message);
      }
    }),
  );
  return notParked;
}
