import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { FAN_OUT_COST_BUCKETS, NOTHING_UNREADABLE } from '../../../../lib/report/document.js';
import { CSV_COLUMNS, renderReportCsv } from '../../../../lib/report/render/csv.js';
import { figures, group, reportDoc } from '../../../support/report-document.js';

/** The CSV as a reader gets it: the one-cell `#` records before the header, then the rows by column. */
function read(text: string) {
  const records = parse(text, { relax_column_count: true }) as string[][];
  const header = records.findIndex((r) => r.length > 1);
  return {
    records,
    comments: records.slice(0, header),
    header: records[header],
    rows: records
      .slice(header + 1)
      .map((r) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]])) as Record<string, string>),
  };
}

describe('report --csv (R4-6: one table)', () => {
  it('R4-6: a missing key holding a comma and a formula stays inside one quoted comment cell', () => {
    const text = renderReportCsv(
      reportDoc([group()], {
        shortfall: { open: true, count: 1, checked: true },
        missing: [{ task_session_id: 's,1', tool_call_id: "x,=cmd|' /C calc'!A0" }],
      }),
    );
    expect(text).toContain(`"# missing: [""s,1"",""x,=cmd|' /C calc'!A0""]"`);
    const { comments } = read(text);
    // every comment is one cell, starting with # (no spreadsheet runs it as a formula)
    for (const c of comments) {
      expect(c).toHaveLength(1);
      expect(c[0]).toMatch(/^# /);
    }
    const missing = comments.find((c) => c[0]!.startsWith('# missing: '))![0]!;
    expect(JSON.parse(missing.slice('# missing: '.length))).toEqual(['s,1', "x,=cmd|' /C calc'!A0"]);
  });

  it('R4-6: a note with a line break and quotes reads back whole, as one cell (R4-1: not rewritten)', () => {
    const { comments } = read(renderReportCsv(reportDoc([group()], { notes: ['a note\nthat says "two" lines, too'] })));
    expect(comments).toContainEqual(['# note: a note\nthat says "two" lines, too']);
  });

  it('R4-6: the models cell is a JSON array, unambiguous for a model named m=5;fake=999', () => {
    const counts = [
      { model: 'm=5;fake=999', subagents: 2 },
      { model: 'a,"b"', subagents: 1 },
      { model: '', subagents: 1 },
    ];
    const [row] = read(renderReportCsv(reportDoc([group({ models: { counts, unreported: 0 } })]))).rows;
    expect(JSON.parse(row!.models!)).toEqual(counts);
  });

  it('R4-6: the header is CSV_COLUMNS, one row per group, and no trailing empty record', () => {
    const text = renderReportCsv(reportDoc([group({ key: 'a' }), group({ key: 'b' })]));
    expect(text.endsWith('\n')).toBe(false);
    // the CLI adds one newline: still no empty record
    const { header, rows, records } = read(`${text}\n`);
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(rows.map((r) => r.key)).toEqual(['a', 'b']);
    expect(records.at(-1)).toHaveLength(CSV_COLUMNS.length);
  });

  it('R4-6: a title a spreadsheet would run is read back neutralised; a negative cost stays a number', () => {
    const [row] = read(
      renderReportCsv(reportDoc([group({ key: 't,1', title: '=SUM(A1)', cost_subcents: -5, lower_bound: true })])),
    ).rows;
    expect(row).toMatchObject({ key: 't,1', title: "'=SUM(A1)", cost_subcents: '-5', lower_bound: 'true' });
  });

  it('R4-6: a key the host never reported and a key "" have their own labels; a NULL figure is an empty cell', () => {
    const rows = read(renderReportCsv(reportDoc([group({ key: null }), group({ key: '' })]))).rows;
    // the words docs/report.md#csv names, written out (not the constants: a change to them must fail here)
    expect(rows.map((r) => r.key)).toEqual(['(not reported)', '(empty)']);
    expect(rows[0]).toMatchObject({ tokens_sum: '', tokens_reported: '0', cost_subcents: '' });
  });

  it('R4-6: without --by, one totals row', () => {
    const doc = { ...reportDoc([]), filters: { ...reportDoc([]).filters, by: null } };
    const { rows } = read(renderReportCsv({ ...doc, totals: figures({ subagents: 7 }) }));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ by: 'totals', key: '', subagents: '7' });
  });
  it('R4-3, R4-7: the unreadable counts are a JSON cell, orphan_rows after the first columns', () => {
    const unreadable = { ...NOTHING_UNREADABLE, total_tokens: 2, duration_ms: 1 };
    const { comments, header, rows } = read(renderReportCsv(reportDoc([group({ orphan_rows: 4 })], { unreadable })));
    const cell = comments.find((c) => c[0]!.startsWith('# unreadable: '))![0]!;
    expect(JSON.parse(cell.slice('# unreadable: '.length))).toEqual(unreadable);
    // R5's columns come after it (added at the end, so a reader by position keeps the ones before)
    expect(header!.indexOf('orphan_rows')).toBe(header!.indexOf('last_observed_at') + 1);
    expect(rows[0]!.orphan_rows).toBe('4');
  });
});

