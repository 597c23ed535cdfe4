import { describe, expect, expectTypeOf, it } from 'vitest';
import { COLUMN_NAMES, COLUMNS, type ColumnName, SOURCES, TIMESTAMP_COLUMNS } from '../../lib/columns.js';
import type { Source, SubagentRow, SubagentWrite } from '../../lib/row.js';
import type { Micros } from '../../lib/time.js';

describe('one column list: the row types, TIMESTAMP_COLUMNS and SOURCES derive from COLUMNS', () => {
  it('lists derived at runtime match the definitions', () => {
    expect(COLUMN_NAMES).toEqual(COLUMNS.map((c) => c.name));
    expect(TIMESTAMP_COLUMNS).toEqual(COLUMNS.filter((c) => c.type === 'timestamp').map((c) => c.name));
    expect(TIMESTAMP_COLUMNS).toEqual(['observed_at', 'settled_at', 'updated_at', 'last_observed_at']);
    expect(SOURCES).toEqual(['live', 'backfill']);
  });

  it('the write and row types have exactly the table columns (checked by tsc: npm run typecheck)', () => {
    // R6-2: a write carries the frame's run usage beside the columns; it is stored in our own table.
    expectTypeOf<keyof SubagentWrite>().toEqualTypeOf<Exclude<ColumnName, 'id' | 'updated_at'> | 'usage'>();
    expectTypeOf<keyof SubagentRow>().toEqualTypeOf<ColumnName>();
    expectTypeOf<SubagentWrite['observed_at']>().toEqualTypeOf<Micros>();
    expectTypeOf<SubagentWrite['settled_at']>().toEqualTypeOf<Micros | null>();
    expectTypeOf<SubagentRow['settled_at']>().toEqualTypeOf<string | null>();
    expectTypeOf<SubagentWrite['total_tokens']>().toEqualTypeOf<number | null>();
    expectTypeOf<SubagentWrite['is_async']>().toEqualTypeOf<0 | 1>();
    expectTypeOf<Source>().toEqualTypeOf<'live' | 'backfill'>();
    expectTypeOf<SubagentWrite['last_observed_at']>().toEqualTypeOf<Micros>();
    expectTypeOf<SubagentRow['last_observed_at']>().toEqualTypeOf<string>();
  });
});
