/**
 * How many terminal columns text takes (issue 58 #17): a table and a wrapped line are measured in
 * what the terminal draws, never in UTF-16 code units. A grapheme cluster (`Intl.Segmenter`: `e` +
 * U+0301, 👨‍👩‍👧, 🇺🇸) is one character; CJK, fullwidth forms and emoji take two columns, combining
 * marks and format characters none. The text is measured after `terminalSafe` (lib/terminal-text.ts),
 * so no control character reaches here; a lone surrogate (drawn as U+FFFD) takes one column.
 */

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

// printable ASCII: one column a character (the common case, measured without segmenting)
const ASCII = /^[\x20-\x7e]*$/;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;
// emoji drawn as emoji (alone, or made so by VS16 U+FE0F), and regional-indicator flags
const EMOJI = /\p{Emoji_Presentation}|\uFE0F|\p{Regional_Indicator}/u;

/** East Asian Wide and Fullwidth ranges (Unicode's EastAsianWidth.txt, W and F, by block). */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2329, 0x232a],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x18aff],
  [0x1b000, 0x1b2ff],
  [0x1f200, 0x1f2ff],
  [0x20000, 0x3fffd],
];

const isWide = (code: number) => WIDE.some(([from, to]) => code >= from && code <= to);

/** The columns one grapheme cluster takes: 0, 1 or 2. */
export function graphemeWidth(cluster: string): number {
  if (ZERO_WIDTH.test(cluster)) return 0;
  if (EMOJI.test(cluster)) return 2;
  return isWide(cluster.codePointAt(0)!) ? 2 : 1;
}

/** The columns `text` takes in a terminal. */
export function displayWidth(text: string): number {
  if (ASCII.test(text)) return text.length;
  let width = 0;
  for (const { segment } of graphemes.segment(text)) width += graphemeWidth(segment);
  return width;
}

/**
 * `text` in pieces: the first of at most `first` columns, the others of at most `rest`, broken only
 * between grapheme clusters (data such as an id continues on the next line, never loses a
 * character). One pass, however long the text. A cluster wider than its line has a piece of its own.
 */
export function breakAtWidth(text: string, first: number, rest = first): string[] {
  if (displayWidth(text) <= first) return [text];
  const pieces: string[] = [];
  let piece = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const w = graphemeWidth(segment);
    if (piece !== '' && used + w > (pieces.length === 0 ? first : rest)) {
      pieces.push(piece);
      piece = '';
      used = 0;
    }
    piece += segment;
    used += w;
  }
  if (piece !== '') pieces.push(piece);
  return pieces;
}
