import { describe, expect, it } from 'vitest';
import {
  type Distributions,
  FAN_OUT_COST_BUCKETS,
  type FanOutCost,
  type Figures,
  type Group,
  type GroupBy,
} from '../../../../lib/report/document.js';
import {
  byModelChart,
  byTypeChart,
  type Chart,
  durationChart,
  fanOutChart,
  fanOutCostChart,
  liveBackfillChart,
  perDayChart,
  spendByTypeChart,
} from '../../../../lib/report/render/charts.js';
import { figures } from '../../../../local/report-documents.js';

/*
 * The charts one by one (docs/page.md#charts, R3-6, R3-9, R4-10), from documents made here, read
 * back from the SVG ECharts draws: sizes, fonts, colours, axis labels, value labels, gaps, and each
 * chart's caption and table written out. The page's tests (html.test.ts) hold the figures' paths;
 * the browser tests (page.browser.test.ts) the drawing as shown.
 */

const DAY_MS = 86_400_000;
const half = () => 0.5;

/** The figures of `n` subagents, with `change` applied. */
function figs(n: number, change: Partial<Figures> = {}): Figures {
  return { ...figures(n, half, false), ...change };
}

function group(by: GroupBy, key: string | null, n: number, change: Partial<Figures> = {}): Group {
  return { ...figs(n, change), by, key, title: null, lower_bound: false, started_at: null };
}

/** Day groups from `2026-10-01` on, `offsets` days after it, each with its subagents and tokens. */
function days(rows: readonly [offset: number, subagents: number, tokens: number | null][]) {
  const start = Date.parse('2026-10-01T00:00:00Z');
  return {
    groups: rows.map(([offset, n, tokens]) =>
      group('day', new Date(start + offset * DAY_MS).toISOString().slice(0, 10), n, {
        tokens: { sum: tokens, reported: tokens === null ? 0 : 1, p50: null, p95: null, max: null },
        live: n - 1,
        backfill: 1,
      }),
    ),
    path: 'series.day',
  };
}

const decode = (s: string) =>
  s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&');
/** The text of every `<text>` of an SVG, in document order. */
const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => decode(m[1]!));
/** The value labels (ECharts fills them #333, #eee inside a bar; axis labels and names are #54555a). */
const valueLabels = (svg: string) =>
  [...svg.matchAll(/<text[^>]*fill="#(?:333|eee)">([^<]*)<\/text>/g)].map((m) => decode(m[1]!));
/** `<text>` elements with their x (from `translate(x y)`, or a turned one's `matrix(a,b,c,d,x,y)`). */
const placedTexts = (svg: string) =>
  [
    ...svg.matchAll(
      /<text[^>]*transform="(?:translate\(([-\d.]+) [-\d.]+\)|matrix\((?:[-\d.]+,){4}([-\d.]+),[-\d.]+\))"[^>]*>([^<]*)<\/text>/g,
    ),
  ].map((m) => ({ x: Number(m[1] ?? m[2]), text: m[3]! }));
const size = (svg: string) => {
  const m = /^<svg width="(\d+)" height="(\d+)"/.exec(svg)!;
  return [Number(m[1]), Number(m[2])];
};
/** The bars of a colour (`M x y l w 0 l 0 h l -w 0 Z` filled with it), as `[left edge, right edge]`. */
function bars(svg: string, color: string): [number, number][] {
  return [
    ...svg.matchAll(
      new RegExp(`<path d="M([-\\d.]+) [-\\d.]+l([-\\d.]+) 0l0 [-\\d.]+l[-\\d.]+ 0Z"[^>]*fill="${color}"`, 'g'),
    ),
  ].map((m) => [Number(m[1]), Number(m[1]) + Number(m[2])].sort((a, b) => a - b) as [number, number]);
}

const PRIMARY = '#3f6fd1';
const SECONDARY = '#d9682b';
const TERTIARY = '#25917f';

const threeDays = days([
  [0, 5, 2e9],
  [1, 7, 12_000],
  [3, 9, 1],
]);
const totals = figs(40, {
  live: 31,
  backfill: 9,
  turns: 12,
  top_level: 38,
  nested: 2,
  fan_out: [
    { top_level: 1, turns: 1017 },
    { top_level: 2, turns: 1033 },
  ],
  models: {
    counts: [
      { model: 'claude-sonnet-4', subagents: 30 },
      { model: '', subagents: 3 },
    ],
    unreported: 7,
  },
  duration_ms: { reported: 12, p50: 48_211, p95: 301_776, max: 1_204_113 },
});
const distributions: Distributions = {
  duration_ms: {
    reported: 12,
    buckets: [
      { from_ms: 0, to_ms: 1_000, subagents: 5 },
      { from_ms: 1_000, to_ms: 60_000, subagents: 4 },
      { from_ms: 60_000, to_ms: null, subagents: 3 },
    ],
  },
};
const types = {
  groups: [group('type', 'Explore', 4), group('type', null, 9), group('type', 'Plan', 9), group('type', '', 1)],
  path: 'series.type',
};

/**
 * R5-3: a fan_out_cost section: turns in every bucket but 6-8 (empty) and 9+ (turns, none costed),
 * the rest costed at rising costs.
 */