describe('report --csv completeness cells (R3-8), written out', () => {
  const unknown = { ...reportDoc([]) };
  unknown.filters = { ...unknown.filters, by: null };
  unknown.completeness = {
    ...unknown.completeness,
    capture_since: null,
    backfill_through: null,
    verified_through: null,
    shortfall: { open: false, count: 0, checked: false },
  };
  const known = reportDoc([], {
    backfill_through: '2026-07-31T23:59:59.999999Z',
    verified_through: '2026-08-12T12:00:00.000000Z',
    shortfall: { open: true, count: 3, checked: true },
    lower_bound_sessions: 7,
    notes: ['n1'],
  });
  known.filters = {
    by: 'model',
    since: '2026-08-01T00:00:00.000000Z',
    until: '2026-08-02T00:00:00.000000Z',
    task: 't1',
    session: 's1',
    sort: 'key',
    limit: 5,
  };
  const settled = reportDoc([], { shortfall: { open: false, count: 0, checked: true } });
  const unreadable =
    '# unreadable: {"total_tokens":0,"tool_use_count":0,"duration_ms":0,"observed_at":0,"settled_at":0,"cost_subcents":0,"occurred_at":0,"usage_tokens":0,"usage_cost_subcents":0,"usage_cost_source":0,"usage_complete":0}';

  it.each([
    [
      'nothing known: unset filters (--by too) are -, nulls say why, the shortfall not checked',
      unknown,
      [
        '# subagent-context report, version 1, generated 2026-08-12T13:00:00.000000Z',
        '# filters: by=- since=- until=- task=- session=- sort=subagents limit=-',
        '# capture_since: null (not activated)',
        '# backfill_through: null',
        '# verified_through: null (no readable checkpoint: see the notes)',
        '# shortfall: not checked',
        unreadable,
        '# lower_bound_sessions: 0',
        '# unpriced_events: null (not known: the ledger does not record which events were priced)',
        '# fan_out_cost: null (see the notes)',
      ],
    ],
    [
      'everything set, a shortfall open',
      known,
      [
        '# subagent-context report, version 1, generated 2026-08-12T13:00:00.000000Z',
        '# filters: by=model since=2026-08-01T00:00:00.000000Z until=2026-08-02T00:00:00.000000Z task=t1 session=s1 sort=key limit=5',
        '# capture_since: 2026-08-01T00:00:00.000000Z',
        '# backfill_through: 2026-07-31T23:59:59.999999Z',
        '# verified_through: 2026-08-12T12:00:00.000000Z',
        '# shortfall: OPEN (3)',
        unreadable,
        '# lower_bound_sessions: 7',
        '# unpriced_events: null (not known: the ledger does not record which events were priced)',
        '# fan_out_cost: null (see the notes)',
        '# note: n1',
      ],
    ],
    ['checked, no shortfall', settled, expect.arrayContaining(['# shortfall: none (0)'])],
  ])('R3-8: %s', (_, doc, expected) => {
    expect(read(renderReportCsv(doc)).comments.map((c) => c[0])).toEqual(expected);
  });

  it('R4-6: every comment cell is quoted, even one holding nothing a CSV reader would need quoted', () => {
    const lines = renderReportCsv(reportDoc([group()])).split('\n');
    expect(lines).toContain('"# lower_bound_sessions: 0"');
    expect(lines[0]).toBe('"# subagent-context report, version 1, generated 2026-08-12T13:00:00.000000Z"');
  });
});

