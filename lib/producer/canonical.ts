import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth: equal frames give equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** SQS FIFO deduplication id: SHA-256 of the canonical frame (64 hex chars, within SQS's 128). */
export function deduplicationId(frame: unknown): string {
  return createHash('sha256').update(canonicalJson(frame)).digest('hex');
}
