import { describe, expect, it } from 'vitest';
import { renderFacts, renderTable } from '../../lib/text-table.js';

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
