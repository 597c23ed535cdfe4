import { terminalSafe } from '../terminal-text.js';

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
}

/** Columns padded to their widest cell; numbers right-aligned unless `leftAlign`. */
export function renderTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly Cell[]>,
  options: TableOptions = {},
): string {
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
