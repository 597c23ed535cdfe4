import { createHash } from 'node:crypto';
import { messageSize } from '../queue/pack.js';
import { deduplicationId } from './canonical.js';

/**
 * `subagent_task` fields the consumer never stores (docs/producers.md): sending them only makes a
 * frame's size depend on prompt/result length (a 300 KB result made the whole frame too large and
 * its metrics were lost) and keeps prompt text on the queue for days.
 */
export const NEVER_STORED = ['prompt', 'result_text', 'output_file'] as const;

/** MessageGroupId for frames without a session: they are skipped by the consumer, but must still be sendable. */
export const NO_SESSION_GROUP = 'no-session';

/** What one frame becomes on the wire. */
export interface WireMessage {
  /** the SQS message body: JSON of the stored part, with every character SQS refuses escaped */
  body: string;
  group: string;
  dedup: string;
  /** bytes SQS counts for the message */
  size: number;
}

/** The frame without its never-stored fields; the host's object is never modified. */
export function storedPart(frame: unknown): unknown {
  if (!isRecord(frame) || !isRecord(frame.subagent_task)) return frame;
  const task = frame.subagent_task;
  if (!NEVER_STORED.some((field) => field in task)) return frame;
  const kept = { ...task };
  for (const field of NEVER_STORED) delete kept[field];
  return { ...frame, subagent_task: kept };
}

/**
 * SQS accepts only #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF in a body and
 * rejects the whole message otherwise (InvalidMessageContents). JSON.stringify already writes
 * control characters and unpaired surrogates as `\uXXXX` escapes, so of that set only U+FFFE and
 * U+FFFF can be left; they can only occur inside a JSON string (everything outside strings is
 * ASCII), where `\ufffe`/`\uffff` stand for the same character. (A regex over the whole refused
 * set costs ~200× more on a 50 KB body; test/lib/producer/wire.test.ts checks the claim for any text.)
 */
const REFUSED_AFTER_STRINGIFY = /[\uFFFE\uFFFF]/g;

/** JSON whose text SQS accepts and which parses to the same value as JSON.stringify's. */
export function sqsSafeJson(value: unknown): string | undefined {
  const json = JSON.stringify(value) as string | undefined;
  return json?.replace(REFUSED_AFTER_STRINGIFY, (c) => (c === '\uFFFE' ? '\\ufffe' : '\\uffff'));
}

/**
 * A lower bound of the message size without serialising: the lengths of the stored string
 * fields (a UTF-8 byte count is never below the UTF-16 length, and escaping only adds). Lets a
 * full buffer refuse a frame for the cost of a few property reads (a dead endpoint used to make
 * every dropped frame cost a full serialisation).
 */
export function sizeLowerBound(frame: unknown): number {
  if (!isRecord(frame)) return 0;
  let size = 0;
  for (const value of Object.values(frame)) if (typeof value === 'string') size += value.length;
  if (isRecord(frame.subagent_task)) {
    for (const [field, value] of Object.entries(frame.subagent_task)) {
      if (typeof value === 'string' && !(NEVER_STORED as readonly string[]).includes(field)) size += value.length;
    }
  }
  return size;
}

/** SQS's MessageGroupId: ≤ 128 characters of ASCII letters, digits and punctuation. */
const VALID_GROUP = /^[\x21-\x7E]{1,128}$/;

/**
 * MessageGroupId = task_session_id, so a session's frames stay in order (docs/producers.md). An id
 * SQS would refuse as a group (too long, spaces, non-ASCII) is replaced by its SHA-256, which keeps
 * one group per session; the consumer reads the session from the body, never from the group.
 */
export function messageGroupId(frame: unknown): string {
  const session = isRecord(frame) ? frame.task_session_id : undefined;
  if (typeof session !== 'string' || session === '') return NO_SESSION_GROUP;
  return VALID_GROUP.test(session) ? session : `sha256-${createHash('sha256').update(session).digest('hex')}`;
}

/** Throws when the frame cannot be serialised (a cycle, a BigInt, `undefined`). */
export function toWireMessage(frame: unknown): WireMessage {
  const stored = storedPart(frame);
  const body = sqsSafeJson(stored);
  if (body === undefined) throw new Error('the frame serialises to nothing (undefined or a function)');
  return { body, group: messageGroupId(stored), dedup: deduplicationId(stored), size: messageSize(body) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
