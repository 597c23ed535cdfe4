/**
 * How many terminal columns text takes (issue 58 #17): a table and a wrapped line are measured in
 * what the terminal draws, never in UTF-16 code units. A grapheme cluster (`Intl.Segmenter`: `e` +
 * U+0301, 👨‍👩‍👧, 🇺🇸) is one character; CJK, fullwidth forms and emoji take two columns, combining
 * marks and format characters none (string-width, which reads Unicode's own tables). The text
 * is measured after `terminalSafe` (lib/terminal-text.ts), so no control character reaches here;
 * a lone surrogate is measured as the U+FFFD a terminal draws (one column).
 */

import stringWidth from 'string-width';

// a lone surrogate, as the U+FFFD a terminal draws for it
const wellFormed = (text: string) => text.replace(/\p{Cs}/gu, '\uFFFD');

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** The columns one grapheme cluster takes: 0, 1 or 2 (string-width's Unicode tables). */
export const graphemeWidth = (cluster: string): number => stringWidth(wellFormed(cluster));

// printable ASCII, one column a character: the common case, measured without segmenting
const ASCII = /^[\x20-\x7e]*$/;

/** The columns `text` takes in a terminal. */
export function displayWidth(text: string): number {
  if (ASCII.test(text)) return text.length;
  // the sum of its clusters' widths, as breakAtWidth measures its pieces (string-width's own
  // segmenting of a whole text can count a cluster differently from the same cluster alone)
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
