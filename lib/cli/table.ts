/** A plain-text table for people; machines get --json. */
export type Cell = string | number | bigint | boolean | null | undefined;

function show(cell: Cell): string {
  if (cell === null || cell === undefined) return '-';
  // 12,345 for people (issue 25); --json keeps plain numbers
  if (typeof cell === 'number' || typeof cell === 'bigint') return cell.toLocaleString('en-US');
  return String(cell);
}

const isNumeric = (text: string) => /^-?\d[\d,.]*(%| ms| s)?$/.test(text);

/** Columns padded to their widest cell; numbers right-aligned unless `leftAlign`. */
export function renderTable(
  headers: readonly string[],
  rows: ReadonlyArray<readonly Cell[]>,
  options: { leftAlign?: boolean } = {},
): string {
  const text = rows.map((row) => headers.map((_, i) => show(row[i])));
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (!options.leftAlign && isNumeric(cell) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}

/** A two-column key/value list. */
export function renderFacts(facts: ReadonlyArray<readonly [string, Cell]>): string {
  return renderTable(['', ''], facts, { leftAlign: true }).split('\n').slice(2).join('\n');
}