describe('report --csv: the R5 figures (R5-1 … R5-4)', () => {
  it('R5-1, R5-2, R5-4, R6-9: the new columns come after orphan_rows, in this order', () => {
    const { header } = read(renderReportCsv(reportDoc([group()])));
    expect(header!.slice(header!.indexOf('orphan_rows') + 1)).toEqual([
      'unpriced_events',
      'cost_lower_bound',
      'measured_cost_subcents',
      'list_priced_cost_subcents',
      'tokens_p50',
      'tokens_p95',
      'tokens_max',
      // R6-5, after them
      ...[
        'subagents_with_usage',
        'complete',
        'tokens_in',
        'tokens_out',
        'tokens_cached_read',
        'tokens_cached_write',
        'tokens_reasoning',
        'cost_subcents',
        'measured_cost_subcents',
        'list_priced_cost_subcents',
        'unpriced',
        'cost_lower_bound',
        'cost_p50_subcents',
        'cost_p95_subcents',
        'cost_max_subcents',
      ].map((f) => `spend_${f}`),
      'estimated_unpriced_events',
      'estimated_cost_lower_bound',
    ]);
  });

  it.each<[string, Partial<Parameters<typeof group>[0]>, Record<string, string>]>([
    [
      'R5-1: a lower bound: the exact sums, the count and true (no ≥ in a number cell)',
      {
        cost_subcents: 41_000,
        cost_per_context_subcents: 10_250,
        unpriced_events: 3,
        cost_lower_bound: true,
        measured_cost_subcents: 30_000,
        list_priced_cost_subcents: 10_000,
      },
      {
        cost_subcents: '41000',
        cost_per_context_subcents: '10250',
        unpriced_events: '3',
        cost_lower_bound: 'true',
        measured_cost_subcents: '30000',
        list_priced_cost_subcents: '10000',
      },
    ],
    [
      'R5-1, R5-2: a ledger without cost_source: empty cells, not 0; false',
      { cost_subcents: 41_000 },
      {
        cost_subcents: '41000',
        unpriced_events: '',
        cost_lower_bound: 'false',
        measured_cost_subcents: '',
        list_priced_cost_subcents: '',
      },
    ],
    [
      'R5-4: the tokens percentiles',
      { tokens: { sum: 10, reported: 3, p50: 2, p95: 5, max: 5 } },
      { tokens_sum: '10', tokens_p50: '2', tokens_p95: '5', tokens_max: '5' },
    ],
    ['R5-4: none reported: empty', {}, { tokens_sum: '', tokens_p50: '', tokens_p95: '', tokens_max: '' }],
  ])('%s', (_, figures, cells) => {
    const [row] = read(renderReportCsv(reportDoc([group(figures)]))).rows;
    expect(row).toMatchObject(cells);
  });

  it('R5-1: the completeness states the unpriced events: counted, or not known', () => {
    const comment = (unpriced: number | null) =>
      read(renderReportCsv(reportDoc([], { unpriced_events: unpriced }))).comments.find((c) =>
        c[0]!.startsWith('# unpriced_events: '),
      )![0];
    expect(comment(7)).toBe('# unpriced_events: 7');
    expect(comment(0)).toBe('# unpriced_events: 0');
    expect(comment(null)).toBe(
      '# unpriced_events: null (not known: the ledger does not record which events were priced)',
    );
  });

  it('R5-3: fan_out_cost is one comment cell per bucket, its JSON, then the events without a turn; values read back exactly', () => {
    const buckets = FAN_OUT_COST_BUCKETS.map((fan_out, i) => ({
      fan_out,
      turns: i * 10,
      costed_turns: i * 8,
      unpriced_turns: i === 0 ? null : i,
      turns_without_cost: i,
      unreadable_cost_turns: 0,
      cost_subcents: i === 0 ? null : 2 ** 31 - i,
      mean_subcents: i === 0 ? null : -i,
      median_subcents: i === 0 ? null : i * 100,
      p95_subcents: i === 0 ? null : i * 300,
      spend_known_turns: i === 0 ? null : i,
      subagent_cost_subcents: i === 0 ? null : i * 50,
      subagent_share: i === 0 ? null : i / 8,
      uncosted_turns_priced_cost_subcents: i === 0 ? null : i * 7,
    }));
    const rest = {
      unattributed_events: 4,
      unattributed_cost_subcents: 170,
      unattributed_unpriced_events: null,
      unreadable_started_at: 2,
    };
    const doc = { ...reportDoc([group()]), fan_out_cost: { buckets, ...rest } };
    const { comments, rows } = read(renderReportCsv(doc));
    const cells = comments.map((c) => c[0]!).filter((c) => c.startsWith('# fan_out_cost'));
    expect(cells.map((c) => c.slice(0, c.indexOf(': ')))).toEqual([
      ...buckets.map(() => '# fan_out_cost'),
      '# fan_out_cost unattributed',
      '# fan_out_cost with the total',
    ]);
    expect(cells.slice(0, 7).map((c) => JSON.parse(c.slice('# fan_out_cost: '.length)))).toEqual(buckets);
    expect(JSON.parse(cells[7]!.slice('# fan_out_cost unattributed: '.length))).toEqual(rest);
    // R6-10, R6-11: the line that closes the sum, in dollars, every subcent
    expect(cells[8]).toMatch(
      /^# fan_out_cost with the total: \$[\d,]+\.\d{4} in costed turns \+ \$0\.0147 priced in turns not costed \+ \$0\.0170 on no turn/,
    );
    // the one table stays one table: the group rows follow the header as before
    expect(rows).toHaveLength(1);
  });

  it('R5-3: fan_out_cost null: one cell saying so, with the reason the notes give', () => {
    const doc = reportDoc([], { notes: ['fan_out_cost is null: the store has no task_session_turns table.'] });
    expect(read(renderReportCsv(doc)).comments.map((c) => c[0])).toContain(
      '# fan_out_cost: null (the store has no task_session_turns table.)',
    );
  });
});
