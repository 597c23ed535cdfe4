import { breakAtWidth, displayWidth } from './display-width.js';
import { terminalSafe } from './terminal-text.js';

/**
 * A plain-text table for people; machines get --json. Every string cell is host text or holds some
 * (ids, titles, models, reasons), so it is shown through `terminalSafe` (R4-2,
 * docs/report.md#terminal-safety): a control character, CR/LF or a bidi control becomes a visible
 * escape, no cell starts a new line, and the widths are computed on what is printed.
 */
export type Cell = string | number | bigint | boolean | null | undefined | Styled;

/** Text printed in a colour (an SGR code such as `31`, red) when the table is coloured; the colour never counts in the width. */
export interface Styled {
  text: string;
  sgr: string;
}

export const styled = (text: string, sgr: string): Styled => ({ text, sgr });

function show(cell: Cell): string {
  if (cell === null || cell === undefined) return '-';
  // 12,345 for people (issue 25); --json keeps plain numbers
  if (typeof cell === 'number' || typeof cell === 'bigint') return cell.toLocaleString('en-US');
  if (typeof cell === 'object') return terminalSafe(cell.text);
  return terminalSafe(String(cell));
}

// a lower bound ("≥ 9,000", R5-1) and dollars ("$0.0133") are numbers too
const isNumeric = (text: string) => /^(≥ )?-?\$?\d[\d,.]*(%| ms| s)?$/.test(text);

export interface TableOptions {
  /** every column left-aligned (numbers are right-aligned otherwise) */
  leftAlign?: boolean;
  /** apply the Styled cells' colours (a terminal that wants colour) */
  color?: boolean;
  /**
   * Fit a terminal (issue 51, issue 58 #17): when `width` is known, columns after the first `keep`
   * whose every cell is empty (`-` or blank) are left out; while the table is wider than `width`,
   * the headers wrap at their words, the first `keep` columns' ids may break, and columns after the
   * first `keep` give way (`dropFirst`, then the rightmost); a line under the table names what was
   * left out and how to see it (`see`). Without a width (a pipe, a file) every column is kept, each
   * row on one line.
   */
  fit?: {
    width: number | undefined;
    keep: number;
    see: string;
    /** the columns to leave out first when there is no room, least telling first; then the rightmost */
    dropFirst?: readonly string[];
  };
}

/** The width a table may take: `COLUMNS` when set (as shells export it), else the terminal's, else none (a pipe, a file). */
export function terminalWidth(
  stream: { isTTY?: boolean; columns?: number },
  env: NodeJS.ProcessEnv,
): number | undefined {
  const fromEnv = Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return stream.isTTY && stream.columns !== undefined && stream.columns > 0 ? stream.columns : undefined;
}

const blank = (text: string) => text === '-' || text === '';

/** Two spaces between columns. */
const GAP = 2;

/** The least share of a narrow terminal a key column keeps before its ids break (16 of 40 columns). */
const KEY_SHARE = 0.4;

/** The widest of `texts`, in terminal columns. */
const widest = (texts: readonly string[]) => texts.reduce((max, text) => Math.max(max, displayWidth(text)), 0);

