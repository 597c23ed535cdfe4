import fc from 'fast-check';
import type { TargetName } from './targets.js';

/**
 * Host text as an attacker or an unlucky host writes it (R4-1, R4-2): markup and quotes, every
 * kind of control (terminal escapes, CR/LF, TAB, DEL, C1), U+2028/2029, bidi controls, lone
 * surrogates, emoji and CJK, and text that looks like a secret, a URL or a formula.
 */
const PIECES = [
  '&',
  '<',
  '>',
  '"',
  "'",
  '\\',
  ',',
  ';',
  '=',
  '\u001b[2J',
  '\u001b]8;;http://evil/\u0007link\u001b]8;;\u0007',
  '\u001b]52;c;aGk=\u0007',
  '\u009b31m',
  '\r\n',
  '\n',
  '\r',
  '\t',
  '\u007f',
  '\u0000',
  '\u2028',
  '\u2029',
  '\u202e',
  '\u2066',
  '\ud800',
  '\udfff',
  '😀',
  '中文',
  'token="abc',
  'password: hunter2',
  'http://wiki:',
  'ops@corp',
  'postgres://u:p@h/d',
  '=SUM(A1)',
  "=cmd|' /C calc'!A0",
];

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** PostgreSQL's text holds no NUL (the store refuses it), so its targets get strings without one. */
export function hostileText(target: TargetName): fc.Arbitrary<string> {
  return fc
    .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: codeUnit, maxLength: 6 })), { maxLength: 10 })
    .map((parts) => parts.join(''))
    .map((text) => (target === 'sqlite' ? text : text.replaceAll('\u0000', '')));
}

/** 1 MiB (2^20 UTF-16 code units) of every piece above, repeated. */
export const MIB_OF_HOSTILE_TEXT = PIECES.join('')
  .repeat(Math.ceil(2 ** 20 / PIECES.join('').length))
  .slice(0, 2 ** 20);
