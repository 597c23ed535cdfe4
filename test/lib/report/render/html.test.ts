import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PAGE_DEFAULTS } from '../../../../lib/defaults.js';
import { FAN_OUT_COST_BUCKETS, type ReportDocument, reportDocument } from '../../../../lib/report/document.js';
import { text } from '../../../../lib/report/render/escape.js';
import { renderHtml } from '../../../../lib/report/render/html.js';
import { HOSTILE, hugeTurn, makeReportDocument } from '../../../../local/report-documents.js';
import { decode, pageFigures, resolve, section, strayNumbers } from '../../../support/page-figures.js';

const doc = makeReportDocument({ shortfall: true });
const page = renderHtml(doc);

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** An instant as a person reads it (R4-10), by way of Date: an oracle apart from the page's own. */
function humanAt(rfc3339: string): string {
  const d = new Date(rfc3339);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** "850 ms", "48.2 s", "5 min 2 s", "3 h 12 min", "1 day 3 h" read back as ms (undefined: not a duration). */
function readDuration(shown: string): number | undefined {
  const parts = [...shown.matchAll(/([\d,.]+) (ms|s|min|h|days?)\b/g)];
  if (parts.length === 0 || parts.map((m) => m[0]).join(' ') !== shown) return undefined;
  const unit = { ms: 1, s: 1_000, min: 60_000, h: 3_600_000, day: 86_400_000, days: 86_400_000 } as const;
  return parts.reduce((sum, m) => sum + Number(m[1]!.replaceAll(',', '')) * unit[m[2] as keyof typeof unit], 0);
}

/** "$82.10" or "$0.0133" read back as subcents, with its digits after the point (undefined: not a dollar amount). */
function readDollars(shown: string): { subcents: number; decimals: number } | undefined {
  const m = /^(-?)\$([\d,]+)\.(\d{2}|\d{4})$/.exec(shown);
  if (m === null) return undefined;
  const value = Number(m[2]!.replaceAll(',', '')) * 10_000 + Number(m[3]!.padEnd(4, '0'));
  return { subcents: m[1] === '-' ? -value : value, decimals: m[3]!.length };
}

/** R6-9, R5-1: whether the cost figure at `path` is a lower bound (its scope's flag for it). */
function isLowerBound(document: ReportDocument, path: string): boolean {
  const base = path.slice(0, path.lastIndexOf('.'));
  const figure = path.slice(path.lastIndexOf('.') + 1);
  const flag = {
    cost_subcents: 'cost_lower_bound',
    cost_per_context_subcents: 'cost_lower_bound',
    estimated_cost_subcents: 'estimated_cost_lower_bound',
  }[figure];
  return flag !== undefined && !base.startsWith('fan_out_cost') && resolve(document, `${base}.${flag}`) === true;
}

/**
 * Every figure on the page is the document's value at its path, and shows it in its unit (R4-10):
 * counts with separators, durations and dollars that read back to the value within their rounding,
 * instants as "1 Dec 2026, 17:41 UTC".
 */
function expectFiguresMatch(html: string, document: ReportDocument): number {
  const figures = pageFigures(html);
  for (const f of figures) {
    const want = resolve(document, f.path);
    expect(f.value, f.path).toEqual(want);
    if (typeof want === 'string') expect(f.shown, f.path).toBe(humanAt(want));
    if (typeof want !== 'number') continue;
    if (/duration_ms(\.(p50|p95|max))?$/.test(f.path)) {
      const ms = readDuration(f.shown);
      expect(ms, `${f.path}: ${f.shown}`).toBeDefined();
      // tenths of a second under a minute, whole seconds under an hour, whole minutes under a day,
      // whole hours under ten days, whole days beyond (lib/units.ts, issue 58 #19)
      const tolerance =
        want < 1_000
          ? 0
          : want < 60_000
            ? 50
            : want < 3_600_000
              ? 500
              : want < 86_400_000
                ? 30_000
                : want < 864_000_000
                  ? 1_800_000
                  : 43_200_000;
      expect(Math.abs(ms! - want), `${f.path}: ${f.shown}`).toBeLessThanOrEqual(tolerance);
    } else if (/_subcents$/.test(f.path)) {
      // R6-11: every subcent, or cents (a lower bound rounded down, never up; else to the nearest)
      const shown = readDollars(f.shown);
      expect(shown, `${f.path}: ${f.shown}`).toBeDefined();
      const off = want - shown!.subcents;
      if (shown!.decimals === 4) expect(off, `${f.path}: ${f.shown}`).toBe(0);
      else if (isLowerBound(document, f.path))
        expect([off >= 0, off < 100], `${f.path}: ${f.shown}`).toEqual([true, true]);
      else expect(Math.abs(off), `${f.path}: ${f.shown}`).toBeLessThanOrEqual(50);
    } else if (f.path.endsWith('.subagent_share'))
      // R6-6: a ratio as a percentage, at most one decimal
      expect(f.shown, f.path).toBe(`${+(want * 100).toFixed(1)}%`);
    else expect(f.shown, f.path).toBe(want.toLocaleString('en-US'));
  }
  return figures.length;
}

describe('the page: what each subagent spent (R6-6)', () => {
  const s = doc.totals.spend;
  const n = (v: number) => v.toLocaleString('en-US');
  const words = (html: string) =>
    decode(html.replace(/<svg[\s\S]*?<\/svg>/g, '[svg]').replace(/<[^>]+>/g, ' '))
      .replace(/\s+/g, ' ')
      .trim();

  it('R6-6: the totals and the spend chart state the coverage in these words: "usage known for N of M subagents"', () => {
    const coverage = `usage known for ${n(s.subagents_with_usage!)} of ${n(doc.totals.subagents)} subagents`;
    expect(words(section(page, 'totals'))).toContain(coverage);
    const chart = section(page, 'charts').slice(section(page, 'charts').indexOf('id="chart-spend-by-type"'));
    expect(words(chart.slice(0, chart.indexOf('</figure>')))).toContain(coverage.replace(/^u/, 'U'));
  });

  it("R6-6: a chart of what one subagent spent by type, its figures the type series' spend, median and p95 per type", () => {
    const charts = section(page, 'charts');
    const chart = charts.slice(charts.indexOf('<figure class="chart" id="chart-spend-by-type">'));
    const figure = chart.slice(0, chart.indexOf('</figure>'));
    expect(figure).toContain('<h3 id="chart-spend-by-type-title">What one subagent spent, by type</h3>');
    expect(figure.match(/<svg [^>]*role="img"/g)).toHaveLength(2);
    const paths = new Set(pageFigures(figure).map((f) => f.path));
    for (const [i] of doc.series!.type!.entries())
      for (const field of ['spend.subagents_with_usage', 'spend.cost_p50_subcents', 'spend.cost_p95_subcents'])
        expect(paths, `series.type.${i}.${field}`).toContain(`series.type.${i}.${field}`);
  });

  it('R6-6: the page says where spend comes from and never that no agent reports it; context at finish stays apart', () => {
    const text = words(page.replace(/<style>[\s\S]*?<\/style>/, ''));
    expect(text).not.toContain('No agent reports');
    expect(text).toContain('Claude Code transcripts, OpenCode child sessions, Codex rollouts');
    expect(text).toContain('its context at finish is not spend and is never added to it');
    // no total adds spend to the context at finish or to the ledger's cost
    const totals = words(section(page, 'totals'));
    expect(totals).toMatch(/Spend \(each subagent’s own run\) usage known for \d/);
    expect(totals).not.toMatch(/context at finish[^.]*\bspend\b[^.]*\+|spend[^.]*\+[^.]*context/i);
  });
});

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
    expect(html).toContain('no readable checkpoint (see the notes)');
    expect(html).toContain('never activated');
  });

  it('R3-9, R5-3, R6-6: eight charts drawn on the server as inline SVG with their labels as real text, no script', () => {
    const charts = section(page, 'charts');
    // each drawn twice (R4-10): for a wide column and for a phone; the style sheet shows one
    expect(charts.match(/<svg [^>]*role="img"[^>]*class="wide"/g)).toHaveLength(8);
    expect(charts.match(/<svg [^>]*role="img"[^>]*class="narrow"/g)).toHaveLength(8);
    expect(charts).toMatch(/<text[^>]*>1 Oct<\/text>/);
    expect(page).not.toMatch(/<script/i);
    // the duration chart's n is the document's
    expect(charts).toContain(
      `${doc.totals.duration_ms.reported} of ${doc.totals.subagents} subagents reported a duration`,
    );
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
        expect(decode(out)).toBe(s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g, '\uFFFD'));
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
  }, 120_000);
  it("R4-10: the status pill shows an async row's agent_status, any other row's tool_status, naming the column", () => {
    const d = makeReportDocument({ trees: 1 });
    const at = d.trees[0]!.started_at;
    const base = hugeTurn('wide', 3, at).subagents;
    const rows = [
      { ...base[0]!, is_async: true, agent_status: 'async_launched', tool_status: 'complete' },
      { ...base[1]!, is_async: false, agent_status: 'completed', tool_status: 'error' },
      { ...base[2]!, is_async: true, agent_status: null, tool_status: 'complete' },
    ];
    d.trees = [{ ...d.trees[0]!, subagents: rows }];
    const pills = [
      ...section(renderHtml(d), 'trees').matchAll(
        /<span class="status([^"]*)" title="([^"]*)">(?:<bdi[^>]*>)?([^<]*)/g,
      ),
    ].map((m) => [m[2], m[3], m[1]]);
    expect(pills).toEqual([
      ['agent_status', 'async_launched', ''],
      ['tool_status', 'error', ' failed'],
      ['tool_status', 'complete', ''],
    ]);
  });

  it('R4-10: notes read as page text: backticks as inline code, no rule ids, the lower-bound sentence once', () => {
    const d = makeReportDocument();
    d.completeness.notes = [
      'run `subagent-context health` to check (R3-8)',
      '2 session(s) in scope have activity before capture_since: their fan-out is a lower bound (groups marked lower_bound; AC-25).',
      'groups by day have no sessions of their own: their sessions, contexts and cost are null (R3-7).',
    ];
    const banner = section(renderHtml(d), 'completeness');
    expect(banner).toContain('run <code>subagent-context health</code> to check</li>');
    expect(banner).toContain('their sessions, contexts and cost are null.</li>');
    expect(banner).not.toMatch(/`|\b(AC|R\d)-\d+/);
    expect(banner.match(/fan-out is a lower bound/g)).toHaveLength(1);
  });

  it('R4-3: unreadable values are stated per column with their figures; none says so', () => {
    const d = makeReportDocument();
    d.completeness.unreadable = { ...d.completeness.unreadable, total_tokens: 3, occurred_at: 1 };
    const banner = section(renderHtml(d), 'completeness');
    expect(pageFigures(banner).filter((f) => f.path.startsWith('completeness.unreadable.'))).toEqual([
      { path: 'completeness.unreadable.total_tokens', value: 3, shown: '3' },
      { path: 'completeness.unreadable.occurred_at', value: 1, shown: '1' },
    ]);
    expect(section(renderHtml(makeReportDocument()), 'completeness')).toContain('No unreadable value in scope.');
  });

  it('R4-4: a 100,000-deep chain: 200 nodes drawn, nesting capped with the depth stated, paths by place, figures resolve', () => {
    const d = makeReportDocument({ trees: 1 });
    d.trees = [hugeTurn('deep', 100_000, d.trees[0]!.started_at)];
    const html = renderHtml(d);
    const trees = section(html, 'trees');
    expect(trees.match(/<div class="node">/g)).toHaveLength(200);
    expect(trees).toContain('and 99,800 more subagents in this turn');
    expect(trees).toContain('100,000 subagents, 1 top-level');
    // nesting drawn 8 levels deep below the top, then listed with the depth stated
    expect(Math.max(...[...trees.matchAll(/<ul class="tree">/g)].map((_, i) => i))).toBe(8);
    expect(trees).toContain('depth 199 ·');
    expect(pageFigures(trees).find((f) => f.path === 'trees.0.nodes.150.total_tokens')).toEqual({
      path: 'trees.0.nodes.150.total_tokens',
      value: 1_150,
      shown: '1,150',
    });
    expectFiguresMatch(trees, d);
  });
});

describe('the page: lower-bound costs, cost by source, fan-out cost, context at finish (R5-1 … R5-4)', () => {
  /** A document whose totals and first task leave out 3 unpriced events; the second task is exact. */
  function bounded(change: (d: ReportDocument) => void = () => {}): ReportDocument {
    const d = makeReportDocument({ subagents: 40, tasks: 3 });
    const bound = { unpriced_events: 3, cost_lower_bound: true };
    d.totals = { ...d.totals, ...bound, cost_subcents: 41_000, estimated_cost_subcents: 4_100 };
    d.completeness.unpriced_events = 3;
    d.groups[0] = { ...d.groups[0]!, ...bound, unpriced_events: 1 };
    d.groups[1] = { ...d.groups[1]!, unpriced_events: 0, cost_lower_bound: false };
    change(d);
    return d;
  }
  const words = (html: string) =>
    decode(html.replace(/<svg[\s\S]*?<\/svg>/g, '[svg]').replace(/<[^>]+>/g, ' '))
      .replace(/\s+/g, ' ')
      .trim();
  const row = (html: string, key: string) => {
    const start = html.indexOf(`<tr data-key="${key}"`);
    return html.slice(start, html.indexOf('</tr>', start));
  };

  it('R5-1, R6-9: the totals show cost, the estimated part and cost per context as lower bounds, each with its own unpriced count', () => {
    const d = bounded((doc) => {
      doc.totals = { ...doc.totals, estimated_unpriced_events: 1, estimated_cost_lower_bound: true };
    });
    const totals = words(section(renderHtml(d), 'totals'));
    expect(totals).toContain('Cost ≥ $4.10 , 3 events unpriced Estimated part of the cost ≥ $0.41 , 1 event unpriced');
    expect(totals).toMatch(/Cost per context ≥ \$0\.\d{4} , 3 events unpriced/);
    expectFiguresMatch(renderHtml(d), d);
  });

  it('R6-9: an estimated part with no unpriced event of its own is exact beside a cost that is a lower bound', () => {
    const d = bounded((doc) => {
      doc.totals = { ...doc.totals, estimated_unpriced_events: 0, estimated_cost_lower_bound: false };
    });
    const totals = words(section(renderHtml(d), 'totals'));
    expect(totals).toContain('Cost ≥ $4.10 , 3 events unpriced Estimated part of the cost $0.41 Cost by source');
    expectFiguresMatch(renderHtml(d), d);
  });

  it('R5-1: every task row whose cost is a lower bound says so in its cost and cost per context; an exact one does not', () => {
    const d = bounded();
    const tasks = section(renderHtml(d), 'tasks');
    expect(words(row(tasks, 'task-0'))).toMatch(/ ≥ \$[\d.,]+ 1 event unpriced ≥ \$[\d.,]+ 1 event unpriced$/);
    expect(row(tasks, 'task-0')).toContain('data-figure="groups.0.unpriced_events"');
    expect(row(tasks, 'task-1')).not.toMatch(/≥ <data|unpriced/);
  });

  it.each<[string, number | null, string, string]>([
    [
      'counted',
      3,
      '3 cost events in scope are unpriced (the host found no price for them): every cost that leaves one out is a lower bound, marked ≥.',
      'lower-bound',
    ],
    ['none', 0, '0 cost events in scope are unpriced: every cost is as the ledger priced it.', 'muted'],
    [
      'not known',
      null,
      'Unpriced cost events: not known (the ledger does not record which events were priced) .',
      'muted',
    ],
  ])('R5-1: the banner states the unpriced events: %s', (_, unpriced, sentence, cls) => {
    const d = bounded((d) => {
      d.completeness.unpriced_events = unpriced;
    });
    const banner = section(renderHtml(d), 'completeness');
    expect(words(banner)).toContain(sentence);
    expect(banner).toContain(`<p class="${cls}">`);
    expect(pageFigures(banner).find((f) => f.path === 'completeness.unpriced_events')?.value).toBe(unpriced);
  });

  it('R5-1: the note that repeats the unpriced events is left out: the banner says it once', () => {
    const d = bounded((d) => {
      d.completeness.notes = [
        '3 cost event(s) in scope are unpriced (the host found no price and stored 0): they add nothing to any cost, so every cost figure that omits one is a lower bound (cost_lower_bound; R5-1).',
      ];
    });
    expect(section(renderHtml(d), 'completeness')).not.toContain('cost_lower_bound');
  });

  it.each<[string, Partial<ReportDocument['totals']>, string]>([
    [
      'measured, list-priced and the rest',
      { cost_subcents: 41_000, measured_cost_subcents: 30_000, list_priced_cost_subcents: 10_000 },
      'Cost by source measured $3.00 , list-priced $1.00 , other $0.10',
    ],
    [
      'a ledger without cost_source',
      { cost_subcents: 41_000, measured_cost_subcents: null, list_priced_cost_subcents: null },
      'Cost by source not known (the ledger has no cost_source)',
    ],
    [
      'no cost data',
      { cost_subcents: null, measured_cost_subcents: null, list_priced_cost_subcents: null },
      'Cost by source no cost data',
    ],
  ])('R5-2: the cost by source in the totals: %s', (_, totals, shown) => {
    const d = bounded((d) => {
      d.totals = { ...d.totals, ...totals };
    });
    const html = renderHtml(d);
    expect(words(section(html, 'totals'))).toContain(shown);
    expectFiguresMatch(html, d);
  });

  it('R5-3: the fan-out cost chart: its table has every bucket, costs in dollars, "none costed" for a null, never $0', () => {
    const d = bounded((d) => {
      const b = d.fan_out_cost!.buckets[0]!;
      d.fan_out_cost!.buckets[0] = {
        ...b,
        costed_turns: 0,
        cost_subcents: null,
        mean_subcents: null,
        median_subcents: null,
        p95_subcents: null,
      };
    });
    const html = renderHtml(d);
    const charts = section(html, 'charts');
    const figure = charts.slice(charts.indexOf('<figure class="chart" id="chart-fan-out-cost">'));
    const chart = figure.slice(0, figure.indexOf('</figure>'));
    expect(chart).toContain(
      '<h3 id="chart-fan-out-cost-title">What a turn costs, by how many subagents it fanned out to</h3>',
    );
    expect(chart.match(/<tr><th scope="row">/g)).toHaveLength(7);
    expect(words(chart)).toContain(
      'Sum Turns with an unpriced event Turns without cost Priced, in turns not costed Turns with every subagent’s spend known Their subagents’ spend Subagents’ share of the turn (median) 0 10 0 none costed none costed none costed none costed 1 0',
    );
    expect(chart).not.toMatch(/data-figure="fan_out_cost\.buckets\.0\.median_subcents">\$0/);
    // R6-6: where what each subagent spent comes from, never "no agent reports" it
    expect(words(chart)).toContain("what each subagent spent comes from the agents' own records of its run");
    expect(words(chart)).not.toContain('No agent reports');
    expect(words(chart)).toContain("where the agent reports the session's cost (Claude Code does)");
    const paths = pageFigures(chart).map((f) => f.path);
    for (const [i] of FAN_OUT_COST_BUCKETS.entries())
      for (const field of [
        'turns',
        'costed_turns',
        'median_subcents',
        'p95_subcents',
        'mean_subcents',
        'cost_subcents',
      ])
        expect(paths).toContain(`fan_out_cost.buckets.${i}.${field}`);
    expectFiguresMatch(html, d);
  });

  it('R5-3: fan_out_cost null: the chart says it is not available and why, escaped; nothing drawn', () => {
    const d = bounded((d) => {
      d.fan_out_cost = null;
      d.completeness.notes = ['fan_out_cost is null: <script>alert(1)</script> & no turn_id.'];
    });
    const charts = section(renderHtml(d), 'charts');
    const figure = charts.slice(charts.indexOf('<figure class="chart" id="chart-fan-out-cost">'));
    expect(figure.slice(0, figure.indexOf('</figure>'))).toContain(
      '<p class="empty">Nothing to plot.</p>\n<figcaption id="chart-fan-out-cost-caption">Not available: &lt;script&gt;alert(1)&lt;/script&gt; &amp; no turn_id.</figcaption>',
    );
  });

  it('R5-4, R6-6: the page names total_tokens the context at finish, as reported, with its median, p95 and largest; never usage, spend or reported tokens', () => {
    const d = bounded();
    const html = renderHtml(d);
    const text = words(html.replace(/<style>[\s\S]*?<\/style>/, ''));
    expect(text).not.toMatch(/reported tokens/i);
    // R6-6: spend has labels of its own; no context-at-finish label speaks of usage or spend
    const labels = [...html.matchAll(/<(?:dt|th)[^>]*>([^<]*)</g)].map((m) => m[1]!);
    const context = labels.filter((l) => /context at finish/i.test(l));
    expect(context.length).toBeGreaterThan(0);
    for (const label of context) expect(label).not.toMatch(/\busage\b|\bspend\b/i);
    expect(words(section(html, 'totals'))).toContain(
      `Context at finish: median / p95 / largest ${d.totals.tokens.p50!.toLocaleString('en-US')} / ${d.totals.tokens.p95!.toLocaleString('en-US')} / ${d.totals.tokens.max!.toLocaleString('en-US')}`,
    );
    // the tasks table keeps the tokens two columns away from the cost
    const heads = [...section(html, 'tasks').matchAll(/<th scope="col"[^>]*>([^<]*)<\/th>/g)].map((m) => m[1]);
    expect(heads.indexOf('Cost') - heads.indexOf('Context at finish, tokens, as reported')).toBeGreaterThan(2);
  });
});