/** Columns padded to their widest cell; numbers right-aligned unless `leftAlign`; `fit`: within a width. */
export function renderTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly Cell[]>,
  options: TableOptions = {},
): string {
  // a pipe or a file (no width known) keeps every column, as a script reading it expects
  if (options.fit?.width === undefined) return layout(headers, rows, options);
  const { width, keep, see, dropFirst = [] } = options.fit;
  const shown = rows.map((row) => headers.map((_, i) => show(row[i])));
  const safeHeaders = headers.map((h) => terminalSafe(h));
  const empty = headers.map((_, i) => i >= keep && rows.length > 0 && shown.every((row) => blank(row[i]!)));
  const present = headers.map((_, i) => i).filter((i) => !empty[i]);
  const cells = headers.map((_, i) => widest(shown.map((row) => row[i]!)));
  const natural = headers.map((_, i) => Math.max(displayWidth(safeHeaders[i]!), cells[i]!));
  const total = (cols: readonly number[], w: (i: number) => number) =>
    cols.reduce((sum, i) => sum + w(i), 0) + GAP * (cols.length - 1);
  let columns = present;
  let widths = natural;
  const narrowed: number[] = [];
  if (total(columns, (i) => natural[i]!) > width) {
    // Issue 58 #17: no room as they are. A header wraps at its words (its column as wide as its
    // cells or its longest word); the first `keep` columns (data: ids, keys) may break, at no less
    // than KEY_SHARE of the width (an id of the host's usual length stays whole on 40 columns);
    // then the least telling columns give way (`dropFirst`, then the rightmost), and any that fit
    // again come back, the most telling first.
    const longestWord = safeHeaders.map((h) => widest(h.split(' ')));
    const compact = headers.map((_, i) => Math.max(cells[i]!, longestWord[i]!));
    const least = headers.map((_, i) =>
      i < keep ? Math.min(compact[i]!, Math.max(longestWord[i]!, Math.floor(width * KEY_SHARE))) : compact[i]!,
    );
    const order = (cols: readonly number[]) =>
      dropFirst.map((h) => headers.indexOf(h)).find((i) => i >= keep && cols.includes(i)) ?? cols.at(-1)!;
    while (columns.length > keep && total(columns, (i) => least[i]!) > width) {
      const drop = order(columns);
      columns = columns.filter((i) => i !== drop);
      narrowed.push(drop);
    }
    for (const back of [...narrowed].reverse()) {
      const tried = present.filter((i) => i === back || columns.includes(i));
      if (total(tried, (i) => least[i]!) <= width) {
        columns = tried;
        narrowed.splice(narrowed.indexOf(back), 1);
      }
    }
    // the room left goes to the columns that may break, up to their own width
    let room = width - total(columns, (i) => least[i]!);
    widths = [...least];
    for (const i of columns.filter((c) => c < keep)) {
      const more = Math.max(0, Math.min(room, compact[i]! - least[i]!));
      widths[i] = least[i]! + more;
      room -= more;
    }
    // then, left to right, a wrapped header back on one line where it fits whole
    for (const i of columns.filter((c) => c >= keep)) {
      const more = natural[i]! - widths[i]!;
      if (more > 0 && more <= room) {
        widths[i] = natural[i]!;
        room -= more;
      }
    }
  }
  const table = layout(
    columns.map((i) => headers[i]!),
    rows.map((row) => columns.map((i) => row[i])),
    options,
    columns.map((i) => Math.max(1, widths[i]!)),
  );
  const left: string[] = [];
  const emptyNames = headers.filter((_, i) => empty[i]);
  if (emptyNames.length > 0) left.push(`${emptyNames.join(', ')} (nothing in them)`);
  const narrowedNames = headers.filter((_, i) => narrowed.includes(i));
  if (narrowedNames.length > 0) left.push(`${narrowedNames.join(', ')} (no room in ${width} columns)`);
  return left.length === 0
    ? table
    : `${table}\n${wrapText(`(left out: ${left.join('; ')}; ${see})`, width).join('\n')}`;
}

/**
 * Prose in lines of at most `width` columns, the lines after the first of at most `rest` (a
 * hanging indent is the caller's). Lines break at spaces, never inside a figure (`≥ $1.50` stays
 * whole); a word longer than a line (an id, a path: data) starts a line and continues on the next
 * one, broken only at the width. Spaces inside a line are kept as they are.
 */
export function wrapText(text: string, width: number, rest = width): string[] {
  const lines: string[] = [];
  const room = () => (lines.length === 0 ? width : rest);
  let line: string | undefined;
  let used = 0;
  for (const word of glueBounds(text.split(' '))) {
    const w = displayWidth(word);
    if (line !== undefined && used + 1 + w <= room()) {
      line += ` ${word}`;
      used += 1 + w;
      continue;
    }
    if (line !== undefined) lines.push(line);
    const pieces = breakAtWidth(word, room(), rest);
    lines.push(...pieces.slice(0, -1));
    line = pieces.at(-1) ?? '';
    used = displayWidth(line);
  }
  lines.push(line ?? '');
  return lines;
}

/** "≥" and a bucket's label ("6:") are read with the figure after them, so a line never ends between them. */
const LEADS_A_FIGURE = /≥$|^[\d+-]+:$/;
/** A number and the duration unit after it ("10 min", lib/units.ts) are one figure. */
const NUMBER = /^[\d.,]+$/;
const DURATION_UNIT = /^(ms|s|min|h|days?)[,;.)]*$/;

