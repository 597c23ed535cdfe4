import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  attributesFor,
  DLQ_MAX_MESSAGE_BYTES,
  fitUtf8,
  type Parcel,
  SQS_MAX_MESSAGE_BYTES,
} from '../../../lib/ingest/dead-letter.js';
import { messageSize } from '../../../lib/queue/pack.js';

// Pure unit tests of what a parked message carries; the SQS round trip is in process-batch.test.ts.
const parcel = (body: string, reason: string): Parcel => ({
  record: { messageId: '5f1c0c9e-0000-4000-8000-000000000001', body } as SQSRecord,
  group: 's1',
  kind: 'invalid_frame',
  reason,
});

describe('dead-letter.ts: parking always fits (R2-3)', () => {
  it('R2-3: a small frame keeps its whole reason', () => {
    const attributes = attributesFor(parcel('{"version":2}', 'version must be 1'));
    expect(attributes.reason?.StringValue).toBe('version must be 1');
    expect(attributes.failure?.StringValue).toBe('invalid_frame');
    expect(attributes.source_message_id?.StringValue).toBe('5f1c0c9e-0000-4000-8000-000000000001');
  });

  it.each([SQS_MAX_MESSAGE_BYTES, SQS_MAX_MESSAGE_BYTES - 1, SQS_MAX_MESSAGE_BYTES - 150, 1])(
    'R2-3 (D11): an invalid frame of %i bytes carries failure, source_message_id and its whole reason',
    (bytes) => {
      const attributes = attributesFor(parcel('x'.repeat(bytes), 'version must be 1'));
      expect(attributes.failure?.StringValue).toBe('invalid_frame');
      expect(attributes.source_message_id?.StringValue).toBe('5f1c0c9e-0000-4000-8000-000000000001');
      expect(attributes.reason?.StringValue).toBe('version must be 1');
    },
  );

  it('R2-3: a body near the DLQ limit keeps its body and failure; the reason is shortened to what is left', () => {
    const body = 'x'.repeat(DLQ_MAX_MESSAGE_BYTES - 200);
    const attributes = attributesFor(parcel(body, 'r'.repeat(4000)));
    expect(messageSize(body, attributes)).toBeLessThanOrEqual(DLQ_MAX_MESSAGE_BYTES);
    expect(attributes.failure?.StringValue).toBe('invalid_frame');
    expect(attributes.reason?.StringValue).toMatch(/^r+…$/);
  });

  it('R2-3 (D11): for any frame the queue accepts and any reason, the parked message fits, the body is unchanged, and it says why', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: SQS_MAX_MESSAGE_BYTES }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 5000 }),
        (bodyBytes, reason) => {
          const body = 'é'.repeat(Math.floor(bodyBytes / 2));
          const p = parcel(body, reason);
          const attributes = attributesFor(p);
          expect(messageSize(p.record.body, attributes)).toBeLessThanOrEqual(DLQ_MAX_MESSAGE_BYTES);
          expect(p.record.body).toBe(body);
          expect(attributes.failure?.StringValue).toBe('invalid_frame');
          expect(attributes.reason?.StringValue).not.toBe('');
          for (const value of Object.values(attributes)) expect(value.StringValue).not.toBe('');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('R2-3: for any body up to the DLQ limit and any reason, the parked message fits it', () => {
    fc.assert(
      fc.property(fc.nat({ max: DLQ_MAX_MESSAGE_BYTES }), fc.string({ maxLength: 5000 }), (bodyBytes, reason) => {
        const body = 'x'.repeat(bodyBytes);
        expect(messageSize(body, attributesFor(parcel(body, reason)))).toBeLessThanOrEqual(DLQ_MAX_MESSAGE_BYTES);
      }),
      { numRuns: 100 },
    );
  });

  it('fitUtf8 cuts on a code point boundary and marks the cut', () => {
    expect(fitUtf8('😀😀😀', 9)).toBe('😀…'); // 4 bytes + 3 bytes of the ellipsis
    expect(fitUtf8('abc', 3)).toBe('abc');
    expect(fitUtf8('abcdef', 2)).toBe('');
    for (let max = 0; max < 20; max += 1)
      expect(Buffer.byteLength(fitUtf8('a😀é漢字'.repeat(3), max))).toBeLessThanOrEqual(max);
  });
});
