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

/**
 * The producer's SQS FIFO deduplication id: SHA-256 of the canonical frame (64 hex chars, within
 * SQS's 128). It walks the frame (JSON.stringify with a replacer recurses once per level), so it
 * is for frames a host built in memory, which its own body serialisation bounds the same way;
 * a body that is already text gets `bodyDeduplicationId`.
 */
export function deduplicationId(frame: unknown): string {
  return createHash('sha256').update(canonicalJson(frame)).digest('hex');
}

/**
 * What SQS's content-based deduplication uses (the queue has ContentBasedDeduplication, infra/queues.yml):
 * the SHA-256 of the message body's bytes. For bodies that are already text (the CLI's lines): it
 * never parses or walks them, so a body nested deeper than any recursion can go still gets an id,
 * as the ingest handler, which never walks fields it does not read, still takes it (issue 25).
 */
export function bodyDeduplicationId(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}
