import { createHash } from 'node:crypto';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/*
 * What a turn sends, as a short fingerprint (R4-8, docs/otlp.md#change-detection): SHA-256 over
 * every span's id, parent, name, times, status and attributes, first 8 bytes in hex. Two runs that would send the same spans for a turn compute the same digest, so the
 * position's record of digests tells an unchanged turn (nothing to send) from a changed one
 * (sent again), whatever changed: a row added, settled, a NULL filled, the host's completed_at.
 * The resource (service.name) is not part of it: renaming the service does not re-send history. A
 * release that changes what a span carries changes the digests: the window is sent once more.
 */

export function turnDigest(spans: readonly ReadableSpan[]): string {
  const hash = createHash('sha256');
  for (const s of spans) {
    // The attributes in the order spans.ts writes them (fixed): no sort needed.
    hash.update(
      JSON.stringify([
        s.spanContext().spanId,
        s.parentSpanContext?.spanId ?? '',
        s.name,
        s.startTime,
        s.endTime,
        s.status.code,
        s.status.message ?? '',
        s.attributes,
      ]),
    );
    hash.update('\n');
  }
  return hash.digest().subarray(0, 8).toString('hex');
}

/** A turn's key in the position's record: 8 bytes of SHA-256 over (session, turn). */
export function turnKeyDigest(taskSessionId: string, turnKey: string): string {
  return createHash('sha256')
    .update(`subagent-context/sent\u0000${taskSessionId}\u0000${turnKey}`)
    .digest()
    .subarray(0, 8)
    .toString('hex');
}
