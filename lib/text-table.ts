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
   * Fit a terminal (issue 51): when `width` is known, columns after the first `keep` whose every
   * cell is empty (`-` or blank) are left out, then, while the table is wider than `width`, the
   * rightmost one after the first `keep`; a line under the table names what was left out and how
   * to see it (`see`). Without a width (a pipe, a file) every column is kept.
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
  const empty = headers.map((_, i) => i >= keep && rows.length > 0 && shown.every((row) => blank(row[i]!)));
  let columns = headers.map((_, i) => i).filter((i) => !empty[i]);
  const widthOf = (cols: readonly number[]) =>
    cols.reduce((sum, i) => sum + Math.max(terminalSafe(headers[i]!).length, ...shown.map((r) => r[i]!.length)), 0) +
    2 * (cols.length - 1);
  const narrowed: string[] = [];
  while (columns.length > keep && widthOf(columns) > width) {
    const named = dropFirst.map((h) => headers.indexOf(h)).find((i) => i >= keep && columns.includes(i));
    const drop = named ?? columns.at(-1)!;
    columns = columns.filter((i) => i !== drop);
    narrowed.push(headers[drop]!);
  }
  const table = layout(
    columns.map((i) => headers[i]!),
    rows.map((row) => columns.map((i) => row[i])),
    options,
  );
  const left: string[] = [];
  const emptyNames = headers.filter((_, i) => empty[i]);
  if (emptyNames.length > 0) left.push(`${emptyNames.join(', ')} (nothing in them)`);
  if (narrowed.length > 0) left.push(`${narrowed.join(', ')} (no room in ${width} columns)`);
  return left.length === 0 ? table : `${table}\n${wrapWords(`(left out: ${left.join('; ')}; ${see})`, width)}`;
}

/** Prose in lines of at most `width` (a word longer than that has a line of its own). */
function wrapWords(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

function layout(headers: readonly string[], rows: ReadonlyArray<readonly Cell[]>, options: TableOptions): string {
  const text = rows.map((row) => headers.map((_, i) => show(row[i])));
  const shownHeaders = headers.map((h) => terminalSafe(h));
  const widths = shownHeaders.map((h, i) => Math.max(h.length, ...text.map((row) => row[i]!.length)));
  const sgr = (row: number, column: number): string | undefined => {
    const cell = rows[row]?.[column];
    return options.color && typeof cell === 'object' && cell !== null ? cell.sgr : undefined;
  };
  const line = (cells: readonly string[], row: number) =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat(widths[i]! - cell.length);
        const code = sgr(row, i);
        const shown = code === undefined ? cell : `\x1b[${code}m${cell}\x1b[0m`;
        return !options.leftAlign && isNumeric(cell) ? pad + shown : shown + pad;
      })
      .join('  ')
      .trimEnd();
  return [line(shownHeaders, -1), widths.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}

/** A two-column key/value list. */
export function renderFacts(facts: ReadonlyArray<readonly [string, Cell]>, options: { color?: boolean } = {}): string {
  return renderTable(['', ''], facts, { leftAlign: true, color: options.color }).split('\n').slice(2).join('\n');
}