const fanOutCost: FanOutCost = {
  buckets: FAN_OUT_COST_BUCKETS.map((fan_out, i) => {
    const turns = fan_out === '6-8' ? 0 : 10 - i;
    const costed = fan_out === '9+' ? 0 : turns;
    return {
      fan_out,
      turns,
      costed_turns: costed,
      unpriced_turns: fan_out === '9+' ? 1 : 0,
      turns_without_cost: fan_out === '9+' ? turns - 1 : 0,
      unreadable_cost_turns: 0,
      cost_subcents: costed === 0 ? null : costed * 3_000 * (i + 1),
      mean_subcents: costed === 0 ? null : 3_000 * (i + 1),
      median_subcents: costed === 0 ? null : 2_500 * (i + 1),
      p95_subcents: costed === 0 ? null : 9_000 * (i + 1),
      spend_known_turns: null,
      subagent_cost_subcents: null,
      subagent_share: null,
      uncosted_turns_priced_cost_subcents: fan_out === '9+' ? 500 : null,
    };
  }),
  unattributed_events: 3,
  unattributed_cost_subcents: 1_700,
  unattributed_unpriced_events: 1,
  unreadable_started_at: 0,
};

/** The seven charts of the documents above, drawn inside each test (so a mutation run sees which test draws what). */
const CHARTS: [string, () => Chart][] = [
  ['per day', () => perDayChart(threeDays)],
  ['live and backfill', () => liveBackfillChart(threeDays, totals)],
  ['fan-out', () => fanOutChart(totals)],
  ['by type', () => byTypeChart(types)],
  ['by model', () => byModelChart(totals)],
  ['duration', () => durationChart(distributions, totals)],
  ['fan-out cost', () => fanOutCostChart(fanOutCost, [])],
];
const all = () => CHARTS.map(([name, draw]) => [name, draw()] as const);