function glueBounds(words: readonly string[]): string[] {
  const glued: string[] = [];
  for (let i = 0; i < words.length; i++) {
    let word = words[i]!;
    for (;;) {
      const next = words[i + 1];
      if (next === undefined) break;
      const last = word.slice(word.lastIndexOf(' ') + 1);
      if (!LEADS_A_FIGURE.test(last) && !(NUMBER.test(last) && DURATION_UNIT.test(next))) break;
      word = `${word} ${next}`;
      i++;
    }
    glued.push(word);
  }
  return glued;
}

/**
 * The table's lines. `widths` (a terminal's, from `fit`): each column that wide, a header wrapped
 * onto lines of its own, a cell wider than its column (only the ids of the first columns are)
 * continued on the lines below. Without: every column as wide as its widest cell, one line each.
 */
function layout(
  headers: readonly string[],
  rows: ReadonlyArray<readonly Cell[]>,
  options: TableOptions,
  widths?: readonly number[],
): string {
  const text = rows.map((row) => headers.map((_, i) => show(row[i])));
  const shownHeaders = headers.map((h) => terminalSafe(h));
  const w = widths ?? shownHeaders.map((h, i) => Math.max(displayWidth(h), widest(text.map((row) => row[i]!))));
  const sgr = (row: number, column: number): string | undefined => {
    const cell = rows[row]?.[column];
    return options.color && typeof cell === 'object' && cell !== null ? cell.sgr : undefined;
  };
  const split = (cell: string, i: number) => (widths === undefined ? [cell] : wrapText(cell, w[i]!));
  const line = (cells: readonly string[], row: number, numeric: readonly boolean[]) =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat(Math.max(0, w[i]! - displayWidth(cell)));
        const code = cell === '' ? undefined : sgr(row, i);
        const shown = code === undefined ? cell : `\x1b[${code}m${cell}\x1b[0m`;
        return numeric[i] ? pad + shown : shown + pad;
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  /** One row as lines: each cell's lines side by side, blank where a cell has fewer. */
  const lines = (cells: readonly string[], row: number) => {
    const parts = cells.map(split);
    const numeric = cells.map((cell) => row >= 0 && !options.leftAlign && isNumeric(cell));
    const height = Math.max(1, ...parts.map((p) => p.length));
    return Array.from({ length: height }, (_, k) =>
      line(
        parts.map((p) => p[k] ?? ''),
        row,
        numeric,
      ),
    );
  };
  return [
    ...lines(shownHeaders, -1),
    w.map((n) => '-'.repeat(n)).join(' '.repeat(GAP)),
    ...text.flatMap((cells, row) => lines(cells, row)),
  ].join('\n');
}

/**
 * A two-column key/value list. With a `width` (a terminal's), a value longer than its room wraps
 * with a hanging indent under the value column (issue 58 #17); where the keys leave it less than
 * `MIN_VALUE` columns, each value goes under its key, indented two.
 */
export function renderFacts(
  facts: ReadonlyArray<readonly [string, Cell]>,
  options: { color?: boolean; width?: number } = {},
): string {
  const keys = facts.map(([key]) => terminalSafe(key));
  const keyWidth = widest(keys);
  const { width } = options;
  const under = width !== undefined && width - keyWidth - GAP < MIN_VALUE;
  return facts
    .flatMap(([, value], i) => {
      const text = show(value);
      const code = options.color && typeof value === 'object' && value !== null ? value.sgr : undefined;
      const paint = (piece: string) => (code === undefined || piece === '' ? piece : `\x1b[${code}m${piece}\x1b[0m`);
      const key = keys[i]!;
      if (width === undefined)
        return [`${key}${' '.repeat(keyWidth - displayWidth(key) + GAP)}${paint(text)}`.trimEnd()];
      const indent = under ? GAP : keyWidth + GAP;
      const pieces = wrapText(text, width - indent).map((piece) => `${' '.repeat(indent)}${paint(piece)}`.trimEnd());
      if (under) return [key, ...pieces];
      return [`${key}${pieces[0]!.slice(displayWidth(key))}`.trimEnd(), ...pieces.slice(1)];
    })
    .join('\n');
}

/** The fewest columns a fact's value wraps in beside its key. */
const MIN_VALUE = 24;
