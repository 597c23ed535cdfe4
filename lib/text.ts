import type { Dialect } from './db/dialect/dialect.js';

/*
 * R2-1 text parity (docs/frame.md#text-rules): the one place that says what text may be stored, used by
 * ingest (lib/frame/schema.ts, lib/normalize.ts), the backfill and the health check (lib/store/messages.ts,
 * lib/migrate/backfill-sql.ts) so both dialects store the same row for the same input.
 * PostgreSQL cannot store U+0000 in TEXT (22021) nor an unpaired surrogate (not UTF-8); SQLite stores
 * both, so without these rules the same frame was parked on one and stored on the other.
 */

/** Identity fields longer than this (in characters, i.e. code points) make a frame invalid. */
export const MAX_IDENTITY_CHARS = 512;
/** Other stored text is cut to this many characters (code points). */
export const MAX_TEXT_CHARS = 4096;

/**
 * The stand-in for U+0000 in host metadata: PostgreSQL's jsonb rejects the `\u0000` escape, so the
 * document text is cleaned before parsing (`cleanJsonText`) on both dialects, turning the escape
 * into this noncharacter, which the SQL rules below then treat as U+0000. (So a real U+FFFF in host
 * metadata reads as U+0000 on both dialects; the Go host never writes one, nor does anyone else.)
 */
const NUL_STAND_IN = 0xffff;

/**
 * The stand-in for an unpaired surrogate escape (`\udc00`, a `\ud800` not followed by a low one):
 * jsonb rejects the whole document, and SQLite decodes it into bytes that are not UTF-8, so
 * `cleanJsonText` turns each one into this noncharacter on both dialects. An identity holding it is
 * invalid (as `identityProblem` finds for the frame); other text stores U+FFFD (as `storedText`
 * does). A real U+FFFE in host metadata reads the same way (the Go host never writes one).
 */
const UNPAIRED_STAND_IN = 0xfffe;

/**
 * An unpaired surrogate escape in JSON text whose `\\` pairs are already swapped out (so every
 * backslash left starts an escape): a high one not followed by a low one, or a low one not
 * preceded by a high one. Written in the syntax PostgreSQL's regular expressions and JavaScript's
 * read alike (lookahead and lookbehind), so both dialects find exactly the same escapes, and
 * exactly those `JSON.parse` turns into a lone surrogate.
 */
export const UNPAIRED_ESCAPE = String.raw`\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}`;

// Lone high surrogate (not followed by a low one) or lone low surrogate (not preceded by a high one).
const UNPAIRED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNPAIRED_ALL = new RegExp(UNPAIRED.source, 'g');
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point (R2-1)
const NUL = /\u0000/;
const NUL_ALL = new RegExp(NUL.source, 'g');

/** Code points in `text`, counted only as far as `limit + 1` (a 9 KB id is not walked to its end). */
function codePointsUpTo(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  let count = 0;
  for (let i = 0; i < text.length && count <= limit; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i += 1;
    }
    count += 1;
  }
  return count;
}

/**
 * Why an identity value cannot be stored, or undefined when it can. The reason names the rule,
 * never the value (R2-6): two distinct ids must never be merged into one row by cleaning them.
 */
export function identityProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'contains U+0000';
  if (UNPAIRED.test(value)) return 'contains an unpaired UTF-16 surrogate';
  if (codePointsUpTo(value, MAX_IDENTITY_CHARS) > MAX_IDENTITY_CHARS)
    return `is longer than ${MAX_IDENTITY_CHARS} characters`;
  return undefined;
}

/** Other stored text: U+0000 removed, an unpaired surrogate → U+FFFD, cut at MAX_TEXT_CHARS characters. */
export function storedText(value: string): string {
  let text = value;
  if (NUL.test(text)) text = text.replace(NUL_ALL, '');
  if (UNPAIRED.test(text)) text = text.replace(UNPAIRED_ALL, '\uFFFD');
  if (text.length <= MAX_TEXT_CHARS) return text;
  let end = 0;
  for (let count = 0; count < MAX_TEXT_CHARS && end < text.length; count += 1) {
    const unit = text.charCodeAt(end);
    end += unit >= 0xd800 && unit <= 0xdbff && end + 1 < text.length ? 2 : 1;
  }
  return text.slice(0, end);
}

/*
 * The same rules in SQL, for host metadata read by the backfill and the health check.
 */

const chr = (d: Dialect, code: number) => (d.name === 'postgres' ? `chr(${code})` : `char(${code})`);
/** The 1-based position of the TEXT `needle` in `haystack`, 0 when absent (both SQL expressions). */
export const position = (d: Dialect, haystack: string, needle: string) =>
  d.name === 'postgres' ? `strpos(${haystack}, ${needle})` : `instr(${haystack}, ${needle})`;

