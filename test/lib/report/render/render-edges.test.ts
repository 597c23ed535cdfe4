import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { ReportDocument } from '../../../../lib/report/document.js';
import { renderReportCsv } from '../../../../lib/report/render/csv.js';
import { html, text, trusted } from '../../../../lib/report/render/escape.js';
import { renderHtml } from '../../../../lib/report/render/html.js';
import { makeReportDocument } from '../../../../local/report-documents.js';
import { section } from '../../../support/page-figures.js';

/*
 * The renderers' edges that a plausible bug moves (issue 30, items 14-17): the page's escape set
 * (docs/page.md#escaping), CSV cells a spreadsheet would run (docs/report.md#csv), and the
 * tasks table's lower-bound marker (AC-25). Expected values are fixed strings written by hand.
 */

describe('the page’s escape boundary (docs/page.md#escaping, R3-9)', () => {
  it.each([
    ['&', '&amp;'],
    ['<', '&lt;'],
    ['>', '&gt;'],
    ['"', '&quot;'],
    ["'", '&#39;'],
    ['\u2028', '&#x2028;'],
    ['\u2029', '&#x2029;'],
    ['&amp;', '&amp;amp;'],
    ['&#39;', '&amp;#39;'],
    ["O'Brien & <Co>", 'O&#39;Brien &amp; &lt;Co&gt;'],
    ['\u0000a\u0008b\u000bc\u007f', '\uFFFDa\uFFFDb\uFFFDc\uFFFD'],
    ['tab\tLF\nCR\r', 'tab\tLF\nCR\r'],
  ])('R3-9: text(%j) is %j', (input, escaped) => {
    expect(text(input)).toBe(escaped);
  });

  it('R3-9: every C0 control but tab, LF and CR, and DEL, becomes U+FFFD; every other ASCII character stays itself or its reference', () => {
    const REFERENCE: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
    for (let code = 0; code <= 0x7f; code++) {
      const c = String.fromCharCode(code);
      const control = (code < 0x20 && c !== '\t' && c !== '\n' && c !== '\r') || code === 0x7f;
      expect(text(`a${c}b`), `U+${code.toString(16).padStart(4, '0')}`).toBe(
        `a${control ? '\uFFFD' : (REFERENCE[c] ?? c)}b`,
      );
    }
  });

  it('R3-9: the html template escapes every interpolated value (strings, numbers, arrays), drops null and undefined, and passes markup it made or was given as trusted', () => {
    const inner = html`<b>${'<i>'}</b>`;
    const out = html`<p title="${'"x"'}">${null}${undefined}${['<', inner, 7]}${1234.5}${trusted('<svg/>')}</p>`;
    expect(out.value).toBe('<p title="&quot;x&quot;">&lt;<b>&lt;i&gt;</b>71234.5<svg/></p>');
    expect(String(out)).toBe(out.value);
    expect(html`plain`.value).toBe('plain');
  });

  it("R3-9: a task title with ' and & reaches the tasks table as references, never raw", () => {
    const doc = makeReportDocument();
    doc.groups[0] = { ...doc.groups[0]!, title: `Tom's "fix" & <b>more</b>` };
    const tasks = section(renderHtml(doc), 'tasks');
    expect(tasks).toContain('Tom&#39;s &quot;fix&quot; &amp; &lt;b&gt;more&lt;/b&gt;');
    expect(tasks).not.toContain("Tom's");
    expect(tasks).not.toContain('<b>more');
  });
});

/** The CSV's rows read back by an independent parser, the completeness cells before the header skipped (R4-6). */
function readCsv(csv: string): Record<string, string>[] {
  const records = parse(csv, { relax_column_count: true }) as string[][];
  const header = records.findIndex((r) => r.length > 1);
  return records.slice(header + 1).map((r) => Object.fromEntries(records[header]!.map((c, i) => [c, r[i]!])));
}

describe('CSV cells a spreadsheet would run (docs/report.md#csv, R4-1: escaped for the medium)', () => {
  const FORMULAS = ['=SUM(A1)', '+1+1', '-2+3', '@cmd', '\tx', '\rx', '＝1+1'];

  it.each(FORMULAS)('R4-1: a title %j reads back with a leading quote, so it is text, not a formula', (title) => {
    const doc: ReportDocument = makeReportDocument();
    doc.groups = [{ ...doc.groups[0]!, title, key: 'task-a' }];
    const [row] = readCsv(renderReportCsv(doc));
    expect(row!.title).toBe(`'${title}`);
    expect(row!.key).toBe('task-a');
  });

  it('R4-1, R4-6: a group key that starts a formula is escaped, a model name is safe in its JSON cell; plain text is not', () => {
    const doc: ReportDocument = makeReportDocument();
    doc.filters = { ...doc.filters, by: 'model' };
    doc.groups = [
      {
        ...doc.groups[0]!,
        by: 'model',
        key: '=HYPERLINK("x")',
        title: 'plain title',
        models: { counts: [{ model: '@evil', subagents: 3 }], unreported: 0 },
      },
    ];
    const [row] = readCsv(renderReportCsv(doc));
    expect(row).toMatchObject({ key: `'=HYPERLINK("x")`, title: 'plain title' });
    // R4-6: the models cell is a JSON array: it starts with [, never a formula, and holds the name exactly
    expect(row!.models).toBe('[{"model":"@evil","subagents":3}]');
  });
});

