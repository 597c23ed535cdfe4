/**
 * SQS limits for one SendMessageBatch: at most 10 entries and 256 KiB of payload in total
 * (body + message attribute names, types and values). Real SQS has since raised the per-message
 * limit; the 256 KiB batch limit is the conservative one every queue accepts.
 */
export const SQS_MAX_BATCH_ENTRIES = 10;
export const SQS_MAX_BATCH_BYTES = 256 * 1024;

export interface PackLimits {
  maxEntries: number;
  maxBytes: number;
}

export interface Packed<T> {
  /** batches in input order, each within the limits */
  batches: T[][];
  /** items that exceed `maxBytes` on their own and can never be sent */
  oversize: T[];
}

/**
 * Packs items into consecutive batches without reordering them: frames of one session must reach
 * the queue in the order they were recorded, so a batch is closed as soon as the next item does
 * not fit rather than filled with later, smaller items.
 */
export function packBatches<T>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  limits: PackLimits = { maxEntries: SQS_MAX_BATCH_ENTRIES, maxBytes: SQS_MAX_BATCH_BYTES },
): Packed<T> {
  const batches: T[][] = [];
  const oversize: T[] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (size > limits.maxBytes) {
      oversize.push(item);
      continue;
    }
    if (current.length === limits.maxEntries || bytes + size > limits.maxBytes) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return { batches, oversize };
}

/** The bytes SQS counts for a message: UTF-8 body plus each attribute's name, type and value. */
export function messageSize(
  body: string,
  attributes: Record<string, { DataType?: string; StringValue?: string }> = {},
): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of Object.entries(attributes)) {
    size +=
      Buffer.byteLength(name, 'utf8') +
      Buffer.byteLength(value.DataType ?? '', 'utf8') +
      Buffer.byteLength(value.StringValue ?? '', 'utf8');
  }
  return size;
}
