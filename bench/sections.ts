import { readFileSync, writeFileSync } from 'node:fs';

/*
 * The heavy benchmarks (`npm run bench -- health`, `-- read`, `-- publish`) each own one section of
 * BENCHMARKS.md between `<!-- NAME:start -->` and `<!-- NAME:end -->`: each run rewrites only its
 * own, and the default run keeps them all.
 */

export const markers = (name: string) => ({ start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` });

/** Replaces the section `name` of `file` with `section` (which carries its markers), or appends it. */
export function replaceSection(file: string, name: string, section: string): void {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '# Benchmarks\n';
  }
  const { start, end } = markers(name);
  const at = text.indexOf(start);
  const to = text.indexOf(end);
  text =
    at >= 0 && to > at
      ? `${text.slice(0, at)}${section}${text.slice(to + end.length)}`
      : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(file, text);
}

/** The section `name` of `file` with its markers, between newlines; '' when it has none. */
export function keptSection(file: string, name: string): string {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const { start, end } = markers(name);
  const at = text.indexOf(start);
  const to = text.indexOf(end);
  return at >= 0 && to > at ? `\n${text.slice(at, to + end.length)}\n` : '';
}