describe('CSV layout (docs/report.md#csv, R3-6, R3-8)', () => {
  const doc = (): ReportDocument => {
    const d = makeReportDocument({ shortfall: true });
    d.completeness = {
      ...d.completeness,
      capture_since: '2026-07-20T00:00:00.000000Z',
      backfill_through: '2026-07-19T23:59:59.999999Z',
      verified_through: '2026-07-25T00:00:00.000000Z',
      shortfall: { open: true, count: 3, checked: true },
      missing: [{ task_session_id: 'ses-x', tool_call_id: 'toolu_y' }],
      lower_bound_sessions: 7,
      notes: ['first note\r\nsecond line', 'another note'],
    };
    d.groups = [
      {
        ...d.groups[0]!,
        key: 'task-a',
        title: 'Task A',
        lower_bound: false,
        models: {
          counts: [
            { model: 'opus', subagents: 2 },
            { model: 'sonnet', subagents: 1 },
          ],
          unreported: 4,
        },
        fan_out: [
          { top_level: 1, turns: 3 },
          { top_level: 2, turns: 1 },
        ],
      },
    ];
    return d;
  };

  it('R3-8, R4-6: the comment cells state every completeness value, each note whole in one cell', () => {
    const records = parse(renderReportCsv(doc()), { relax_column_count: true }) as string[][];
    const comments = records.slice(
      0,
      records.findIndex((r) => r.length > 1),
    );
    for (const c of comments) expect(c).toHaveLength(1);
    const block = comments.map((c) => c[0]).join('\n');
    for (const value of [
      '2026-07-20T00:00:00.000000Z',
      '2026-07-19T23:59:59.999999Z',
      '2026-07-25T00:00:00.000000Z',
      'ses-x',
      'toolu_y',
      'another note',
    ])
      expect(block).toContain(value);
    expect(comments.some(([l]) => /shortfall\b.*\b3\b/i.test(l!))).toBe(true);
    expect(comments.some(([l]) => /lower_bound_sessions\b.*\b7\b/.test(l!))).toBe(true);
    // R4-1: the note is not rewritten; its line break stays inside its quoted cell
    expect(comments).toContainEqual(['# note: first note\r\nsecond line']);
  });

  it('R3-5: the header names every figure; a row per group with its lists, false for an exact group, empty for null', () => {
    const d = doc();
    d.groups[0] = {
      ...d.groups[0]!,
      cost_subcents: null,
      duration_ms: { reported: 0, p50: null, p95: null, max: null },
    };
    const [row] = readCsv(renderReportCsv(d));
    for (const column of [
      'by',
      'key',
      'title',
      'lower_bound',
      'started_at',
      'subagents',
      'top_level',
      'nested',
      'async',
      'live',
      'backfill',
      'settled',
      'failed',
      'tokens_sum',
      'tokens_reported',
      'tool_uses_sum',
      'tool_uses_reported',
      'duration_reported',
      'duration_p50',
      'duration_p95',
      'duration_max',
      'models',
      'models_unreported',
      'fan_out',
      'executions',
      'unknown_execution',
      'turns',
      'sessions',
      'contexts',
      'cost_subcents',
      'estimated_cost_subcents',
      'cost_per_context_subcents',
      'first_observed_at',
      'last_observed_at',
    ])
      expect(row, column).toHaveProperty(column);
    const g = d.groups[0]!;
    expect(row).toMatchObject({
      by: 'task',
      key: 'task-a',
      title: 'Task A',
      lower_bound: 'false',
      subagents: String(g.subagents),
      nested: String(g.nested),
      models_unreported: '4',
      cost_subcents: '',
      duration_p50: '',
      duration_reported: '0',
    });
    const models = row!.models ?? '';
    for (const part of ['opus', '2', 'sonnet', '1']) expect(models).toContain(part);
    // most first, and the two entries apart (R4-6: a JSON array)
    expect(JSON.parse(models)).toEqual([
      { model: 'opus', subagents: 2 },
      { model: 'sonnet', subagents: 1 },
    ]);
    expect(row!.fan_out).toMatch(/1\D+3\D+2\D+1/);
  });

  it('R3-5: without --by one row holds the totals', () => {
    const d = doc();
    d.filters = { ...d.filters, by: null };
    const rows = readCsv(renderReportCsv(d));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ by: 'totals', key: '', subagents: String(d.totals.subagents) });
  });
});

describe('the tasks table marks a lower bound (AC-25, R3-9)', () => {
  it('R3-6, AC-25: a task group that is a lower bound carries the ≥ marker in its row; one that is not, none', () => {
    const doc = makeReportDocument();
    const [a, b] = doc.groups;
    doc.groups = [
      { ...a!, key: 'task-lower', lower_bound: true },
      { ...b!, key: 'task-exact', lower_bound: false, cost_lower_bound: false },
    ];
    const tasks = section(renderHtml(doc), 'tasks');
    const row = (key: string) => {
      const start = tasks.indexOf(`<tr data-key="${key}"`);
      expect(start, key).toBeGreaterThanOrEqual(0);
      return tasks.slice(start, tasks.indexOf('</tr>', start));
    };
    expect(row('task-lower')).toContain('≥');
    expect(row('task-exact')).not.toContain('≥');
  });
});
