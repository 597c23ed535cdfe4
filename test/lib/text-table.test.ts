import { describe, expect, it } from 'vitest';
import { renderFacts, renderTable, wrapText } from '../../lib/text-table.js';

describe('tables for people (issue 25)', () => {
  it('print numbers with thousands separators, right-aligned', () => {
    const table = renderTable(
      ['name', 'rows'],
      [
        ['a', 1_234_567],
        ['b', 12n],
      ],
    );
    expect(table.split('\n')).toEqual(['name  rows', '----  ---------', 'a     1,234,567', 'b            12']);
  });

  it('print null as a dash, never 0', () => {
    expect(renderFacts([['excess', null]])).toBe('excess  -');
  });
});

describe('prose wrapped at a width (issue 58 #17)', () => {
  it('issue 58 #17: a duration keeps its unit on its line ("max 10 min" never ends a line at "10"), and "≥" its figure', () => {
    const text = 'p50 2 min 42 s, p95 8 min 49 s, max 10 min (117 reported); cost ≥ 834,844 subcents (≥ $83.48)';
    for (let width = 12; width <= 60; width++) {
      const lines = wrapText(text, width);
      expect(lines.join(' ')).toBe(text);
      for (const [i, line] of lines.entries()) {
        const next = lines[i + 1];
        if (next === undefined) continue;
        expect(`${line} | ${next}`).not.toMatch(/(^|\s)[\d.,]+ \| (ms|s|min|h|days?)\b/);
        expect(line).not.toMatch(/≥$/);
      }
    }
  });
});
