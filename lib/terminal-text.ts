/**
 * The one terminal-safe rendering of text that did not come from this program (R4-2,
 * ../docs/report.md#terminal-safety): host strings in tables and messages, collector bodies. A
 * terminal obeys what it is sent, so a title holding ESC `[2J` would clear the screen, OSC 8/52 would
 * forge links or write the clipboard, CR/LF would forge table lines and U+202E would reverse what
 * follows. Each such code point is shown as a visible escape instead: C0 controls (tab and newline
 * included: data never starts a new line), DEL and C1 as `\xHH`, the bidi embedding, override and
 * isolate controls (U+202A…U+202E, U+2066…U+2069) and the marks U+200E, U+200F, U+061C as `\uHHHH`.
 * Everything else passes as it is: data is never rewritten beyond its medium's escaping (R4-1).
 * Linear time, no regular expression backtracking: one pass with a character class.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function visible(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`
    : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, visible);
}

/**
 * A diagnostic of several lines (an error, a note, a usage message) whose text may quote the host,
 * a server or a flag value: LF stays a line break (the program's own), every other code point
 * terminalSafe escapes is shown escaped, so no quoted text can move the cursor or forge a line's start.
 */
export function terminalSafeLines(text: string): string {
  return text.split('\n').map(terminalSafe).join('\n');
}