/**
 * A JSON document's text with every `\u0000` escape turned into `\uffff` (NUL_STAND_IN) and every
 * unpaired surrogate escape into `\ufffe` (UNPAIRED_STAND_IN), so PostgreSQL's jsonb accepts it,
 * SQLite reads no bytes that are not UTF-8, and both dialects read the same value. An escaped
 * backslash followed by `u0000` (`\\u0000`) is text, not an escape: every `\\` pair is first
 * swapped for U+0001 (which valid JSON text cannot hold raw), then swapped back. Only documents
 * holding an escape (`\u`) pay for more than one substring search, and only those holding one of
 * these two (never written by the Go host) for the replaces.
 */
export function cleanJsonText(d: Dialect, column: string): string {
  const anyEscape = `'\\u'`;
  const nulEscape = `'\\u0000'`;
  const needsCleaning = [nulEscape, `'\\ud'`, `'\\uD'`].map((n) => `${position(d, column, n)} > 0`).join(' OR ');
  const swapped = `replace(${column}, '\\\\', ${chr(d, 1)})`;
  const nulCleaned = `replace(${swapped}, ${nulEscape}, '\\uffff')`;
  const cleaned = `replace(${d.replaceAll(nulCleaned, UNPAIRED_ESCAPE, '\\ufffe')}, ${chr(d, 1)}, '\\\\')`;
  return `(CASE WHEN ${position(d, column, anyEscape)} = 0 THEN ${column} WHEN ${needsCleaning} THEN ${cleaned} ELSE ${column} END)`;
}

/** A condition: the text `expr` (from a cleaned document) passes the identity rule (NULL passes). */
export function identityOkSql(d: Dialect, expr: string): string {
  const holds = (code: number) => `${position(d, expr, chr(d, code))} = 0`;
  return `(${expr} IS NULL OR (length(${expr}) <= ${MAX_IDENTITY_CHARS} AND ${holds(NUL_STAND_IN)} AND ${holds(UNPAIRED_STAND_IN)}))`;
}

/**
 * The text `expr` (from a cleaned document) as stored: the U+0000 stand-in removed, the unpaired
 * one → U+FFFD, cut at MAX_TEXT_CHARS (each stand-in is one character, as the surrogate it replaced).
 */
export function storedTextSql(d: Dialect, expr: string): string {
  const nulRemoved = `replace(${expr}, ${chr(d, NUL_STAND_IN)}, '')`;
  return `substr(replace(${nulRemoved}, ${chr(d, UNPAIRED_STAND_IN)}, ${chr(d, 0xfffd)}), 1, ${MAX_TEXT_CHARS})`;
}

/*
 * Host text shown to a person (the page, the table, a note that quotes a stored value): cut, so
 * any size the store holds costs a bounded part of what is shown (R4-4).
 */

export interface Cut {
  text: string;
  /** the whole string's length in characters (code points) when it was cut, else undefined */
  cutFrom?: number;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
/** a valid surrogate pair starts at i */
const pairAt = (s: string, i: number) => isHigh(s.charCodeAt(i)) && i + 1 < s.length && isLow(s.charCodeAt(i + 1));

/** Characters (code points; a lone surrogate counts as one). */
export function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i += pairAt(s, i) ? 2 : 1) n++;
  return n;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * At most `max` characters (code points) of `s`, ended on a grapheme cluster's boundary
 * (`Intl.Segmenter`), so what a reader sees as one character is never split: `e` + U+0301 keeps its
 * accent, 👨‍👩‍👧 stays a family, 🇺🇸 a flag (a cluster the cut falls in is left out whole). Only a
 * first cluster longer than `max` (thousands of combining marks) is cut inside, at a code point.
 * The caller states `cutFrom`, the full length, next to the text.
 */
export function cutText(s: string, max: number): Cut {
  if (s.length <= max) return { text: s };
  let end = 0;
  for (let chars = 0; end < s.length && chars < max; chars++) end += pairAt(s, end) ? 2 : 1;
  if (end >= s.length) return { text: s };
  // whether `end` is a boundary depends on what precedes it and on the code point at it: the
  // window reaches one code point past it, never the rest of a long string
  const start = graphemes.segment(s.slice(0, end + 2)).containing(end)?.index ?? end;
  return { text: s.slice(0, start > 0 ? start : end), cutFrom: codePoints(s) };
}

/** Host characters a message quotes at most (a kandev_meta value, say). */
export const QUOTED_CHARS = 80;

/**
 * A stored value quoted in a message or note: JSON-quoted, cut at QUOTED_CHARS with its full
 * length stated (a 3,000,000-character kandev_meta value must not become a 3 MB note).
 */
export function quoteHostValue(value: string): string {
  const cut = cutText(value, QUOTED_CHARS);
  return cut.cutFrom === undefined
    ? JSON.stringify(value)
    : `${JSON.stringify(cut.text)}… (${cut.cutFrom.toLocaleString('en-US')} characters)`;
}
