import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PAGE_DEFAULTS } from '../../../../lib/defaults.js';
import { type ReportDocument, reportDocument } from '../../../../lib/report/document.js';
import { text } from '../../../../lib/report/render/escape.js';
import { renderHtml } from '../../../../lib/report/render/html.js';
import { HOSTILE, makeReportDocument } from '../../../../local/report-documents.js';
import { decode, pageFigures, resolve, section, strayNumbers } from '../../../support/page-figures.js';

const doc = makeReportDocument({ shortfall: true });
const page = renderHtml(doc);

function expectFiguresMatch(html: string, document: ReportDocument): number {
  const figures = pageFigures(html);
  for (const f of figures) {
    const want = resolve(document, f.path);
    expect(f.value, f.path).toEqual(want);
    if (typeof want === 'number') expect(f.shown, f.path).toBe(want.toLocaleString('en-US'));
    if (typeof want === 'string') expect(f.shown, f.path).toBe(want);
  }
  return figures.length;
}

describe('the page: a rendering of the report document (R3-9, docs/page.md)', () => {
  it('R3-9: every figure on the page is the document value at the path it names, shown as that value', () => {
    expect(expectFiguresMatch(page, doc)).toBeGreaterThan(100);
  });

  it('R3-9: the banner and the tasks table show no number that is not a marked figure of the document', () => {
    for (const id of ['completeness', 'totals', 'tasks']) {
      expect(strayNumbers(section(page, id)), id).toEqual([]);
      expect(pageFigures(section(page, id)).length, id).toBeGreaterThanOrEqual(5);
    }
  });

  it('R3-9: the tasks table has one row per task group, with sessions, subagents, contexts, reported tokens (n), cost and cost per context', () => {
    const tasks = section(page, 'tasks');
    expect(tasks.match(/<tr data-key=/g)).toHaveLength(doc.groups.length);
    const paths = new Set(pageFigures(tasks).map((f) => f.path));
    for (const [i, g] of doc.groups.entries()) {
      expect(tasks).toContain(`data-key="${g.key}"`);
      for (const field of [
        'sessions',
        'subagents',
        'contexts',
        'tokens.sum',
        'tokens.reported',
        'cost_subcents',
        'cost_per_context_subcents',
      ]) {
        expect(paths.has(`groups.${i}.${field}`), `groups.${i}.${field}`).toBe(true);
      }
    }
    expect(tasks).toMatch(/<th scope="col">Task<\/th>/);
  });

  it('R3-8: an open shortfall is a red alert with its count and missing keys; a closed one is not', () => {
    const banner = section(page, 'completeness');
    expect(banner).toContain('class="banner open"');
    expect(banner).toContain('role="alert"');
    for (const m of doc.completeness.missing) expect(banner).toContain(`>${m.tool_call_id}</code>`);
    const closed = section(renderHtml(makeReportDocument()), 'completeness');
    expect(closed).not.toContain('role="alert"');
    expect(closed).toContain('No open shortfall');
  });

  it('R3-8: the banner states verified_through, capture_since, backfill_through and the lower-bound sessions', () => {
    const paths = pageFigures(section(page, 'completeness')).map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'completeness.verified_through',
        'completeness.capture_since',
        'completeness.backfill_through',
        'completeness.shortfall.count',
        'completeness.lower_bound_sessions',
      ]),
    );
  });

  it('R3-6: a null figure is shown in words, never as 0 (not activated, no check, no cost data, nobody reported)', () => {
    const bare = makeReportDocument({ subagents: 0, days: 0, tasks: 0, trees: 0 });
    bare.completeness = { ...bare.completeness, capture_since: null, backfill_through: null, verified_through: null };
    bare.totals = {
      ...bare.totals,
      cost_subcents: null,
      estimated_cost_subcents: null,
      cost_per_context_subcents: null,
    };
    const html = renderHtml(reportDocument.parse(bare));
    const nulls = pageFigures(html).filter((f) => f.value === null);
    expect(nulls.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'completeness.verified_through',
        'completeness.capture_since',
        'totals.tokens.sum',
        'totals.duration_ms.p50',
        'totals.cost_subcents',
      ]),
    );
    for (const f of nulls) expect(f.shown, f.path).not.toMatch(/\d/);
    expect(html).toContain('the check has not run');
    expect(html).toContain('never activated');
  });

  it('R3-9: six charts drawn on the server as inline SVG with their labels as real text, no script', () => {
    const charts = section(page, 'charts');
    const svgs = charts.match(/<svg [^>]*role="img"/g) ?? [];
    expect(svgs).toHaveLength(6);
    expect(charts).toMatch(/<text[^>]*>2026-10-01<\/text>/);
    expect(page).not.toMatch(/<script/i);
    // the duration chart's n is the document's
    expect(charts).toContain(`n = ${doc.totals.duration_ms.reported} of ${doc.totals.subagents}`);
  });

  it("R3-9: a document without the page's series or histogram still renders, each chart saying what is missing", () => {
    const { series: _s, distributions: _d, ...plain } = makeReportDocument();
    const html = renderHtml(reportDocument.parse({ ...plain, filters: { ...plain.filters, by: null } }));
    expect(html).toContain('no per-day groups');
    expect(html).toContain('no per-type groups');
    expect(html).toContain('no duration histogram');
    expect(html).toContain('no task groups');
    expectFiguresMatch(html, reportDocument.parse({ ...plain, filters: { ...plain.filters, by: null } }));
  });

  it('R3-9: the fan-out trees are native <details>, one per turn, children nested under their parent', () => {
    const trees = section(page, 'trees');
    expect(trees.match(/<details class="turn"/g)).toHaveLength(doc.trees.length);
    const nested = doc.trees.flatMap((t) => t.subagents).find((n) => n.children.length > 0)!;
    const at = trees.indexOf(`>${nested.tool_call_id}</code>`);
    const child = trees.indexOf(`>${nested.children[0]!.tool_call_id}</code>`);
    expect(at).toBeGreaterThan(0);
    expect(trees.slice(at, child)).toContain('<ul class="tree">');
  });

  it('R3-9: a strict Content-Security-Policy: nothing loads or runs, inline style only; a title and a print style sheet', () => {
    const csp = page.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)?.[1];
    expect(decode(csp!)).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'",
    );
    expect(page).toMatch(/<title>Subagents report, [^<]+<\/title>/);
    expect(page).toContain('@media print');
    expect(page).toContain('@media (prefers-color-scheme: dark)');
    expect(page).not.toMatch(/\b(src|href)="(https?:)?\/\//);
  });

  it('R3-9: hostile text from the database (<script>, </style>, quotes, &, an entity, U+2028) is escaped everywhere it appears, as written by hand', () => {
    const hostile = makeReportDocument({ hostile: true, shortfall: true });
    const html = renderHtml(hostile);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    // the page's own style sheet and each chart's: as many as on a page of plain text, none from the data
    const count = (h: string, s: RegExp) => h.match(s)?.length ?? 0;
    expect(count(html, /<\/style>/g)).toBe(count(page, /<\/style>/g));
    expect(count(html, /<style[ >]/g)).toBe(count(html, /<\/style>/g));
    // written by hand from docs/page.md#escaping, not by text(): `& < > " '` as references, U+2028 as &#x2028;
    const ESCAPED =
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;/style&gt;&lt;img src=x onerror=alert(1)&gt;&quot;&#39; R&amp;D &amp;amp;&#x2028;end';
    expect(HOSTILE).toContain('&');
    expect(section(html, 'tasks')).toContain(`${ESCAPED} task 0`);
    expect(section(html, 'trees')).toContain(`>${ESCAPED}<`);
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toContain('\u2028');
    // every & on the page starts a character reference: none is the data's own
    expect(html.match(/&(?!(?:[a-z]+|#\d+|#x[0-9a-f]+);)/gi) ?? []).toEqual([]);
    expectFiguresMatch(html, hostile);
  });

  /** Any text, rich in what the boundary must escape: markup, quotes, &, references, line separators, controls. */
  const hostileText = fc.string({
    unit: fc.oneof(
      fc.constantFrom(
        '&',
        '<',
        '>',
        '"',
        "'",
        '\u2028',
        '\u2029',
        '&amp;',
        '&lt;',
        '&#39;',
        '&#x2028;',
        '\u0000',
        '\u007f',
      ),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
  });

  it('R3-9: the generator below really produces every character the page escapes (so the property is not hollow)', () => {
    const sample = fc.sample(hostileText, { numRuns: 500, seed: 1 }).join('');
    for (const c of ['&', '<', '>', '"', "'", '\u2028', '\u2029', '&amp;', '\u0000']) expect(sample).toContain(c);
  });

  it('R3-9: text() leaves no markup character for any input and reads back as the input (controls as U+FFFD)', () => {
    fc.assert(
      fc.property(hostileText, (s) => {
        const out = text(s);
        expect(out).not.toMatch(/[<>"'\u2028\u2029]/);
        expect(out).not.toMatch(/&(?!(?:amp|lt|gt|quot|#39|#x2028|#x2029);)/);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls text() replaces
        expect(decode(out)).toBe(s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '\uFFFD'));
      }),
    );
  });

  it('R3-9: size bounded: a 100k-subagent document (365 days, 5,000 tasks, 2,000 trees) renders under 2 MB, trees and task rows capped by the options', () => {
    const big = makeReportDocument({
      subagents: 100_000,
      days: 365,
      tasks: 5_000,
      types: 40,
      models: 12,
      trees: 2_000,
    });
    const html = renderHtml(big);
    expect(Buffer.byteLength(html)).toBeLessThan(2 * 1024 * 1024);
    expect(html.match(/<details class="turn"/g)).toHaveLength(PAGE_DEFAULTS.trees);
    expect(section(html, 'tasks').match(/<tr data-key=/g)).toHaveLength(PAGE_DEFAULTS.tasks);
    expect(renderHtml(big, { trees: 3, tasks: 7 }).match(/<details class="turn"/g)).toHaveLength(3);
    expectFiguresMatch(section(html, 'tasks'), big);
  });
});
