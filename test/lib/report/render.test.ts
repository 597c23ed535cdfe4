import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import {
  type Figures,
  NOTHING_UNREADABLE,
  type ReportDocument,
  SPEND_NOT_COLLECTED,
} from '../../../lib/report/document.js';
import { reportJsonSchema } from '../../../lib/report/json-schema.js';
import { CSV_COLUMNS, renderReportCsv } from '../../../lib/report/render/csv.js';
import { renderReportTable, wantsColor } from '../../../lib/report/render/table.js';

const COMMITTED = new URL('../../../schema/report.v1.schema.json', import.meta.url);

/** A document with every sum unreported: what NULL must look like in each renderer. */
function doc(overrides: Partial<Figures> = {}): ReportDocument {
  const figures: Figures = {
    subagents: 1234567,
    top_level: 1234567,
    nested: 0,
    async: 0,
    live: 1,
    backfill: 1234566,
    settled: 0,
    failed: 0,
    tokens: { sum: null, reported: 0, p50: null, p95: null, max: null },
    tool_uses: { sum: 0, reported: 1 },
    duration_ms: { reported: 0, p50: null, p95: null, max: null },
    models: { counts: [], unreported: 1234567 },
    fan_out: [],
    executions: 0,
    unknown_execution: 1234566,
    turns: 0,
    sessions: 2,
    orphan_rows: 0,
    contexts: 1234569,
    cost_subcents: null,
    estimated_cost_subcents: null,
    cost_per_context_subcents: null,
    unpriced_events: null,
    cost_lower_bound: false,
    measured_cost_subcents: null,
    list_priced_cost_subcents: null,
    first_observed_at: null,
    last_observed_at: null,
    spend: { ...SPEND_NOT_COLLECTED },
    ...overrides,
  };
  return {
    version: 1,
    generated_at: '2026-08-12T13:00:00.000000Z',
    filters: { since: null, until: null, task: null, session: null, by: 'task', sort: 'subagents', limit: null },
    completeness: {
      capture_since: null,
      backfill_through: null,
      verified_through: null,
      shortfall: { open: false, count: 0, checked: false },
      missing: [],
      unreadable: { ...NOTHING_UNREADABLE },
      lower_bound_sessions: 0,
      unpriced_events: null,
      notes: ['a note\nthat tries a second line'],
    },
    totals: figures,
    groups: [{ ...figures, by: 'task', key: 't,1', title: '=SUM(A1)', lower_bound: true, started_at: null }],
    trees: [],
    fan_out_cost: null,
  };
}

describe('report renderers', () => {
  it('R3-5: the committed schema/report.v1.schema.json is the one lib/report/document.ts generates (npm run schema)', () => {
    expect(JSON.parse(readFileSync(COMMITTED, 'utf8'))).toEqual(reportJsonSchema());
  });

  it('R3-6: the table shows a NULL figure as "-" and a reported 0 as 0, with thousands separators', () => {
    const text = renderReportTable(doc(), { color: false });
    expect(text).toMatch(/^context at finish\s+- \(0 reported\)$/m);
    expect(text).toMatch(/^tool uses\s+0 \(1 reported\)$/m);
    expect(text).toMatch(/^subagents\s+1,234,567 \(/m);
    expect(text).toMatch(/^cost\s+-$/m);
  });

  it('R3-6, R3-8, R4-6: CSV leaves a NULL cell empty, quotes what needs it, and keeps each comment in one cell', () => {
    const text = renderReportCsv(doc());
    const records = parse(text, { relax_column_count: true }) as string[][];
    const header = records.findIndex((r) => r.length > 1);
    expect(records.slice(0, header)).toContainEqual(['# note: a note\nthat tries a second line']);
    expect(records[header]).toEqual([...CSV_COLUMNS]);
    const row = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, records[header + 1]![i]]));
    expect(row).toMatchObject({
      key: 't,1',
      title: "'=SUM(A1)",
      tokens_sum: '',
      tokens_reported: '0',
      tool_uses_sum: '0',
      lower_bound: 'true',
    });
  });

  it.each([
    [true, {}, true],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
    [false, {}, false],
    [undefined, {}, false],
  ])('colour on a TTY=%s with env %j: %s', (isTTY, env, expected) => {
    expect(wantsColor({ isTTY }, env)).toBe(expected);
  });
});
