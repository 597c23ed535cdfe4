import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { terminalSafe, terminalSafeLines } from '../../lib/terminal-text.js';

/**
 * The oracle, written here from the rule (docs/report.md#terminal-safety), not taken from the code:
 * C0, DEL, C1, U+061C, U+200E, U+200F, U+202A…U+202E, U+2066…U+2069.
 */
const isTerminalSafe = (text: string): boolean =>
  [...text].every((c) => {
    const u = c.codePointAt(0)!;
    return !(
      u <= 0x1f ||
      (u >= 0x7f && u <= 0x9f) ||
      u === 0x61c ||
      u === 0x200e ||
      u === 0x200f ||
      (u >= 0x202a && u <= 0x202e) ||
      (u >= 0x2066 && u <= 0x2069)
    );
  });

// R4-2 (docs/report.md#terminal-safety): what a terminal would obey, and what it shows instead.
const ESCAPED: [string, string, string][] = [
  ['CSI clear screen', 'a\u001b[2Jb', 'a\\x1B[2Jb'],
  ['OSC 8 link', '\u001b]8;;http://evil/\u0007x\u001b]8;;\u0007', '\\x1B]8;;http://evil/\\x07x\\x1B]8;;\\x07'],
  ['OSC 52 clipboard write', '\u001b]52;c;aGk=\u0007', '\\x1B]52;c;aGk=\\x07'],
  ['C1 CSI U+009B', '\u009b31m', '\\x9B31m'],
  ['CR', 'a\rb', 'a\\x0Db'],
  ['LF', 'a\nb', 'a\\x0Ab'],
  ['CRLF', 'a\r\nb', 'a\\x0D\\x0Ab'],
  ['TAB', 'a\tb', 'a\\x09b'],
  ['NUL', 'a\u0000b', 'a\\x00b'],
  ['DEL', 'a\u007fb', 'a\\x7Fb'],
  ['right-to-left override U+202E', 'abc\u202edef', 'abc\\u202Edef'],
  ['left-to-right isolate U+2066', '\u2066x\u2069', '\\u2066x\\u2069'],
  ['right-to-left mark U+200F', 'a\u200fb', 'a\\u200Fb'],
];

const UNCHANGED: [string, string][] = [
  ['ASCII', 'Fix the login page (task #12) = 100%'],
  ['emoji', 'deploy 🚀 done 👍🏽'],
  ['CJK', '修复登录页面'],
  ['accents and RTL letters', 'café שלום مرحبا'],
  ['U+2028 and U+2029 (no terminal control)', 'a\u2028b\u2029c'],
  ['a backslash that is already there', 'C:\\temp\\x1B'],
];

describe('terminal-text.ts: host text on a terminal (R4-2)', () => {
  it.each(ESCAPED)('R4-2: %s is shown as a visible escape', (_what, input, expected) => {
    expect(terminalSafe(input)).toBe(expected);
    expect(isTerminalSafe(input)).toBe(false);
  });

  it.each(UNCHANGED)('R4-2: %s passes unchanged', (_what, input) => {
    expect(terminalSafe(input)).toBe(input);
    expect(isTerminalSafe(input)).toBe(true);
  });

  it('R4-2: for any string, the result holds no control character and never starts a new line', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }), (s) => {
        const shown = terminalSafe(s);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
        expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
        expect(isTerminalSafe(shown)).toBe(true);
      }),
    );
  });

  it('R4-2: a diagnostic keeps its own line breaks and shows every other control escaped', () => {
    expect(terminalSafeLines('no such task "a\u001b[2J"\n\nsee --help\r\u202e')).toBe(
      'no such task "a\\x1B[2J"\n\nsee --help\\x0D\\u202E',
    );
  });

  it('R4-2: for any string, a diagnostic holds nothing unsafe but its line breaks', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }), (s) => {
        const lines = terminalSafeLines(s).split('\n');
        expect(lines.length).toBe(s.split('\n').length);
        for (const line of lines) expect(isTerminalSafe(line)).toBe(true);
      }),
    );
  });
});
