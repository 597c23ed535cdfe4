import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { ReportDocument } from '../../../../lib/report/document.js';
import { renderReportCsv } from '../../../../lib/report/render/csv.js';
import { text } from '../../../../lib/report/render/escape.js';
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

  it("R3-9: a task title with ' and & reaches the tasks table as references, never raw", () => {
    const doc = makeReportDocument();
    doc.groups[0] = { ...doc.groups[0]!, title: `Tom's "fix" & <b>more</b>` };
    const tasks = section(renderHtml(doc), 'tasks');
    expect(tasks).toContain('Tom&#39;s &quot;fix&quot; &amp; &lt;b&gt;more&lt;/b&gt;');
    expect(tasks).not.toContain("Tom's");
    expect(tasks).not.toContain('<b>more');
  });
});

/** The CSV's rows read back by an independent parser, comments skipped. */
const readCsv = (csv: string) => parse(csv, { comment: '#', columns: true }) as Record<string, string>[];

describe('CSV cells a spreadsheet would run (docs/report.md#csv, R4-1: escaped for the medium)', () => {
  const FORMULAS = ['=SUM(A1)', '+1+1', '-2+3', '@cmd', '\tx', '\rx', '＝1+1'];

  it.each(FORMULAS)('R4-1: a title %j reads back with a leading quote, so it is text, not a formula', (title) => {
    const doc: ReportDocument = makeReportDocument();
    doc.groups = [{ ...doc.groups[0]!, title, key: 'task-a' }];
    const [row] = readCsv(renderReportCsv(doc));
    expect(row!.title).toBe(`'${title}`);
    expect(row!.key).toBe('task-a');
  });

  it('R4-1: a group key and a model name that start a formula are escaped too; plain text is not', () => {
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
    expect(row).toMatchObject({ key: `'=HYPERLINK("x")`, title: 'plain title', models: "'@evil=3" });
  });
});

describe('the tasks table marks a lower bound (AC-25, R3-9)', () => {
  it('R3-6, AC-25: a task group that is a lower bound carries the ≥ marker in its row; one that is not, none', () => {
    const doc = makeReportDocument();
    const [a, b] = doc.groups;
    doc.groups = [
      { ...a!, key: 'task-lower', lower_bound: true },
      { ...b!, key: 'task-exact', lower_bound: false },
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
