import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { SendMessageBatchClient } from '../aws/sqs.js';
import { signalAt } from '../deadline.js';
import { messageSize, packBatches } from '../queue/pack.js';
import { redactText } from '../redact.js';

/** Why a record was parked: the `failure` message attribute, for filtering the DLQ. */
export type ParkKind = 'invalid_frame' | 'permanent_write_error';

export interface Parcel {
  record: SQSRecord;
  /** fifo.ts `groupOf(record)`: the DLQ message keeps the record's group */
  group: string;
  kind: ParkKind;
  /** what a person must fix; the `reason` message attribute */
  reason: string;
}

/**
 * SQS counts body + attribute names, types and values against one limit. The frame queue is created
 * with 256 KiB (infra/queues.yml): no frame is larger than this.
 */
export const SQS_MAX_MESSAGE_BYTES = 256 * 1024;

/**
 * The dead-letter queue is created with SQS's maximum, 1 MiB (infra/queues.yml; SQS raised it from
 * 256 KiB in 2025, for SendMessageBatch's total too), so a frame of the queue's full 256 KiB is still
 * parked with `failure`, `source_message_id` and a `reason` (R2-3, issue 20 D11: parking always
 * says why); the reason is shortened only where a body would leave no room.
 */
export const DLQ_MAX_MESSAGE_BYTES = 1024 * 1024;

/** A reason longer than this helps nobody, whatever room is left. */
const MAX_REASON_CHARS = 4096;
const ELLIPSIS = '…';

/**
 * The DLQ message attributes, in order of importance, within what the body leaves of the message
 * limit (R2-3: parking always fits; the reason is shortened, the body never changed). Any frame the
 * queue accepted leaves the DLQ room for all three; only a body within bytes of the DLQ's own limit
 * (which no frame can be) would be parked alone, its reason still logged.
 */
export function attributesFor(parcel: Parcel, maxBytes = DLQ_MAX_MESSAGE_BYTES): Record<string, MessageAttributeValue> {
  let room = maxBytes - messageSize(parcel.record.body);
  const attributes: Record<string, MessageAttributeValue> = {};
  const add = (name: string, value: string): boolean => {
    const cost = messageSize('', { [name]: { DataType: 'String', StringValue: value } });
    if (value === '' || cost > room) return false;
    attributes[name] = { DataType: 'String', StringValue: value };
    room -= cost;
    return true;
  };
  if (!add('failure', parcel.kind)) return attributes;
  add('source_message_id', parcel.record.messageId);
  const overhead = messageSize('', { reason: { DataType: 'String', StringValue: '' } });
  add('reason', fitUtf8(redactText(parcel.reason).slice(0, MAX_REASON_CHARS) || 'unknown', room - overhead));
  return attributes;
}

/** `text` cut (on a code point boundary, marked with …) to at most `maxBytes` of UTF-8. */
export function fitUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const budget = maxBytes - Buffer.byteLength(ELLIPSIS, 'utf8');
  if (budget <= 0) return '';
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > budget) break;
    bytes += size;
    end += char.length;
  }
  return end === 0 ? '' : text.slice(0, end) + ELLIPSIS;
}

/**
 * Sends records to the FIFO dead-letter queue: the original body unchanged, the same message
 * group, the reason as a message attribute. The deduplication id is the source message id, so
 * parking a redelivered record again within SQS's 5-minute window does not duplicate it.
 * Returns the message ids that could NOT be parked, with why: the caller must not acknowledge those.
 */
export async function parkOnDeadLetter(
  sqs: SendMessageBatchClient,
  dlqUrl: string,
  parcels: readonly Parcel[],
  deadline?: number,
): Promise<Map<string, string>> {
  const notParked = new Map<string, string>();
  if (parcels.length === 0) return notParked;
  const entries = parcels.map((parcel, i) => ({
    Id: `p${i}`,
    MessageBody: parcel.record.body,
    MessageGroupId: parcel.group,
    MessageDeduplicationId: parcel.record.messageId,
    MessageAttributes: attributesFor(parcel),
  }));
  const idOf = new Map(entries.map((entry, i) => [entry.Id, parcels[i]!.record.messageId]));
  // SendMessageBatch's total is the DLQ's message limit too (1 MiB), not the frame queue's 256 KiB
  const { batches, oversize } = packBatches(entries, (e) => messageSize(e.MessageBody, e.MessageAttributes), {
    maxEntries: 10,
    maxBytes: DLQ_MAX_MESSAGE_BYTES,
  });
  for (const entry of oversize)
    notParked.set(
      idOf.get(entry.Id)!,
      `the body alone is larger than the dead-letter queue's ${DLQ_MAX_MESSAGE_BYTES}-byte message limit`,
    );
  await Promise.all(
    batches.map(async (batch) => {
      try {
        // R2-5: a DLQ endpoint that never answers is abandoned at the deadline (retries included).
        const result = await sqs.sendMessageBatch({ QueueUrl: dlqUrl, Entries: batch }, { signal: signalAt(deadline) });
        for (const failed of result.Failed ?? [])
          if (failed.Id) notParked.set(idOf.get(failed.Id)!, `${failed.Code}: ${failed.Message}`);
      } catch (err) {
        const why =
          (err as { code?: string }).code === 'TimeoutError' || (err as Error).name === 'AbortError'
            ? "the dead-letter queue did not answer within the invocation's remaining time"
            : (err as Error).message;
        for (const entry of batch) notParked.set(idOf.get(entry.Id)!, why);
      }
    }),
  );
  return notParked;
}