describe('the charts, read back from their SVG (docs/page.md#charts)', () => {
  it.each(CHARTS)('R4-10: the %s chart is drawn for a 540 px column and a 340 px phone', (_, draw) => {
    const chart = draw();
    const horizontal = chart.id === 'chart-by-type' || chart.id === 'chart-by-model';
    // type and model: 48 px and 26 a bar (4 and 3 bars here), at least 120
    const height = chart.id === 'chart-by-type' ? [152, 152] : chart.id === 'chart-by-model' ? [126, 126] : [300, 280];
    expect(size(chart.svg!.wide)).toEqual([540, height[0]]);
    expect(size(chart.svg!.narrow)).toEqual([340, height[1]]);
    if (!horizontal) expect(chart.svg!.wide).not.toBe(chart.svg!.narrow);
  });

  it('R4-10: the type and model charts are 120 px high at least, 48 + 26 a bar above that (fifteen bars at most)', () => {
    const one = byTypeChart({ groups: [group('type', 'Explore', 4)], path: 'series.type' });
    expect(size(one.svg!.wide)).toEqual([540, 120]);
    const many = byTypeChart({
      groups: Array.from({ length: 20 }, (_, i) => group('type', `type-${i}`, 20 + i)),
      path: 'series.type',
    });
    expect(size(many.svg!.wide)).toEqual([540, 48 + 15 * 26]);
    expect(size(many.svg!.narrow)).toEqual([340, 48 + 15 * 26]);
  });

  it.each(CHARTS)(
    'R4-10: every text of the %s chart is 13 px in the system font, with no halo and no animation',
    (_, draw) => {
      const chart = draw();
      for (const svg of [chart.svg!.wide, chart.svg!.narrow]) {
        const styled = [...svg.matchAll(/<text[^>]*style="([^"]*)"/g)].map((m) => m[1]);
        expect(styled.length).toBeGreaterThan(0);
        expect(styled.length).toBe(svg.match(/<text/g)!.length);
        // ECharts writes a turned label's font as the shorthand
        for (const s of styled)
          expect([
            'font-size:13px;font-family:system-ui, sans-serif;',
            'font: normal normal 13px system-ui, sans-serif',
          ]).toContain(s);
        // no halo: no label is stroked
        expect(svg).not.toMatch(/<text[^>]*stroke=/);
        // printed as it looks: no keyframes
        expect(svg).not.toMatch(/keyframes|animation/);
      }
    },
  );

  it('R4-10: the bars and lines take the page palette: subagents blue, tokens and durations orange, backfill and models green', () => {
    const [day, live, fan, type, model, duration] = all().map(([, c]) => c.svg!.wide);
    expect(bars(day!, PRIMARY)).toHaveLength(3);
    expect(day).toMatch(new RegExp(`<path d="M[^"]*"[^>]*stroke="${SECONDARY}"`));
    expect(bars(live!, PRIMARY)).toHaveLength(3);
    expect(bars(live!, TERTIARY)).toHaveLength(3);
    expect(bars(fan!, PRIMARY)).toHaveLength(2);
    expect(bars(type!, PRIMARY)).toHaveLength(4);
    expect(bars(model!, TERTIARY)).toHaveLength(3);
    expect(bars(duration!, SECONDARY)).toHaveLength(3);
  });

  it('R4-10: axis numbers are short: below 10,000 with separators, then k, M and G (each at its first value)', () => {
    const labels = (tokens: number) =>
      texts(
        perDayChart(
          days([
            [0, 1, tokens],
            [1, 1, tokens / 2],
          ]),
        ).svg!.wide,
      );
    expect(labels(2e9)).toEqual(expect.arrayContaining(['500M', '1G', '1.5G', '2G']));
    expect(labels(2e6)).toEqual(expect.arrayContaining(['500k', '1M', '1.5M', '2M']));
    expect(labels(20_000)).toEqual(expect.arrayContaining(['5,000', '10k', '15k', '20k']));
    expect(labels(2e9)).not.toContain('1000M');
    expect(labels(2e6)).not.toContain('1000k');
    expect(labels(20_000)).not.toContain('10,000');
  });

  it('R4-10: the per-day axis is UTC days, each shown day labelled once ("1 Oct"), at its bar, whatever the machine’s zone', () => {
    const zone = process.env.TZ;
    try {
      for (const tz of ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati']) {
        process.env.TZ = tz;
        const chart = perDayChart(
          days([
            [0, 5, 10],
            [1, 7, 10],
          ]),
        );
        for (const svg of [chart.svg!.wide, chart.svg!.narrow]) {
          const dayLabels = placedTexts(svg).filter((t) => /^\d+ [A-Z][a-z]{2}$/.test(t.text));
          expect(dayLabels.map((t) => t.text).sort(), tz).toEqual(['1 Oct', '2 Oct']);
          const [first, second] = bars(svg, PRIMARY).sort((a, b) => a[0] - b[0]);
          const centre = (b: [number, number]) => (b[0] + b[1]) / 2;
          expect(Math.abs(dayLabels.find((t) => t.text === '1 Oct')!.x - centre(first!)), tz).toBeLessThan(2);
          expect(Math.abs(dayLabels.find((t) => t.text === '2 Oct')!.x - centre(second!)), tz).toBeLessThan(2);
        }
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('R3-6: a day between two with data is a gap in the tokens line, and so is a day nobody reported; consecutive days are one line', () => {
    const segments = (rows: Parameters<typeof days>[0]) => {
      const svg = perDayChart(days(rows)).svg!.wide;
      const line = [...svg.matchAll(new RegExp(`<path d="([^"]*)"[^>]*stroke="${SECONDARY}"`, 'g'))]
        .map((m) => m[1]!)
        .find((d) => d.includes('L') && !d.includes('A'))!;
      return line.match(/M/g)!.length;
    };
    const run = (n: number) => Array.from({ length: n }, (_, i) => [i, 2, 100 + i] as [number, number, number]);
    expect(segments(run(4))).toBe(1);
    expect(
      segments([
        [0, 2, 10],
        [1, 2, 20],
        [3, 2, 30],
        [4, 2, 40],
      ]),
    ).toBe(2);
    expect(
      segments([
        [0, 2, 10],
        [1, 2, 20],
        [2, 2, null],
        [3, 2, 30],
        [4, 2, 40],
      ]),
    ).toBe(2);
  });

  it('R4-10: value labels on up to sixteen bars (the narrow per-day chart counts each day twice), none beyond', () => {
    const valueLabel = 7_919;
    const texts = valueLabels;
    const fanOut = (n: number) =>
      fanOutChart(
        figs(10, {
          fan_out: Array.from({ length: n }, (_, i) => ({ top_level: i + 1, turns: i === 0 ? valueLabel : 1 + i })),
        }),
      );
    expect(texts(fanOut(16).svg!.wide)).toContain('7919');
    expect(texts(fanOut(17).svg!.wide)).not.toContain('7919');
    const perDay = (n: number) =>
      perDayChart(
        days(Array.from({ length: n }, (_, i) => [i, i === 0 ? valueLabel : 2, 10] as [number, number, number])),
      );
    expect(texts(perDay(8).svg!.narrow)).toContain('7919');
    expect(texts(perDay(9).svg!.narrow)).not.toContain('7919');
    expect(texts(perDay(9).svg!.wide)).toContain('7919');
    expect(texts(perDay(16).svg!.wide)).toContain('7919');
    expect(texts(perDay(17).svg!.wide)).not.toContain('7919');
    // the horizontal bars: at the right of each; live and backfill: inside every live bar, never on backfill
    expect(texts(byTypeChart(types).svg!.wide).sort()).toEqual(['1', '4', '9', '9']);
    expect(byTypeChart(types).svg!.wide).toMatch(/text-anchor="start"[^>]*fill="#333">9</);
    const live = liveBackfillChart(threeDays, totals);
    // per day the stacked bars carry none (a label per day would overlap); the one bar of the whole scope does
    expect(texts(live.svg!.wide)).toEqual([]);
    expect(texts(liveBackfillChart(undefined, totals).svg!.wide)).toEqual(['31']);
    // the duration chart: on the wide one up to sixteen buckets, never on the narrow one
    const duration = durationChart(distributions, totals);
    expect(texts(duration.svg!.wide)).toEqual(expect.arrayContaining(['5', '4', '3']));
    expect(texts(duration.svg!.narrow).filter((t) => /^[345]$/.test(t))).toEqual([]);
  });

  it('R4-10: the axes and legends are named in words', () => {
    const [day, live, fan, , , duration] = all().map(([, c]) => texts(c.svg!.wide));
    expect(day).toEqual(expect.arrayContaining(['subagents', 'tokens', 'context at finish (tokens)']));
    expect(live).toEqual(expect.arrayContaining(['live', 'backfill']));
    expect(fan).toEqual(expect.arrayContaining(['top-level subagents in the turn', 'turns']));
    expect(duration).toEqual(expect.arrayContaining(['duration', 'subagents', '< 1 s', '< 1 min', '≥ 1 min']));
    const [, , , type, model] = all().map(([, c]) => texts(c.svg!.wide));
    expect(type).toEqual(expect.arrayContaining(['Explore', 'Plan', '(not reported)', '(empty)']));
    expect(model).toEqual(expect.arrayContaining(['claude-sonnet-4', '(empty)', '(not reported)']));
    // without per-day groups, one stacked bar for the whole scope
    const whole = liveBackfillChart(undefined, totals);
    expect(texts(whole.svg!.wide)).toEqual(expect.arrayContaining(['all', 'live', 'backfill', '31']));
  });

  it('R4-10: the narrow drawings turn their day and bucket labels; type labels are cut at 28 and 14 characters', () => {
    const rotated = (svg: string, label: string) =>
      new RegExp(`<text[^>]*transform="matrix\\([^"]*"[^>]*>${label}</text>`).test(svg);
    const day = perDayChart(threeDays);
    expect(rotated(day.svg!.narrow, '2 Oct')).toBe(true);
    expect(rotated(day.svg!.wide, '2 Oct')).toBe(false);
    const duration = durationChart(distributions, totals);
    expect(rotated(duration.svg!.narrow, '&lt; 1 s')).toBe(true);
    expect(rotated(duration.svg!.wide, '&lt; 1 s')).toBe(true);
    const long = 'a-type-name-much-longer-than-any-chart-label';
    const chart = byTypeChart({ groups: [group('type', long, 3)], path: 'series.type' });
    expect(texts(chart.svg!.wide)).toContain(`${long.slice(0, 27)}…`);
    expect(texts(chart.svg!.narrow)).toContain(`${long.slice(0, 13)}…`);
    // the table carries it whole
    expect(chart.table!.rows[0]!.label).toBe(long);
  });

  it('R4-10: the type bars: the fifteen largest, the largest on top, ties by label; the table 50 rows and a count of the rest', () => {
    const chart = byTypeChart(types);
    // ties (9 and 9): "(not reported)" before "Plan"; "(empty)" last with 1
    expect(chart.table!.rows.map((r) => [r.label, r.cells[0]!.value, r.cells[0]!.path])).toEqual([
      ['(not reported)', 9, 'series.type.1.subagents'],
      ['Plan', 9, 'series.type.2.subagents'],
      ['Explore', 4, 'series.type.0.subagents'],
      ['(empty)', 1, 'series.type.3.subagents'],
    ]);
    expect(chart.table!.columns).toEqual(['Type', 'Subagents']);
    expect(chart.table!.more).toBe(0);
    expect(chart.caption).toBe('4 subagent types.');
    // drawn bottom to top: the axis lists the smallest first
    expect(texts(chart.svg!.wide).filter((t) => /^[A-Z(]/.test(t))).toEqual([
      '(empty)',
      'Explore',
      'Plan',
      '(not reported)',
    ]);
    const many = byTypeChart({
      groups: Array.from({ length: 60 }, (_, i) => group('type', `t${String(i).padStart(2, '0')}`, 100 + i)),
      path: 'series.type',
    });
    expect(many.caption).toBe('60 subagent types (the 15 largest shown).');
    expect(many.table!.rows).toHaveLength(50);
    expect(many.table!.rows[0]!.label).toBe('t59');
    expect(many.table!.more).toBe(10);
    const shown = texts(many.svg!.wide).filter((t) => /^t\d\d$/.test(t));
    expect(shown).toHaveLength(15);
    expect(shown.at(-1)).toBe('t59');
    expect(shown[0]).toBe('t45');
    const fifteen = byTypeChart({
      groups: Array.from({ length: 15 }, (_, i) => group('type', `t${i}`, 1 + i)),
      path: 'series.type',
    });
    expect(fifteen.caption).toBe('15 subagent types.');
  });

  it('R4-10: the model bars: each model, "(empty)" for \'\', and the unreported count as "(not reported)"; captions written out', () => {
    const chart = byModelChart(totals);
    expect(chart.table).toEqual({
      columns: ['Model', 'Subagents'],
      rows: [
        { label: 'claude-sonnet-4', cells: [{ value: 30, path: 'totals.models.counts.0.subagents' }] },
        { label: '(empty)', cells: [{ value: 3, path: 'totals.models.counts.1.subagents' }] },
        { label: '(not reported)', cells: [{ value: 7, path: 'totals.models.unreported' }] },
      ],
      more: 0,
    });
    expect(chart.caption).toBe('2 models; 7 subagents reported no model.');
    const none = byModelChart(figs(5, { models: { counts: [{ model: 'm', subagents: 5 }], unreported: 0 } }));
    expect(none.table!.rows.map((r) => r.label)).toEqual(['m']);
    const many = byModelChart(
      figs(5, {
        models: {
          counts: Array.from({ length: 16 }, (_, i) => ({ model: `m${i}`, subagents: 16 - i })),
          unreported: 0,
        },
      }),
    );
    expect(many.caption).toBe('16 models (the 15 largest shown); 0 subagents reported no model.');
    const fifteen = byModelChart(
      figs(5, {
        models: {
          counts: Array.from({ length: 15 }, (_, i) => ({ model: `m${i}`, subagents: 16 - i })),
          unreported: 0,
        },
      }),
    );
    expect(fifteen.caption).toBe('15 models; 0 subagents reported no model.');
    expect(byModelChart(figs(0, { models: { counts: [], unreported: 0 } }))).toEqual({
      id: 'chart-by-model',
      title: 'Subagents by model',
      caption: 'No subagents in scope.',
      svg: null,
      table: null,
    });
  });

  it('R3-9: the per-day and live/backfill charts: captions and tables written out, days oldest first, the last 400 of more', () => {
    const day = perDayChart(threeDays);
    expect(day.title).toBe('Subagents per day, and their context at finish');
    expect(day.caption).toBe(
      '3 days, on a time axis: a day without subagents is an empty place. The line is the tokens of context each subagent reported having when it finished, as reported, summed per day: not what it consumed over its run, and not what any cost paid for. A day where none reported is a gap in the line, not 0.',
    );
    expect(day.table).toEqual({
      columns: ['Day (UTC)', 'Subagents', 'Context at finish, tokens, as reported'],
      rows: [
        {
          label: '1 Oct 2026',
          cells: [
            { value: 5, path: 'series.day.0.subagents' },
            { value: 2e9, path: 'series.day.0.tokens.sum' },
          ],
        },
        {
          label: '2 Oct 2026',
          cells: [
            { value: 7, path: 'series.day.1.subagents' },
            { value: 12_000, path: 'series.day.1.tokens.sum' },
          ],
        },
        {
          label: '4 Oct 2026',
          cells: [
            { value: 9, path: 'series.day.2.subagents' },
            { value: 1, path: 'series.day.2.tokens.sum' },
          ],
        },
      ],
    });
    const live = liveBackfillChart(threeDays, totals);
    expect(live.title).toBe('Live and backfilled subagents');
    expect(live.caption).toBe('31 live and 9 backfilled subagents, per day (3 days).');
    expect(live.table).toEqual({
      columns: ['Day (UTC)', 'Live', 'Backfill'],
      rows: [0, 1, 2].map((i) => ({
        label: ['1 Oct 2026', '2 Oct 2026', '4 Oct 2026'][i],
        cells: [
          { value: [4, 6, 8][i], path: `series.day.${i}.live` },
          { value: 1, path: `series.day.${i}.backfill` },
        ],
      })),
    });
    const whole = liveBackfillChart(undefined, totals);
    expect(whole.caption).toBe('31 live and 9 backfilled subagents (no per-day groups in this document).');
    expect(whole.table).toEqual({
      columns: ['Scope', 'Live', 'Backfill'],
      rows: [
        {
          label: 'all',
          cells: [
            { value: 31, path: 'totals.live' },
            { value: 9, path: 'totals.backfill' },
          ],
        },
      ],
    });
    // newest first in the document, a day with no key: plotted oldest first, the keyless one left out
    const reversed = { groups: [...threeDays.groups].reverse(), path: 'groups' };
    reversed.groups.push(group('day', null, 3));
    expect(perDayChart(reversed).table!.rows.map((r) => [r.label, r.cells[0]!.path])).toEqual([
      ['1 Oct 2026', 'groups.2.subagents'],
      ['2 Oct 2026', 'groups.1.subagents'],
      ['4 Oct 2026', 'groups.0.subagents'],
    ]);
    // 401 days: the last 400; 400 days: all
    const span = (n: number) => days(Array.from({ length: n }, (_, i) => [i, 1, 1] as [number, number, number]));
    const long = perDayChart(span(401));
    expect(long.caption.startsWith('The last 400 of 401 days, on a time axis')).toBe(true);
    expect(long.table!.rows).toHaveLength(400);
    expect(long.table!.rows[0]!.cells[0]!.path).toBe('series.day.1.subagents');
    expect(liveBackfillChart(span(401), totals).caption).toBe(
      '31 live and 9 backfilled subagents, per day (the last 400 of 401 days).',
    );
    expect(perDayChart(span(400)).caption.startsWith('400 days, on a time axis')).toBe(true);
    const empty = perDayChart({ groups: [group('day', null, 3)], path: 'series.day' });
    expect(empty).toEqual({
      id: 'chart-per-day',
      title: 'Subagents per day, and their context at finish',
      caption: 'This document has no per-day groups.',
      svg: null,
      table: null,
    });
    expect(perDayChart(undefined).svg).toBeNull();
  });

  it('R3-9: the fan-out and duration charts: captions and tables written out, and what each says when there is nothing', () => {
    const fan = fanOutChart(totals);
    expect(fan.title).toBe('Fan-out per turn');
    expect(fan.caption).toBe('12 turns launched 38 top-level subagents (2 nested under them).');
    expect(fan.table).toEqual({
      columns: ['Top-level subagents in the turn', 'Turns'],
      rows: [
        { label: '1', cells: [{ value: 1017, path: 'totals.fan_out.0.turns' }] },
        { label: '2', cells: [{ value: 1033, path: 'totals.fan_out.1.turns' }] },
      ],
    });
    expect(fanOutChart(figs(0, { fan_out: [] }))).toEqual({
      id: 'chart-fan-out',
      title: 'Fan-out per turn',
      caption: 'No turn launched a subagent in scope.',
      svg: null,
      table: null,
    });
    const duration = durationChart(distributions, totals);
    expect(duration.title).toBe('Duration (reported rows only)');
    const summary = '12 of 40 subagents reported a duration: median 48.2 s, p95 5 min 2 s, longest 20 min 4 s.';
    expect(duration.caption).toBe(summary);
    expect(duration.table).toEqual({
      columns: ['Duration', 'Subagents'],
      rows: [
        { label: '< 1 s', cells: [{ value: 5, path: 'distributions.duration_ms.buckets.0.subagents' }] },
        { label: '< 1 min', cells: [{ value: 4, path: 'distributions.duration_ms.buckets.1.subagents' }] },
        { label: '≥ 1 min', cells: [{ value: 3, path: 'distributions.duration_ms.buckets.2.subagents' }] },
      ],
    });
    const unreported = figs(40, { duration_ms: { reported: 0, p50: null, p95: null, max: null } });
    expect(durationChart(undefined, unreported)).toEqual({
      id: 'chart-duration',
      title: 'Duration (reported rows only)',
      caption:
        '0 of 40 subagents reported a duration: median not reported, p95 not reported, longest not reported. This document has no duration histogram.',
      svg: null,
      table: null,
    });
    const nobody = durationChart({ duration_ms: { reported: 0, buckets: [] } }, unreported);
    expect(nobody.caption).toBe(
      '0 of 40 subagents reported a duration: median not reported, p95 not reported, longest not reported. No subagent reported a duration.',
    );
    expect(nobody.svg).toBeNull();
    expect(byTypeChart(undefined).caption).toBe('This document has no per-type groups.');
    expect(byTypeChart({ groups: [], path: 'series.type' }).svg).toBeNull();
  });
});

describe('drawing leaves nothing behind', () => {
  it('R4-10: each drawing is disposed: no timer of the chart library is left running to keep the process alive', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    fanOutChart(totals);
    perDayChart(threeDays);
    // the library's own frame timers end within a frame once a chart is disposed
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(timers()).toBeLessThanOrEqual(before);
  });
});

describe('the charts after their mutation run (2026-12-02)', () => {
  it('R4-10: every count axis is short too: 20,000 subagents, turns or rows read 10k and 20k, never 20,000', () => {
    const big = 20_000;
    const axes = [
      perDayChart(
        days([
          [0, big, 1],
          [1, big / 2, 1],
        ]),
      ),
      liveBackfillChart(
        {
          groups: days([
            [0, big, 1],
            [1, big / 2, 1],
          ]).groups,
          path: 'series.day',
        },
        totals,
      ),
      fanOutChart(figs(big, { fan_out: [{ top_level: 1, turns: big }] })),
      byTypeChart({ groups: [group('type', 'Explore', big)], path: 'series.type' }),
      byModelChart(figs(big, { models: { counts: [{ model: 'm', subagents: big }], unreported: 0 } })),
      durationChart(
        { duration_ms: { reported: big, buckets: [{ from_ms: 0, to_ms: 1_000, subagents: big }] } },
        figs(big, { duration_ms: { reported: big, p50: 1, p95: 1, max: 1 } }),
      ),
    ];
    for (const chart of axes) {
      const labels = texts(chart.svg!.wide).filter((t) => !valueLabels(chart.svg!.wide).includes(t));
      expect(labels, chart.id).toContain('10k');
      expect(labels, chart.id).not.toContain('10,000');
    }
  });

  it('R3-9: each chart has its id and title', () => {
    expect(all().map(([, c]) => [c.id, c.title])).toEqual([
      ['chart-per-day', 'Subagents per day, and their context at finish'],
      ['chart-live-backfill', 'Live and backfilled subagents'],
      ['chart-fan-out', 'Fan-out per turn'],
      ['chart-by-type', 'Subagents by type'],
      ['chart-by-model', 'Subagents by model'],
      ['chart-duration', 'Duration (reported rows only)'],
      ['chart-fan-out-cost', 'What a turn costs, by how many subagents it fanned out to'],
    ]);
  });

  it('R4-10: type bars of equal size are ordered by label in code-unit order, whatever order the document gives', () => {
    const tied = (labels: (string | null)[]) =>
      byTypeChart({ groups: labels.map((k) => group('type', k, 5)), path: 'series.type' }).table!.rows.map(
        (r) => r.label,
      );
    expect(tied(['c', 'b', 'a'])).toEqual(['a', 'b', 'c']);
    expect(tied(['a', 'c', 'b'])).toEqual(['a', 'b', 'c']);
    expect(tied(['Plan', null, 'B', 'b'])).toEqual(['(not reported)', 'B', 'Plan', 'b']);
    expect(tied(['x', 'x'])).toEqual(['x', 'x']);
    // the same label twice keeps the document's order (the paths say which group is which)
    const same = byTypeChart({ groups: ['x', 'y', 'x', 'x'].map((k) => group('type', k, 5)), path: 'series.type' });
    expect(same.table!.rows.map((r) => r.cells[0]!.path)).toEqual([
      'series.type.0.subagents',
      'series.type.2.subagents',
      'series.type.3.subagents',
      'series.type.1.subagents',
    ]);
  });
  it('R4-10, R5-4: the per-day chart names its bars "subagents" on the axis and in the legend, beside "tokens" and "context at finish (tokens)"', () => {
    const day = texts(perDayChart(threeDays).svg!.wide);
    // the left axis's name, the right axis's; the legend's two entries close the drawing
    expect(day.slice(0, 2)).toEqual(['subagents', 'tokens']);
    expect(day.slice(-2)).toEqual(['subagents', 'context at finish (tokens)']);
  });

  it('R4-10: the fan-out chart labels its bars with their number of top-level subagents', () => {
    const fan = texts(fanOutChart(totals).svg!.wide);
    // the axis's category labels, then the bars' value labels
    expect(fan.slice(-4)).toEqual(['1', '2', '1017', '1033']);
  });

  it('R4-10: without per-day groups the live/backfill chart is one live bar and one backfill bar on it', () => {
    const whole = liveBackfillChart(undefined, totals).svg!.wide;
    expect(bars(whole, PRIMARY)).toHaveLength(1);
    expect(bars(whole, TERTIARY)).toHaveLength(1);
  });
});

describe('the fan-out cost chart (R5-3)', () => {
  it('R5-3: median and p95 bars per bucket in dollars, turns a dashed line on its own axis; a bucket with no costed turn has no bar, never one at 0', () => {
    const chart = fanOutCostChart(fanOutCost, []);
    for (const svg of [chart.svg!.wide, chart.svg!.narrow]) {
      // five buckets costed (0 … 4-5): five median bars, five p95 bars; 6-8 and 9+ none
      expect(bars(svg, PRIMARY)).toHaveLength(5);
      expect(bars(svg, SECONDARY)).toHaveLength(5);
      expect(svg).toMatch(new RegExp(`<path d="M[^"]*"[^>]*stroke="${TERTIARY}"[^>]*stroke-dasharray`));
      const words = texts(svg);
      expect(words).toEqual(
        expect.arrayContaining(['median', 'p95', 'turns', 'cost of a turn', 'top-level subagents in the turn']),
      );
      // every bucket on the axis, the empty ones too, in order
      expect(words.join('|')).toContain(FAN_OUT_COST_BUCKETS.join('|'));
      // the cost axis is in dollars
      expect(words.filter((t) => t.startsWith('$')).length).toBeGreaterThan(2);
    }
  });

  it('R5-3, R6-6: the caption says what was costed, what a turn includes and where per-subagent spend comes from; the table has every bucket with its paths, costs in dollars', () => {
    const chart = fanOutCostChart(fanOutCost, []);
    expect(chart.caption).toBe(
      "44 turns in scope by their top-level subagents, 40 of them costed: the median and p95 are over those, and a bucket with no costed turn has no bar (never $0). 1 turn with an unpriced event, 3 without a cost event are counted, never costed. 3 cost events are on no turn ($0.17), 1 of them unpriced: they are in no bucket. A turn's cost is the sum of its cost events; where the agent reports the session's cost (Claude Code does), it includes what the turn's subagents spent. It is the whole turn's cost, never a per-subagent figure: what each subagent spent comes from the agents' own records of its run (Claude Code transcripts, OpenCode child sessions, Codex rollouts), read by `subagent-context spend`, and is shown apart as spend.",
    );
    expect(chart.table!.columns).toEqual([
      'Top-level subagents in the turn',
      'Turns',
      'Costed turns',
      'Median cost',
      'p95 cost',
      'Mean cost',
      'Sum',
      'Turns with an unpriced event',
      'Turns without cost',
      'Priced, in turns not costed',
      'Turns with every subagent’s spend known',
      'Their subagents’ spend',
      'Subagents’ share of the turn (median)',
    ]);
    expect(chart.table!.rows.map((r) => r.label)).toEqual([...FAN_OUT_COST_BUCKETS]);
    const nine = chart.table!.rows[6]!.cells;
    expect(nine.map((c) => [c.path, c.value, c.unit, c.none])).toEqual([
      ['fan_out_cost.buckets.6.turns', 4, undefined, undefined],
      ['fan_out_cost.buckets.6.costed_turns', 0, undefined, undefined],
      ['fan_out_cost.buckets.6.median_subcents', null, 'dollars', 'none costed'],
      ['fan_out_cost.buckets.6.p95_subcents', null, 'dollars', 'none costed'],
      ['fan_out_cost.buckets.6.mean_subcents', null, 'dollars', 'none costed'],
      ['fan_out_cost.buckets.6.cost_subcents', null, 'dollars', 'none costed'],
      ['fan_out_cost.buckets.6.unpriced_turns', 1, undefined, 'not known'],
      ['fan_out_cost.buckets.6.turns_without_cost', 3, undefined, undefined],
      ['fan_out_cost.buckets.6.uncosted_turns_priced_cost_subcents', 500, 'dollars', 'none'],
      // R6-6: what the turns' subagents spent, as the bucket has it
      ['fan_out_cost.buckets.6.spend_known_turns', nine[9]!.value, undefined, 'not collected'],
      ['fan_out_cost.buckets.6.subagent_cost_subcents', nine[10]!.value, 'dollars', 'none known'],
      ['fan_out_cost.buckets.6.subagent_share', nine[11]!.value, 'share', 'none known'],
    ]);
    const bucket = fanOutCost.buckets[6]!;
    expect(nine.slice(9).map((c) => c.value)).toEqual([
      bucket.spend_known_turns,
      bucket.subagent_cost_subcents,
      bucket.subagent_share,
    ]);
  });

  it.each<[string, FanOutCost | null, string[], string]>([
    [
      'no turn_id in the ledger',
      null,
      ['fan_out_cost is null: office_cost_events has no turn_id column (a host before its turn attribution).'],
      'Not available: office_cost_events has no turn_id column (a host before its turn attribution).',
    ],
    ['no note', null, [], 'Not available: see the notes'],
  ])('R5-3: fan_out_cost null (%s): not available, with the reason; nothing drawn', (_, section, notes, caption) => {
    expect(fanOutCostChart(section, notes)).toEqual({
      id: 'chart-fan-out-cost',
      title: 'What a turn costs, by how many subagents it fanned out to',
      caption,
      svg: null,
      table: null,
    });
  });

  it('R5-3: no turn in scope: nothing to plot; without cost_source the unpriced turns are not stated', () => {
    const none: FanOutCost = {
      ...fanOutCost,
      buckets: fanOutCost.buckets.map((b) => ({
        ...b,
        turns: 0,
        costed_turns: 0,
        unpriced_turns: null,
        turns_without_cost: 0,
        cost_subcents: null,
        mean_subcents: null,
        median_subcents: null,
        p95_subcents: null,
      })),
      unattributed_events: 0,
      unattributed_cost_subcents: null,
      unattributed_unpriced_events: null,
    };
    const chart = fanOutCostChart(none, []);
    expect(chart.svg).toBeNull();
    expect(chart.table).toBeNull();
    expect(chart.caption).toMatch(
      /^0 turns in scope by their top-level subagents, 0 of them costed: .* \(never \$0\)\. 0 without a cost event are counted, never costed\. Every cost event in scope is on a turn\. /,
    );
  });
});

describe('what one subagent spent, by type (R6-6)', () => {
  /** R6-5's spend of a scope: `with` subagents with usage, priced runs' median, p95 and largest. */
  const spend = (
    withUsage: number | null,
    p50: number | null,
    p95: number | null,
    max: number | null = p95,
  ): Figures['spend'] => ({
    subagents_with_usage: withUsage,
    complete: withUsage,
    tokens_in: null,
    tokens_out: null,
    tokens_cached_read: null,
    tokens_cached_write: null,
    tokens_reasoning: null,
    cost_subcents: max,
    measured_cost_subcents: max,
    list_priced_cost_subcents: withUsage === null ? null : 0,
    unpriced: withUsage === null ? null : 0,
    cost_lower_bound: withUsage === null ? null : false,
    cost_p50_subcents: p50,
    cost_p95_subcents: p95,
    cost_max_subcents: max,
  });
  const types = {
    path: 'series.type',
    groups: [
      group('type', 'Explore', 40, { spend: spend(12, 1_300, 6_000, 11_800) }),
      group('type', 'Plan', 5, { spend: spend(0, null, null) }),
      group('type', null, 3, { spend: spend(2, 400, 900) }),
    ],
  };
  const totals = figs(48, { spend: spend(14, 1_200, 6_000, 11_800) });

  it('R6-6: median and p95 bars in dollars per type, each type labelled with how many of its subagents have usage; no bar for a type with no priced run', () => {
    const chart = spendByTypeChart(types, totals);
    expect(chart.title).toBe('What one subagent spent, by type');
    const wide = texts(chart.svg!.wide);
    expect(wide).toEqual(expect.arrayContaining(['median', 'p95', 'Explore (12 of 40)', '(not reported) (2 of 3)']));
    expect(wide.some((t) => t.startsWith('Plan'))).toBe(false);
    // on a phone too, the counts are never cut (only the type name is, at 14 characters)
    expect(texts(chart.svg!.narrow)).toEqual(expect.arrayContaining(['Explore (12 of 40)', '(not reported) (2 of 3)']));
    expect(wide.some((t) => t.startsWith('$'))).toBe(true);
    expect(chart.table!.columns).toEqual([
      'Type',
      'Subagents',
      'With usage',
      'Final',
      'Median per subagent',
      'p95 per subagent',
      'Largest',
      'Unpriced',
    ]);
    // every type in the table, most usage first; the type with none says so, never $0
    expect(chart.table!.rows.map((r) => r.label)).toEqual(['Explore', '(not reported)', 'Plan']);
    expect(chart.table!.rows[2]!.cells.map((c) => [c.path, c.value, c.unit, c.none])).toEqual([
      ['series.type.1.subagents', 5, undefined, undefined],
      ['series.type.1.spend.subagents_with_usage', 0, undefined, undefined],
      ['series.type.1.spend.complete', 0, undefined, undefined],
      ['series.type.1.spend.cost_p50_subcents', null, 'dollars', 'none priced'],
      ['series.type.1.spend.cost_p95_subcents', null, 'dollars', 'none priced'],
      ['series.type.1.spend.cost_max_subcents', null, 'dollars', 'none priced'],
      ['series.type.1.spend.unpriced', 0, undefined, undefined],
    ]);
  });

  it('R6-6: the caption states the coverage in its words ("usage known for N of M subagents") and where spend comes from, apart from context at finish', () => {
    expect(spendByTypeChart(types, totals).caption).toBe(
      "Usage known for 14 of 48 subagents (14 final, 0 unpriced): one subagent's run cost a median of $0.12, p95 $0.60, at most $1.18. What a subagent spent is its own run's usage, read from the agent's record of it (Claude Code transcripts, OpenCode child sessions, Codex rollouts) by `subagent-context spend`; its context at finish is not spend and is never added to it. A type's label says how many of its subagents have usage.",
    );
  });

  it('R6-6, R6-2: a store without the usage table: not available, spend not collected, nothing drawn (never $0)', () => {
    const none = figs(48, { spend: spend(null, null, null) });
    const chart = spendByTypeChart(types, none);
    expect(chart.svg).toBeNull();
    expect(chart.table).toBeNull();
    expect(chart.caption).toMatch(/^Not available: spend not collected/);
  });

  it('R6-6: usage known for none: the coverage says 0 of M and nothing is drawn', () => {
    const empty = {
      path: 'series.type',
      groups: [group('type', 'Explore', 4, { spend: spend(0, null, null) })],
    };
    const chart = spendByTypeChart(empty, figs(4, { spend: spend(0, null, null) }));
    expect(chart.svg).toBeNull();
    expect(chart.caption).toMatch(/^Usage known for 0 of 4 subagents \(0 final, 0 unpriced\): no run is priced\./);
    expect(chart.table!.rows).toHaveLength(1);
  });
});
