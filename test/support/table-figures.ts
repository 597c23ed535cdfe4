import { displayWidth, graphemeWidth } from '../../lib/display-width.js';

/**
 * Issue 58 #17: reading a terminal table's output back to check that fitting a width cut nothing.
 * A figure is a count, dollars, a percentage or a lower bound (`≥ $1.50`) standing on its own,
 * never the digits inside an id (`g1-task-00000007`), a model (`opus-5`) or an instant.
 */
const FIGURE = /(?<![\w.$,:[-])(?:≥ )?-?\$?\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w:-]|[.,]\d)/gu;

/** The figures of `text`, each with how often it occurs. */
export function figures(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [figure] of text.matchAll(FIGURE)) counts.set(figure, (counts.get(figure) ?? 0) + 1);
  return counts;
}

/** What a terminal draws in columns [from, to) of `line`, each character as wide as it is drawn. */
export function drawnIn(line: string, from: number, to: number): string {
  let at = 0;
  let drawn = '';
  for (const { segment } of new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(line)) {
    if (at >= from && at < to) drawn += segment;
    at += graphemeWidth(segment);
  }
  return drawn;
}

const DASHES = /^-+(?: {2}-+)*$/;

/**
 * The tables of an output printed at full width (one line a header, one line a row): for each
 * dashed rule, its headers and the next `rows[i]` rows' cells, cut where the dashes are.
 */
export function tableCells(text: string, rows: readonly number[]): { header: string; cells: string[] }[][] {
  const lines = text.split('\n');
  const rules = lines.flatMap((line, i) => (DASHES.test(line) ? [i] : []));
  if (rules.length !== rows.length) throw new Error(`expected ${rows.length} tables, found ${rules.length}`);
  return rules.map((rule, t) => {
    const spans = [...lines[rule]!.matchAll(/-+/g)].map((m) => [m.index, m.index + m[0].length] as const);
    const cut = (line: string) => spans.map(([from, to]) => drawnIn(line, from, to).trim());
    const headers = cut(lines[rule - 1]!);
    const body = lines.slice(rule + 1, rule + 1 + rows[t]!).map(cut);
    return headers.map((header, c) => ({ header, cells: body.map((row) => row[c]!) }));
  });
}

/** The "(left out: …)" lines' texts, each read whole (the lines joined where they were wrapped). */
export function leftOut(text: string): string[] {
  return [...text.replace(/\n/g, ' ').matchAll(/\(left out: (.*?); --(?:json|csv)/g)].map((m) => m[1]!);
}

const escaped = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether a "(left out: …)" line names the column `header`. */
export function isLeftOut(notes: readonly string[], header: string): boolean {
  const named = new RegExp(`(?:^|[,;] )${escaped(header)}(?:,| \\()`);
  return notes.some((note) => named.test(note));
}

/**
 * The figures of `full` (every column, one line each) that `narrow` (fit to a width) has lost:
 * none, when each is printed whole or its column is named as left out.
 */
export function lostFigures(full: string, narrow: string, rows: readonly number[]): string[] {
  const wanted = figures(full);
  const notes = leftOut(narrow);
  for (const column of tableCells(full, rows).flat())
    if (isLeftOut(notes, column.header))
      for (const cell of column.cells)
        for (const [figure, count] of figures(cell)) wanted.set(figure, wanted.get(figure)! - count);
  const found = figures(narrow);
  return [...wanted].filter(([figure, count]) => count > (found.get(figure) ?? 0)).map(([figure]) => figure);
}

/** The lines of `text` a terminal `width` columns wide would wrap. */
export const linesWiderThan = (text: string, width: number) =>
  text.split('\n').filter((line) => displayWidth(line) > width);
