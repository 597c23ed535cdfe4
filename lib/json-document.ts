import { jsonChunks } from './json-text.js';
import { formatRfc3339 } from './time.js';

/**
 * The one serialiser of the `--json` documents the CLI and `npm start` print. An instant in
 * memory is bigint microseconds (lib/time.ts `Micros`, the only bigint the project holds), and a
 * document gives it as RFC 3339 UTC with microseconds (`2026-12-01T13:00:00.123456Z`), never as a
 * string of microseconds: a reader parses it with any date library (README "Reading the output").
 * Serialized without recursion (lib/json-text.ts, R4-4): a fan-out tree of any depth prints.
 */
export function jsonDocument(value: unknown): string {
  return [...jsonDocumentChunks(value)].join('');
}

/** jsonDocument's text in pieces (R4-12: a report of 500,000 groups is longer than any one string). */
export function* jsonDocumentChunks(value: unknown): Generator<string> {
  yield* jsonChunks(value, { replacer, indent: 2 });
  yield '\n';
}

const replacer = (_key: string, v: unknown) => (typeof v === 'bigint' ? formatRfc3339(v) : v);
