import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFrame } from '../../../lib/frame/parse.js';
import { deduplicationId } from '../../../lib/producer/canonical.js';
import { DROP_REASONS } from '../../../lib/producer/drop-log.js';
import {
  messageGroupId,
  NEVER_STORED,
  NO_SESSION_GROUP,
  sizeLowerBound,
  sqsSafeJson,
  storedPart,
  toWireMessage,
} from '../../../lib/producer/wire.js';
import { frame } from '../../support/frames.js';

/** SQS's rule for a message body (docs/producers.md). */
const SQS_ACCEPTS = /^[\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

/** Any UTF-16 text, including unpaired surrogates, U+FFFE/U+FFFF and control characters. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 20 }).map((codes) => String.fromCharCode(...codes)),
  fc.constantFrom('\uFFFF', '\uFFFE', '\uD800', 'a\uDC00b', '\u0000\u0001\u001F', '😀', '\uD83D'),
);

describe('P1: the producer sends what is stored', () => {
  it('P1: prompt, result_text and output_file are removed; the host object is untouched', () => {
    const f = frame({
      subagent_task: {
        prompt: 'secret prompt',
        result_text: 'r'.repeat(300 * 1024),
        output_file: '/tmp/o',
        model: 'm1',
      },
    });
    const before = structuredClone(f);
    const stored = storedPart(f) as { subagent_task: Record<string, unknown> };
    expect(f).toEqual(before);
    expect(Object.keys(stored.subagent_task).sort()).toEqual(['model', 'subagent_type']);
    expect(JSON.parse(toWireMessage(f).body)).toEqual(stored);
    expect(storedPart('not an object')).toBe('not an object');
    expect(storedPart(frame())).toEqual(frame());
  });

  it("P1: a frame's message does not depend on its never-stored fields (size, body, deduplication id)", () => {
    fc.assert(
      fc.property(fc.subarray([...NEVER_STORED]), fc.string({ maxLength: 2000 }), (fields, text) => {
        const plain = frame({ subagent_task: { model: 'm' } });
        const noisy = frame({ subagent_task: { model: 'm', ...Object.fromEntries(fields.map((k) => [k, text])) } });
        expect(toWireMessage(noisy)).toEqual(toWireMessage(plain));
      }),
    );
  });

  it('P1: the body holds only characters SQS accepts and parses back to the stored frame, whatever the text', () => {
    fc.assert(
      fc.property(hostileText, hostileText, (description, session) => {
        const f = frame({ task_session_id: session, subagent_task: { description, result_text: description } });
        const { body } = toWireMessage(f);
        expect(body).toMatch(SQS_ACCEPTS);
        expect(JSON.parse(body)).toEqual(JSON.parse(JSON.stringify(storedPart(f))));
      }),
    );
  });

  it('P1: U+FFFE and U+FFFF become JSON escapes (JSON.stringify leaves them as they are)', () => {
    expect(JSON.stringify('a\uFFFFb')).toBe('"a\uFFFFb"');
    expect(sqsSafeJson({ d: 'a\uFFFF\uFFFEb\uD800' })).toBe('{"d":"a\\uffff\\ufffeb\\ud800"}');
  });

  it('P6: MessageGroupId is task_session_id; absent, empty or refused by SQS → a fixed group or its SHA-256', () => {
    expect(messageGroupId(frame({ task_session_id: '0b6c1e2a-9f7d-4b7e-8e55-1f0c2a3b4c5d' }))).toBe(
      '0b6c1e2a-9f7d-4b7e-8e55-1f0c2a3b4c5d',
    );
    expect(messageGroupId(frame({ task_session_id: '' }))).toBe(NO_SESSION_GROUP);
    expect(messageGroupId({ version: 1 })).toBe(NO_SESSION_GROUP);
    for (const odd of ['with space', 'é', 'x'.repeat(129)]) {
      expect(messageGroupId(frame({ task_session_id: odd }))).toMatch(/^sha256-[0-9a-f]{64}$/);
    }
    expect(messageGroupId(frame({ task_session_id: 'with space' }))).not.toBe(
      messageGroupId(frame({ task_session_id: 'with  space' })),
    );
  });

  it('P6: the deduplication id is the SHA-256 of the canonical stored frame (key order does not matter)', () => {
    const f = frame({ subagent_task: { prompt: 'p', model: 'm' } });
    const reordered = Object.fromEntries(Object.entries(f).reverse());
    expect(toWireMessage(reordered).dedup).toBe(toWireMessage(f).dedup);
    expect(toWireMessage(f).dedup).toBe(deduplicationId(storedPart(f)));
  });

  it('P1: what cannot be serialised throws (the producer counts it unserializable)', () => {
    const circular: Record<string, unknown> = { version: 1 };
    circular.self = circular;
    expect(() => toWireMessage(circular)).toThrow();
    expect(() => toWireMessage(undefined)).toThrow(/serialises to nothing/);
    expect(() => toWireMessage({ n: 1n })).toThrow();
  });
});

describe('P6: docs/producers.md', () => {
  const doc = readFileSync(new URL('../../../docs/producers.md', import.meta.url), 'utf8');

  it("P6: the example message is a valid frame, omits the never-stored fields and carries the producer's group", () => {
    const example = JSON.parse(doc.match(/```json\n([\s\S]*?)```/)![1]!) as {
      MessageGroupId: string;
      MessageBody: string;
    };
    const parsed = parseFrame(example.MessageBody);
    expect(parsed.ok).toBe(true);
    const body = JSON.parse(example.MessageBody) as { subagent_task: Record<string, unknown> };
    for (const field of NEVER_STORED) expect(body.subagent_task).not.toHaveProperty(field);
    expect(toWireMessage(body).body).toBe(example.MessageBody);
    expect(example.MessageGroupId).toBe(messageGroupId(body));
  });

  it('P6: the page links the published JSON Schema and names every drop reason', () => {
    expect(doc).toContain('(../schema/frame.v1.schema.json)');
    for (const reason of DROP_REASONS) expect(doc).toMatch(new RegExp(`\\| \`${reason}\`\\s*\\|`));
  });
});

describe('P2: the size check before serialising', () => {
  it('P2: sizeLowerBound never exceeds the real message size, whatever the text', () => {
    fc.assert(
      fc.property(hostileText, hostileText, fc.string(), (description, model, prompt) => {
        const f = frame({ task_session_id: model, subagent_task: { description, model, prompt } });
        expect(sizeLowerBound(f)).toBeLessThanOrEqual(toWireMessage(f).size);
      }),
    );
    expect(sizeLowerBound(frame({ subagent_task: { result_text: 'r'.repeat(1000) } }))).toBeLessThan(200);
  });
});
