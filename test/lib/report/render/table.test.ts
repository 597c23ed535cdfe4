import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FanOutCost, NOTHING_UNREADABLE, SPEND_NOT_COLLECTED } from '../../../../lib/report/document.js';
import { renderReportTable } from '../../../../lib/report/render/table.js';
import { fanOutCost, group, reportDoc } from '../../../support/report-document.js';
import { drawnIn } from '../../../support/table-figures.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const table = (doc: ReturnType<typeof reportDoc>, color = false) => renderReportTable(doc, { color });
const groupLines = (text: string) =>
  text.split('\n').slice(text.split('\n').findIndex((l) => l.startsWith('== by')) + 1);

describe('report table (R4-2: terminal safety; labels and units)', () => {
  it.each([
    ['CSI clear screen', 'a\u001b[2Jb', 'a\\x1B[2Jb'],
    ['OSC 52', '\u001b]52;c;aGk=\u0007', '\\x1B]52;c;aGk=\\x07'],
    ['C1 CSI', '\u009b2J', '\\x9B2J'],
    ['a forged line', 'x\r\ng1-task-9  99', 'x\\x0D\\x0Ag1-task-9  99'],
    ['RTL override', 'abc\u202edef', 'abc\\u202Edef'],
  ])('R4-2: a title, key and model holding %s are shown escaped', (_what, raw, shown) => {
    const doc = reportDoc(
      [group({ key: raw, title: raw, models: { counts: [{ model: raw, subagents: 1 }], unreported: 0 } })],
      { missing: [{ task_session_id: raw, tool_call_id: raw }] },
      { models: { counts: [{ model: raw, subagents: 1 }], unreported: 0 } },
    );
    const text = table(doc);
    expect(text).not.toMatch(TERMINAL_CONTROL);
    expect(text).toContain(`${shown}  ${shown}`); // the key, then the title
    expect(text).toMatch(new RegExp(`^models\\s+${shown.replace(/[\\[\]()]/g, '\\$&')} 1`, 'm'));
  });

  it('R4-2: for any title, the group is one line and every column stays aligned', () => {
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.array(fc.string({ unit, maxLength: 12 }), { minLength: 1, maxLength: 4 }), (titles) => {
        const text = table(reportDoc(titles.map((title, i) => group({ key: `t${i}`, title }))));
        expect(text).not.toMatch(TERMINAL_CONTROL);
        const lines = groupLines(text);
        expect(lines).toHaveLength(2 + titles.length);
        // the dashes under each header mark the columns: every row's cells start where they do, in
        // the columns a terminal draws (a CJK character or an emoji takes two: issue 58 #17)
        const starts = [...lines[1]!.matchAll(/-+/g)].map((m) => m.index);
        for (const line of lines.slice(2)) {
          const subagents = starts[3]!; // key, title, subagents: right-aligned numbers end under their dashes
          expect(drawnIn(line, subagents - 2, subagents)).toBe('  ');
        }
      }),
    );
  });

  it('R4-2: colour codes never count in a width', () => {
    const ESC = '\u001b';
    const text = table(reportDoc([group()], { shortfall: { open: true, count: 2, checked: true } }), true);
    const lines = text.split('\n');
    const shortfall = lines.find((l) => l.startsWith('shortfall'))!;
    const capture = lines.find((l) => l.startsWith('capture_since'))!;
    expect(shortfall.endsWith(`${ESC}[31mOPEN: 2 message key(s) without a row${ESC}[0m`)).toBe(true);
    // both values start in one column
    expect(shortfall.indexOf(`${ESC}[31m`)).toBe(capture.indexOf('2026'));
  });

  it('a key the host never reported and a key "" have their own labels, in groups and models', () => {
    const text = table(
      reportDoc(
        [group({ key: null }), group({ key: '' })],
        {},
        {
          models: { counts: [{ model: '', subagents: 1 }], unreported: 2 },
        },
      ),
    );
    expect(
      groupLines(text)
        .slice(2)
        .map((l) => l.split('  ')[0]),
    ).toEqual(['(not reported)', '(empty)']);
    expect(text).toMatch(/^models\s+\(empty\) 1, \(not reported\) 2$/m);
  });

  it('costs carry their unit, subcents (with dollars in the totals)', () => {
    const text = table(
      reportDoc(
        [group({ cost_subcents: 15_000, cost_per_context_subcents: 3_750 })],
        {},
        {
          cost_subcents: 15_000,
          estimated_cost_subcents: 500,
          cost_per_context_subcents: 3_750,
        },
      ),
    );
    expect(text).toMatch(/^cost\s+15,000 subcents \(\$1\.50\)$/m);
    expect(text).toMatch(/^estimated part\s+500 subcents \(\$0\.0500\)$/m);
    expect(text).toMatch(/^cost per context\s+3,750 subcents \(\$0\.38\)$/m);
    expect(groupLines(text)[0]).toMatch(/cost \(subcents\)\s+per context \(subcents\)/);
  });

  it('the lower bound is said once, and the table’s own words hold no rule id or markdown', () => {
    const text = table(
      reportDoc([group({ lower_bound: true })], {
        lower_bound_sessions: 2,
        notes: [
          '2 session(s) in scope have activity before capture_since: their fan-out is a lower bound (groups marked lower_bound; AC-25).',
        ],
      }),
    );
    expect(text.match(/is a lower bound/g)).toHaveLength(1);
    expect(text).not.toMatch(/\b(?:AC|R)\d+(?:-\d+)?\b|`/);
  });

  it('R4-1: host text that looks like a secret is printed as it is', () => {
    const text = table(reportDoc([group({ title: 'Rotate password: hunter2 in prod', key: 'postgres://u:p@h/d' })]));
    expect(text).toContain('postgres://u:p@h/d  Rotate password: hunter2 in prod');
  });
  it('R4-3, R4-7: unreadable values are named per column, orphan rows in the totals and a column of their own', () => {
    const unreadable = { ...NOTHING_UNREADABLE, total_tokens: 2, observed_at: 1 };
    const text = table(reportDoc([group({ orphan_rows: 3 })], { unreadable }, { orphan_rows: 3 }));
    expect(text).toMatch(/^unreadable\s+total_tokens 2, observed_at 1 \(not reported for their figures\)$/m);
    expect(text).toMatch(/^orphan rows\s+3 \(subagent rows whose session is not in task_sessions\)$/m);
    expect(groupLines(text)[0]).toMatch(/sessions\s+orphan rows\s+contexts/);
    expect(table(reportDoc([group()]))).toMatch(/^unreadable\s+none$/m);
    expect(table(reportDoc([group()]))).not.toMatch(/orphan rows/);
  });
});

/** The value of the fact line `name` (names are padded: two spaces at least before the value). */
const factOf = (text: string, name: string) =>
  new RegExp(`^${name.replace(/[()]/g, '\\$&')}\\s{2,}(.*)$`, 'm').exec(text)?.[1];

describe('report table facts (docs/report.md#the-table), each written out', () => {
  type Doc = ReturnType<typeof reportDoc>;
  const withFilters = (filters: Partial<Doc['filters']>): Doc => {
    const d = reportDoc([group()]);
    return { ...d, filters: { ...d.filters, ...filters } };
  };

  it.each<[string, Doc, string, string]>([
    [
      'R3-8: capture not activated',
      reportDoc([], { capture_since: null }),
      'capture_since',
      'null (capture not activated)',
    ],
    ['R3-8: no backfill', reportDoc([]), 'backfill_through', 'null'],
    [
      'R3-8: backfill through an instant',
      reportDoc([], { backfill_through: '2026-07-31T23:59:59.999999Z' }),
      'backfill_through',
      '2026-07-31T23:59:59.999999Z',
    ],
    [
      'R3-8: the health check has not run',
      reportDoc([]),
      'verified_through',
      'null (no readable checkpoint: see the notes)',
    ],
    [
      'R3-8: the shortfall not checked',
      reportDoc([], { shortfall: { open: false, count: 0, checked: false } }),
      'shortfall',
      'not checked (see notes)',
    ],
    ['R3-8: no shortfall', reportDoc([]), 'shortfall', 'none'],
    [
      'R3-8: an open shortfall, counted',
      reportDoc([], { shortfall: { open: true, count: 1234, checked: true } }),
      'shortfall',
      'OPEN: 1,234 message key(s) without a row',
    ],
    [
      'R3-8: a missing key, session then tool call',
      reportDoc([], { missing: [{ task_session_id: 's1', tool_call_id: 'x1' }] }),
      '  missing',
      's1 x1',
    ],
    ['AC-25: no lower bound', reportDoc([]), 'lower bound', 'none'],
    [
      'AC-25: sessions before capture_since make a lower bound',
      reportDoc([], { lower_bound_sessions: 1234 }),
      'lower bound',
      '1,234 session(s) with activity before capture_since: their fan-out is a lower bound',
    ],
    [
      'R3-5: subagents by kind',
      reportDoc([], {}, { subagents: 1001, top_level: 2, nested: 3, async: 4 }),
      'subagents',
      '1,001 (top-level 2, nested 3, async 4)',
    ],
    [
      'R3-5: rows by state',
      reportDoc([], {}, { live: 1, backfill: 2, settled: 3, failed: 4 }),
      'rows',
      'live 1, backfill 2, settled 3, failed 4',
    ],
    ['R3-6: no duration reported', reportDoc([]), 'duration', '- (0 reported)'],
    [
      'R3-5, issue 58 #19: durations reported, as the page says them',
      reportDoc([], {}, { duration_ms: { reported: 2, p50: 162_185, p95: 2000, max: 3_725_000 } }),
      'duration',
      'p50 2 min 42 s, p95 2 s, max 1 h 2 min (2 reported)',
    ],
    [
      'R3-6: executions and the unknown ones',
      reportDoc([], {}, { executions: 1200, unknown_execution: 3 }),
      'executions',
      '1,200 (rows with an unknown execution: 3)',
    ],
    ['R3-5: turns', reportDoc([], {}, { turns: 1200 }), 'turns with subagents', '1,200'],
    ['R3-5: sessions', reportDoc([], {}, { sessions: 1200 }), 'sessions', '1,200'],
    ['R3-7: contexts', reportDoc([], {}, { contexts: 1200 }), 'contexts', '1,200 (sessions + subagents)'],
    ['R3-6: contexts not known', reportDoc([], {}, { contexts: null }), 'contexts', '-'],
    [
      'R3-7: a cost without an estimate',
      reportDoc([], {}, { cost_subcents: 20_000 }),
      'cost',
      '20,000 subcents ($2.00)',
    ],
    ['R3-6: no cost per context', reportDoc([]), 'cost per context', '-'],
    ['R3-6: no fan-out', reportDoc([]), 'fan-out (k: turns)', '-'],
    [
      'R3-5: fan-out buckets',
      reportDoc(
        [],
        {},
        {
          fan_out: [
            { top_level: 1, turns: 1500 },
            { top_level: 2, turns: 3 },
          ],
        },
      ),
      'fan-out (k: turns)',
      '1: 1,500, 2: 3',
    ],
    ['R3-6: nothing observed', reportDoc([]), 'observed', '-'],
    [
      'R3-5: first … last observation',
      reportDoc(
        [],
        {},
        { first_observed_at: '2026-08-01T00:00:00.000000Z', last_observed_at: '2026-08-02T00:00:00.000000Z' },
      ),
      'observed',
      '2026-08-01T00:00:00.000000Z … 2026-08-02T00:00:00.000000Z',
    ],
  ])('%s', (_, doc, name, value) => {
    expect(factOf(table(doc), name)).toBe(value);
  });

  it.each<[string, Doc, string]>([
    ['no filter', reportDoc([group()]), '== completeness (generated 2026-08-12T13:00:00.000000Z) =='],
    [
      'every filter, in order',
      withFilters({
        since: '2026-08-01T00:00:00.000000Z',
        until: '2026-08-02T00:00:00.000000Z',
        task: 't1',
        session: 's1',
      }),
      '== completeness (generated 2026-08-12T13:00:00.000000Z; since 2026-08-01T00:00:00.000000Z, until 2026-08-02T00:00:00.000000Z, task t1, session s1) ==',
    ],
  ])('R3-8: the completeness heading names the filters set: %s', (_, doc, heading) => {
    expect(table(doc).split('\n')[0]).toBe(heading);
  });

  it.each<[string, Doc, string | undefined]>([
    ['sorted, no limit', reportDoc([group()]), '== by task, sorted by subagents =='],
    [
      'sorted, with --limit',
      withFilters({ by: 'model', sort: 'tokens', limit: 5 }),
      '== by model, sorted by tokens, first 5 ==',
    ],
    ['without --by: no group section', withFilters({ by: null }), undefined],
  ])('R3-5: the group heading: %s', (_, doc, heading) => {
    expect(
      table(doc)
        .split('\n')
        .find((l) => l.startsWith('== by')),
    ).toBe(heading);
  });

  it('R3-5: --by with no group in scope says so', () => {
    expect(table(reportDoc([])).split('\n').at(-1)).toBe('(no groups in scope)');
  });

  it('R3-5: headings are the sections in order: completeness, totals, groups', () => {
    expect(
      table(reportDoc([group()]))
        .split('\n')
        .filter((l) => l.startsWith('=='))
        .map((l) => l.split(' ')[1]),
    ).toEqual(['completeness', 'totals', 'fan-out', 'by']);
  });

  it('R3-5: a group row shows its figures in the header’s order, a lower bound as yes', () => {
    const g = group({
      key: 'k',
      subagents: 1001,
      nested: 2,
      async: 3,
      tokens: { sum: 4000, reported: 5, p50: null, p95: null, max: null },
      duration_ms: { reported: 5, p50: 1, p95: 6000, max: 7000 },
      sessions: 7,
      contexts: 8,
      cost_subcents: 9000,
      cost_per_context_subcents: 10,
      lower_bound: true,
    });
    const [header, , row] = groupLines(table(reportDoc([g])));
    expect(header!.split(/\s{2,}/)).toEqual([
      'key',
      'subagents',
      'nested',
      'async',
      'context at finish (tokens)',
      'reported',
      'p95 duration',
      'sessions',
      'contexts',
      'cost (subcents)',
      'per context (subcents)',
      'lower bound',
    ]);
    expect(row!.trim().split(/\s{2,}/)).toEqual([
      'k',
      '1,001',
      '2',
      '3',
      '4,000',
      '5',
      '6 s',
      '7',
      '8',
      '9,000',
      '10',
      'yes',
    ]);
  });

  it('R3-5: the title column is there only when a group has a title; an exact group leaves lower bound empty', () => {
    const [untitled] = groupLines(table(reportDoc([group()])));
    expect(untitled).not.toMatch(/\btitle\b/);
    const lines = groupLines(table(reportDoc([group({ key: 'a', title: 'T' }), group({ key: 'b' })])));
    expect(lines[0]).toMatch(/^key\s+title\s+subagents/);
    expect(lines[2]).toMatch(/^a\s+T\s+3\s/);
    // an exact group's lower-bound cell is empty: the row ends with its cost per context (null: -)
    expect(
      lines[2]!
        .trimEnd()
        .split(/\s{2,}/)
        .at(-1),
    ).toBe('-');
  });

  it('R3-8: notes follow the facts, each as note: …; dimmed and headings bold only in colour', () => {
    const doc = reportDoc([group()], { notes: ['first', 'their fan-out is a lower bound (no session in scope)'] });
    expect(table(doc).split('\n')).toEqual(
      expect.arrayContaining(['note: first', 'note: their fan-out is a lower bound (no session in scope)']),
    );
    const coloured = table(doc, true).split('\n');
    expect(coloured).toContain('\u001b[2mnote: first\u001b[0m');
    expect(coloured).toContain('\u001b[1m== totals ==\u001b[0m');
  });

  it('R3-5: the totals are these facts, in this order (orphan rows only when there are some)', () => {
    const names = (doc: Doc) => {
      const lines = table(doc).split('\n');
      const from = lines.indexOf('== totals ==') + 1;
      const to = lines.findIndex((l, i) => i >= from && l.startsWith('=='));
      return lines.slice(from, to).map((l) => l.split(/\s{2,}/)[0]);
    };
    const facts = [
      'subagents',
      'rows',
      'context at finish',
      'tool uses',
      'duration',
      'executions',
      'turns with subagents',
      'sessions',
    ];
    // R6-5: spend last (one fact where it is not collected)
    const rest = [
      'contexts',
      'cost',
      'estimated part',
      'cost by source',
      'cost per context',
      'models',
      'fan-out (k: turns)',
      'observed',
      'spend',
    ];
    expect(names(reportDoc([group()]))).toEqual([...facts, ...rest]);
    expect(names(reportDoc([group()], {}, { orphan_rows: 1 }))).toEqual([...facts, 'orphan rows', ...rest]);
  });

  it('R4-7: one group with orphan rows gives every row the column, each with its own count', () => {
    const lines = groupLines(table(reportDoc([group({ key: 'a', orphan_rows: 3 }), group({ key: 'b' })])));
    const header = lines[0]!.split(/\s{2,}/);
    const at = header.indexOf('orphan rows');
    expect(at).toBe(header.indexOf('sessions') + 1);
    expect(lines.slice(2).map((l) => l.trim().split(/\s{2,}/)[at])).toEqual(['3', '0']);
  });

  it('AC-25: with a lower bound only the note repeating it is dropped; every other note is printed', () => {
    const text = table(
      reportDoc([group()], {
        lower_bound_sessions: 2,
        notes: ['2 session(s) …: their fan-out is a lower bound (AC-25).', 'the cost ledger has no turn_id'],
      }),
    );
    expect(text.split('\n').filter((l) => l.startsWith('note: '))).toEqual(['note: the cost ledger has no turn_id']);
  });
});

/** The lines of the section whose heading starts `== title`, up to the next heading. */
function sectionLines(text: string, title: string): string[] {
  const lines = text.split('\n');
  const from = lines.findIndex((l) => l.startsWith(`== ${title}`)) + 1;
  const to = lines.findIndex((l, i) => i >= from && l.startsWith('=='));
  return lines.slice(from, to < 0 ? undefined : to);
}

describe('report table: costs that are lower bounds, cost by source, fan-out cost, context at finish (R5-1 … R5-4)', () => {
  type Doc = ReturnType<typeof reportDoc>;
  const priced = { cost_subcents: 41_000, estimated_cost_subcents: 4_100, cost_per_context_subcents: 10_260 };
  const bound = { ...priced, unpriced_events: 3, cost_lower_bound: true };

  it.each<[string, Doc, string, string]>([
    [
      'R5-1: a cost that leaves out unpriced events is a lower bound, with its count',
      reportDoc([], {}, bound),
      'cost',
      '≥ 41,000 subcents (≥ $4.10, 3 events unpriced)',
    ],
    [
      'R6-9: the estimated part is a lower bound by its own unpriced events only',
      reportDoc([], {}, { ...bound, estimated_unpriced_events: 1, estimated_cost_lower_bound: true }),
      'estimated part',
      '≥ 4,100 subcents (≥ $0.41, 1 event unpriced)',
    ],
    [
      'R6-9: no unpriced event among the estimated ones: the estimated part is exact beside a lower-bound cost',
      reportDoc([], {}, { ...bound, estimated_unpriced_events: 0, estimated_cost_lower_bound: false }),
      'estimated part',
      '4,100 subcents ($0.41)',
    ],
    [
      'R6-11: a negative cost reads -$4.10, with separators in subcents and dollars alike',
      reportDoc([], {}, { ...priced, cost_subcents: -12_345_678, unpriced_events: 0 }),
      'cost',
      '-12,345,678 subcents (-$1,234.57)',
    ],
    [
      'R5-1, R6-11: the cost per context likewise, its dollars rounded down as a lower bound',
      reportDoc([], {}, bound),
      'cost per context',
      '≥ 10,260 subcents (≥ $1.02, 3 events unpriced)',
    ],
    [
      'R5-1: one unpriced event, in the singular',
      reportDoc([], {}, { ...bound, unpriced_events: 1 }),
      'cost per context',
      '≥ 10,260 subcents (≥ $1.02, 1 event unpriced)',
    ],
    [
      'R5-1: no unpriced event: the cost is exact, no ≥',
      reportDoc([], {}, { ...priced, unpriced_events: 0 }),
      'cost',
      '41,000 subcents ($4.10)',
    ],
    [
      'R5-1: a ledger without cost_source: the cost as before',
      reportDoc([], {}, priced),
      'cost',
      '41,000 subcents ($4.10)',
    ],
    [
      'R5-1: the completeness fact counts the unpriced events',
      reportDoc([], { unpriced_events: 1234 }),
      'unpriced events',
      '1,234 cost event(s) the host found no price for (stored as 0): every cost that leaves one out is a lower bound (≥)',
    ],
    ['R5-1: no unpriced event in scope', reportDoc([], { unpriced_events: 0 }), 'unpriced events', 'none in scope'],
    [
      'R5-1: unpriced events not known (null) are not 0',
      reportDoc([], { unpriced_events: null }),
      'unpriced events',
      'not known (the ledger does not record which events were priced)',
    ],
    [
      'R5-2: the cost by source: measured, list-priced and the rest',
      reportDoc([], {}, { ...bound, measured_cost_subcents: 30_000, list_priced_cost_subcents: 10_000 }),
      'cost by source',
      'measured 30,000 ($3.00), list-priced 10,000 ($1.00), other 1,000 ($0.10) subcents',
    ],
    [
      'R5-2: a ledger without cost_source: not known',
      reportDoc([], {}, priced),
      'cost by source',
      'not known (the ledger has no cost_source)',
    ],
    ['R5-2: no cost: -', reportDoc([]), 'cost by source', '-'],
    [
      'R5-4: the tokens are the context at finish, as reported, with p50, p95 and max',
      reportDoc([], {}, { tokens: { sum: 1_234_567, reported: 12, p50: 80_000, p95: 190_000, max: 201_000 } }),
      'context at finish',
      '1,234,567 tokens, as reported (12 reported; p50 80,000, p95 190,000, max 201,000)',
    ],
    ['R5-4: none reported', reportDoc([]), 'context at finish', '- (0 reported)'],
  ])('%s', (_, doc, name, value) => {
    expect(factOf(table(doc), name)).toBe(value);
  });

  it('R6-11, R6-5: each spend money column of the groups has one precision; a lower bound is rounded down', () => {
    const spend = (cost: number, p50: number, p95: number, lowerBound: boolean) => ({
      ...SPEND_NOT_COLLECTED,
      subagents_with_usage: 3,
      complete: 3,
      unpriced: 0,
      cost_subcents: cost,
      cost_lower_bound: lowerBound,
      cost_p50_subcents: p50,
      cost_p95_subcents: p95,
    });
    const lines = groupLines(
      table(
        reportDoc([
          group({ key: 'Explore', spend: spend(45_379, 1_722, 3_200, true) }),
          group({ key: 'Plan', spend: spend(27_200, 977, 3_500, false) }),
        ]),
      ),
    );
    const at = (line: string) => line.split(/\s{2,}/).slice(-5);
    expect(at(lines[2]!)).toEqual(['3', '≥ $4.53', '0', '$0.1722', '$0.32']);
    expect(at(lines[3]!)).toEqual(['3', '$2.72', '0', '$0.0977', '$0.35']);
  });

  it('R5-4: the table never calls the tokens usage or spend, and has no plain "tokens" fact', () => {
    const text = table(reportDoc([group()], {}, { tokens: { sum: 5, reported: 1, p50: 5, p95: 5, max: 5 } }))
      .split('\n')
      // R6-5: the spend facts are the runs' usage, never total_tokens: only they may say so
      .filter((line) => !line.startsWith('spend'))
      .join('\n');
    expect(text).not.toMatch(/\busage\b|\bspend\b/i);
    expect(factOf(text, 'tokens')).toBeUndefined();
  });

  it('R5-1: every group row shows a lower-bound cost as ≥ and its unpriced events; exact rows and unknown ones as they are', () => {
    const lines = groupLines(
      table(
        reportDoc([
          group({ key: 'a', ...bound }),
          group({ key: 'b', ...priced, unpriced_events: 0 }),
          group({ key: 'c', ...priced }),
        ]),
      ),
    );
    const header = lines[0]!.split(/\s{2,}/);
    const cells = (row: string) => {
      const c = row.trim().split(/\s{2,}/);
      return ['cost (subcents)', 'per context (subcents)', 'unpriced events'].map((h) => c[header.indexOf(h)]);
    };
    expect(lines.slice(2).map(cells)).toEqual([
      ['≥ 41,000', '≥ 10,260', '3'],
      ['41,000', '10,260', '0'],
      ['41,000', '10,260', '-'],
    ]);
    // a lower bound is right-aligned like any number: it ends where its column's dashes end
    const end = lines[1]!
      .split('  ')
      .slice(0, header.indexOf('cost (subcents)') + 1)
      .join('  ').length;
    expect(lines.slice(2).map((l) => l.slice(end - 8, end))).toEqual(['≥ 41,000', '  41,000', '  41,000']);
  });

  it('R5-1: without cost_source in any group there is no unpriced column', () => {
    expect(groupLines(table(reportDoc([group({ ...priced })])))[0]).not.toMatch(/unpriced/);
  });

  it('R5-1: the note that repeats the unpriced events is said once, in the fact', () => {
    const text = table(
      reportDoc([group()], {
        unpriced_events: 3,
        notes: [
          '3 cost event(s) in scope are unpriced (the host found no price and stored 0): they add nothing to any cost, so every cost figure that omits one is a lower bound (cost_lower_bound; R5-1).',
          'other note',
        ],
      }),
    );
    expect(text.split('\n').filter((l) => l.startsWith('note: '))).toEqual(['note: other note']);
  });

  it('R5-3, R6-11: one line per bucket, in order, costs in dollars, "-" where no turn is costed; the events without a turn; what a turn costs includes', () => {
    const doc: Doc = {
      ...reportDoc([group()]),
      fan_out_cost: fanOutCost(
        {
          '1': {
            turns: 85,
            costed_turns: 76,
            unpriced_turns: 9,
            cost_subcents: 245_285,
            mean_subcents: 3_227,
            median_subcents: 3_215,
            p95_subcents: 4_857,
          },
          '9+': { turns: 2, turns_without_cost: 2 },
        },
        { unattributed_events: 12, unattributed_cost_subcents: 17_000, unattributed_unpriced_events: 2 },
      ),
    };
    const lines = sectionLines(table(doc), 'fan-out cost');
    expect(lines[0]!.split(/\s{2,}/)).toEqual([
      'fan-out (top-level)',
      'turns',
      'costed',
      'unpriced',
      'without cost',
      'sum',
      'mean',
      'median',
      'p95',
    ]);
    expect(lines.slice(2, 9).map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ['0 subagents', '0', '0', '0', '0', '-', '-', '-', '-'],
      // R6-11: one precision per column: cents, every value being ten cents or more
      ['1 subagent', '85', '76', '9', '0', '$24.53', '$0.32', '$0.32', '$0.49'],
      ['2 subagents', '0', '0', '0', '0', '-', '-', '-', '-'],
      ['3 subagents', '0', '0', '0', '0', '-', '-', '-', '-'],
      ['4-5 subagents', '0', '0', '0', '0', '-', '-', '-', '-'],
      ['6-8 subagents', '0', '0', '0', '0', '-', '-', '-', '-'],
      ['9+ subagents', '2', '0', '0', '2', '-', '-', '-', '-'],
    ]);
    expect(factOf(lines.join('\n'), 'events without a turn')).toBe(
      '12 cost event(s) on no turn of task_session_turns: $1.70, 2 of them unpriced',
    );
    expect(lines.at(-1)).toContain(
      "where the agent reports the session's cost (Claude Code does), it includes what the turn's subagents spent",
    );
    expect(lines.at(-1)).toContain("what each subagent spent comes from the agents' own records of its run"); // R6-6
  });

  it.each<[string, Partial<FanOutCost>, string | undefined, string | undefined]>([
    ['no event without a turn', {}, 'none', undefined],
    [
      'without cost_source the unpriced count is not stated; unreadable started_at is',
      {
        unattributed_events: 1,
        unattributed_cost_subcents: 5,
        unattributed_unpriced_events: null,
        unreadable_started_at: 4,
      },
      '1 cost event(s) on no turn of task_session_turns: $0.0005',
      '4 turn(s) (in no window with --since/--until)',
    ],
  ])('R5-3: %s', (_, rest, unattributed, started) => {
    const text = sectionLines(table({ ...reportDoc([]), fan_out_cost: fanOutCost({}, rest) }), 'fan-out cost').join(
      '\n',
    );
    expect(factOf(text, 'events without a turn')).toBe(unattributed);
    expect(factOf(text, 'unreadable started_at')).toBe(started);
  });

  it.each<[string, Partial<ReturnType<typeof reportDoc>['filters']>, number, string]>([
    [
      'without filters the parts add up to the total cost, every subcent shown',
      {},
      834_800,
      '$61.0300 in costed turns + $3.5000 priced in turns not costed + $18.9500 on no turn = $83.4800, the total cost',
    ],
    [
      'with a filter they need not, and the line says why',
      { task: 't1' },
      700_000,
      '$61.0300 in costed turns + $3.5000 priced in turns not costed + $18.9500 on no turn; the total cost is $70.0000: a filter or a window selects turns and cost events apart, so the two need not agree',
    ],
  ])('R6-10: the line that closes the fan-out cost: %s', (_, filters, total, line) => {
    const base = reportDoc([], {}, { cost_subcents: total });
    const doc = {
      ...base,
      filters: { ...base.filters, by: null, ...filters },
      fan_out_cost: fanOutCost(
        {
          '1': {
            turns: 3,
            costed_turns: 2,
            cost_subcents: 410_300,
            unpriced_turns: 1,
            uncosted_turns_priced_cost_subcents: 35_000,
          },
          '2': { turns: 1, costed_turns: 1, cost_subcents: 200_000 },
        },
        { unattributed_events: 4, unattributed_cost_subcents: 189_500 },
      ),
    };
    const lines = sectionLines(table(doc), 'fan-out cost');
    expect(factOf(lines.join('\n'), 'with the total')).toBe(line);
    // the bucket's own part, in its column
    expect(lines[0]).toMatch(/p95\s+priced, not costed$/);
    expect(lines[3]).toMatch(/\$3\.50$/);
  });

  it('R5-3: an unreadable cost column only when a bucket has such turns; unpriced turns not known are -', () => {
    const doc = {
      ...reportDoc([]),
      fan_out_cost: fanOutCost({ '2': { turns: 3, unreadable_cost_turns: 1, unpriced_turns: null } }),
    };
    const lines = sectionLines(table(doc), 'fan-out cost');
    expect(lines[0]).toMatch(/without cost\s+unreadable cost\s+sum/);
    expect(
      lines[4]!
        .trim()
        .split(/\s{2,}/)
        .slice(0, 6),
    ).toEqual(['2 subagents', '3', '0', '-', '0', '1']);
    expect(sectionLines(table({ ...reportDoc([]), fan_out_cost: fanOutCost() }), 'fan-out cost')[0]).not.toMatch(
      /unreadable/,
    );
  });

  it.each([
    [
      "the ledger's turn_id is missing",
      ['fan_out_cost is null: office_cost_events has no turn_id column (a host before its turn attribution).'],
      'not available: office_cost_events has no turn_id column (a host before its turn attribution).',
    ],
    [
      'there is no ledger',
      [
        'cost figures are null: the store has no office_cost_events table (the host office cost ledger) with session_id, task_id, cost_subcents, estimated and occurred_at.',
      ],
      'not available: the store has no office_cost_events table (the host office cost ledger) with session_id, task_id, cost_subcents, estimated and occurred_at.',
    ],
    ['no note says why', [], 'not available: see the notes'],
  ])('R5-3: fan_out_cost null: "not available" with the reason when %s', (_, notes, line) => {
    expect(sectionLines(table(reportDoc([], { notes })), 'fan-out cost')).toEqual([line]);
  });

  it('R5-3: a hostile reason is printed terminal-safe', () => {
    const text = table(reportDoc([], { notes: ['fan_out_cost is null: \u001b[2J gone'] }));
    expect(sectionLines(text, 'fan-out cost')).toEqual(['not available: \\x1B[2J gone']);
  });
});
