import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import type { Distributions, FanOutCost, Figures, SeriesGroup } from '../document.js';
import { EMPTY_KEY_LABEL, fanOutCostGap, NOT_REPORTED_LABEL, TURN_COST_WORDS } from './labels.js';
import { codePoints, dollars, humanDay, humanDuration, SUBCENTS_PER_DOLLAR, shortLabel } from './units.js';

/*
 * The page's charts (docs/page.md#charts), drawn on the server by Apache ECharts' SSR SVG renderer:
 * inline SVG with its labels as real <text>, so the page needs no script to show them and prints
 * as it looks. Every plotted value is a figure of the document, never recomputed: a day whose
 * tokens nobody reported is a gap in the line, not a 0 (R3-6).
 *
 * R4-10: each chart is drawn twice, for a wide and a narrow column (the style sheet shows one), at
 * about the width it is shown at, so its text is never scaled below 11 CSS px; per-day charts use a
 * UTC time axis (a day without data is a visible gap); labels carry no halo and take their colours
 * from the style sheet (light and dark). Each chart also has a table of its numbers (its text
 * alternative), with the figures' document paths.
 */

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, SVGRenderer]);

/** The two drawings: the wide one for a column of about 500 px, the narrow one for a phone (360 px). */
export const CHART_VARIANTS = {
  wide: { width: 540, height: 300, labelChars: 28 },
  narrow: { width: 340, height: 280, labelChars: 14 },
} as const;
type Variant = (typeof CHART_VARIANTS)[keyof typeof CHART_VARIANTS];

/** Text in the SVG: at 540 px drawn in a ~500 px column (and 340 in ~310), still ≥ 12 CSS px. */
export const CHART_FONT_PX = 13;

/** Categories beyond this are labelled on the axis only (a value label per bar would overlap). */
const VALUE_LABELS_UP_TO = 16;
/** Type and model charts show this many bars; the caption says how many there were. */
export const CHART_BARS = 15;
/** Per-day charts cover at most this many days, the most recent (the caption says so). */
export const CHART_DAYS = 400;

const COLORS = { primary: '#3f6fd1', secondary: '#d9682b', tertiary: '#25917f' };
const DAY_MS = 86_400_000;

/** One cell of a chart's table: a figure and the document path it came from. */
export interface ChartCell {
  value: number | null;
  path: string;
  /** the figure's unit on the page: a count (the default), subcents shown as dollars, or a ratio shown as a percentage */
  unit?: 'dollars' | 'share';
  /** the words for a null (default "not reported") */
  none?: string;
}

export interface ChartTable {
  /** the first column's heading, then one per figure column */
  columns: readonly string[];
  /** `label` is host text (a type, a model) or the page's own (a day, a bucket) */
  rows: { label: string; cells: ChartCell[] }[];
  /** rows left out (the page stays under 2 MB, R4-4; `--json` has them) */
  more?: number;
}

/** Type and model tables list at most this many rows (the chart shows CHART_BARS). */
export const CHART_TABLE_ROWS = 50;

function tableOf(columns: readonly string[], rows: readonly { label: string; cell: ChartCell }[]): ChartTable {
  return {
    columns,
    rows: rows.slice(0, CHART_TABLE_ROWS).map((r) => ({ label: r.label, cells: [r.cell] })),
    more: Math.max(0, rows.length - CHART_TABLE_ROWS),
  };
}

export interface Chart {
  id: string;
  title: string;
  /** one sentence under the chart, in words and figures of the document */
  caption: string;
  /** the two drawings, or null when the document has nothing to plot (the caption says why) */
  svg: { wide: string; narrow: string } | null;
  /** the chart's numbers (its text alternative); null with `svg` */
  table: ChartTable | null;
}

/** A group key as a chart shows it: the shared labels for NULL and ''. */
function keyLabel(value: string | null): string {
  return value === null ? NOT_REPORTED_LABEL : value === '' ? EMPTY_KEY_LABEL : value;
}

/** Big axis numbers short enough for a narrow chart: 1,000,000 → 1M, 50,000 → 50k. */
function compact(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${+(value / 1e9).toFixed(1)}G`;
  if (abs >= 1e6) return `${+(value / 1e6).toFixed(1)}M`;
  if (abs >= 1e4) return `${+(value / 1e3).toFixed(1)}k`;
  return value.toLocaleString('en-US');
}

function render(option: (v: Variant) => Record<string, unknown>, height?: (v: Variant) => number) {
  const draw = (v: Variant) => {
    const chart = echarts.init(null, null, {
      renderer: 'svg',
      ssr: true,
      width: v.width,
      height: height?.(v) ?? v.height,
    });
    try {
      chart.setOption({
        animation: false,
        aria: { enabled: false },
        useUTC: true,
        textStyle: { fontFamily: 'system-ui, sans-serif', fontSize: CHART_FONT_PX },
        ...option(v),
      });
      return chart.renderToSVGString();
    } finally {
      // Without dispose, zrender's frame loop keeps the process alive.
      chart.dispose();
    }
  };
  return { wide: draw(CHART_VARIANTS.wide), narrow: draw(CHART_VARIANTS.narrow) };
}

/** A value label with no halo (a light halo smears on a dark fill): the style sheet colours it. */
function valueLabels(categories: number, position = 'top'): Record<string, unknown> {
  return {
    show: categories <= VALUE_LABELS_UP_TO,
    position,
    fontSize: CHART_FONT_PX,
    textBorderWidth: 0,
    textBorderColor: 'transparent',
  };
}

const axisLabel = (extra: Record<string, unknown> = {}) => ({ fontSize: CHART_FONT_PX, hideOverlap: true, ...extra });

function grid(bottom = 8): Record<string, unknown> {
  return { left: 8, right: 8, top: 56, bottom, outerBoundsMode: 'same', outerBoundsContain: 'axisLabel' };
}

const legend = (data: string[]) => ({ top: 4, data, textStyle: { fontSize: CHART_FONT_PX } });

/** A document's groups of one grouping and the path they are at (`series.day`, or `groups`). */
export interface GroupsAt {
  groups: readonly SeriesGroup[];
  path: string;
}

type DayPoint = { g: SeriesGroup; i: number; t: number };
interface DayPoints {
  shown: DayPoint[];
  of: number;
  /** days with groups after the span shown (a row dated 9999-12-31, a host clock at 2099); earlier ones are the history the span leaves out */
  later: DayPoint[];
}

/**
 * Days as time: the groups oldest first, those with a day key, within the CHART_DAYS-day span that
 * holds the most days with groups (the latest such span at a tie; issue 48: the span ending at the
 * last day showed "the last 1 of 33 days" when one row was dated 9999-12-31, every real day gone).
 * A later day outside it is named in the caption as an outlier, never silently dropped.
 */
function dayPoints(days: GroupsAt | undefined): DayPoints {
  if (days === undefined) return { shown: [], of: 0, later: [] };
  const all = days.groups
    .map((g, i) => ({ g, i, t: g.key === null ? Number.NaN : Date.parse(`${g.key}T00:00:00Z`) }))
    .filter((d) => Number.isFinite(d.t))
    .sort((a, b) => a.t - b.t);
  // two pointers: for each last day `end`, the first day `start` within CHART_DAYS of it
  let best = { start: 0, end: -1 };
  for (let start = 0, end = 0; end < all.length; end++) {
    while (all[start]!.t <= all[end]!.t - CHART_DAYS * DAY_MS) start++;
    if (end - start >= best.end - best.start) best = { start, end };
  }
  const shown = all.slice(best.start, best.end + 1);
  return { shown, of: all.length, later: all.slice(best.end + 1) };
}

/** A time axis over whole UTC days, half a day of room on each side so the first and last bars show. */
function dayAxis(points: readonly { t: number }[], v: Variant): Record<string, unknown> {
  const first = points[0]!.t;
  const last = points.at(-1)!.t;
  return {
    type: 'time',
    min: first - DAY_MS / 2,
    max: last + DAY_MS / 2,
    minInterval: DAY_MS,
    axisLabel: axisLabel({ formatter: '{d} {MMM}', rotate: v === CHART_VARIANTS.narrow ? 30 : 0 }),
    splitLine: { show: false },
  };
}

/** The days shown, and the later outliers left out, by name (the last three). */
function daysCaption({ shown, of, later }: DayPoints): string {
  if (later.length === 0) return of > shown.length ? `the last ${shown.length} of ${of} days` : `${shown.length} days`;
  const named = later
    .slice(-3)
    .map(
      (d) =>
        `${humanDay(d.g.key!)} (${d.g.subagents.toLocaleString('en-US')} subagent${d.g.subagents === 1 ? '' : 's'})`,
    )
    .join(', ');
  return `${shown.length} of ${of} days (the ${CHART_DAYS}-day span with the most days); ${later.length} later day${later.length === 1 ? '' : 's'} not drawn, such as ${named}: a host clock or a stored date far from the rest`;
}

export function perDayChart(days: GroupsAt | undefined): Chart {
  const id = 'chart-per-day';
  const base = days?.path;
  // R5-4: the tokens are what each subagent reported of its context at finish, never its usage
  const title = 'Subagents per day, and their context at finish';
  const points = dayPoints(days);
  const { shown } = points;
  if (shown.length === 0) {
    return { id, title, caption: 'This document has no per-day groups.', svg: null, table: null };
  }
  // A day between two shown ones with no group is a gap in the line too (null), not a joined segment.
  const tokens: [number, number | null][] = [];
  for (const [k, d] of shown.entries()) {
    const previous = shown[k - 1];
    if (previous !== undefined && d.t - previous.t > DAY_MS) tokens.push([previous.t + DAY_MS, null]);
    tokens.push([d.t, d.g.tokens.sum]);
  }
  const svg = render((v) => ({
    legend: legend(['subagents', CONTEXT_SERIES]),
    grid: grid(),
    xAxis: dayAxis(shown, v),
    yAxis: [
      { type: 'value', name: 'subagents', minInterval: 1, axisLabel: axisLabel({ formatter: compact }) },
      {
        type: 'value',
        name: 'tokens',
        splitLine: { show: false },
        axisLabel: axisLabel({ formatter: compact }),
      },
    ],
    series: [
      {
        name: 'subagents',
        type: 'bar',
        barMaxWidth: 24,
        data: shown.map((d) => [d.t, d.g.subagents]),
        itemStyle: { color: COLORS.primary },
        label: valueLabels(v === CHART_VARIANTS.narrow ? shown.length * 2 : shown.length),
      },
      {
        name: CONTEXT_SERIES,
        type: 'line',
        yAxisIndex: 1,
        // null (nobody reported) is a gap, never 0 (R3-6)
        data: tokens,
        connectNulls: false,
        showSymbol: shown.length <= 60,
        itemStyle: { color: COLORS.secondary },
        lineStyle: { color: COLORS.secondary, width: 2 },
      },
    ],
  }));
  return {
    id,
    title,
    caption: `${capitalize(daysCaption(points))}, on a time axis: a day without subagents is an empty place. The line is the tokens of context each subagent reported having when it finished, as reported, summed per day: not what it consumed over its run, and not what any cost paid for. A day where none reported is a gap in the line, not 0.`,
    svg,
    table: {
      columns: ['Day (UTC)', 'Subagents', 'Context at finish, tokens, as reported'],
      rows: shown.map((d) => ({
        label: humanDay(d.g.key!),
        cells: [
          { value: d.g.subagents, path: `${base}.${d.i}.subagents` },
          { value: d.g.tokens.sum, path: `${base}.${d.i}.tokens.sum` },
        ],
      })),
    },
  };
}

/** R5-4: the per-day line's name: the subagents' reported context at finish, in tokens. */
export const CONTEXT_SERIES = 'context at finish (tokens)';

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function liveBackfillChart(days: GroupsAt | undefined, totals: Figures): Chart {
  const id = 'chart-live-backfill';
  const base = days?.path;
  const title = 'Live and backfilled subagents';
  const points = dayPoints(days);
  const { shown } = points;
  const perDay = shown.length > 0;
  const series = () => [
    {
      name: 'live',
      type: 'bar',
      stack: 'source',
      barMaxWidth: 24,
      data: perDay ? shown.map((d) => [d.t, d.g.live]) : [totals.live],
      itemStyle: { color: COLORS.primary },
      label: valueLabels(perDay ? 99 : 1, 'inside'),
    },
    {
      name: 'backfill',
      type: 'bar',
      stack: 'source',
      barMaxWidth: 24,
      data: perDay ? shown.map((d) => [d.t, d.g.backfill]) : [totals.backfill],
      itemStyle: { color: COLORS.tertiary },
    },
  ];
  const svg = render((v) => ({
    legend: legend(['live', 'backfill']),
    grid: grid(),
    xAxis: perDay ? dayAxis(shown, v) : { type: 'category', data: ['all'], axisLabel: axisLabel() },
    yAxis: { type: 'value', minInterval: 1, axisLabel: axisLabel({ formatter: compact }) },
    series: series(),
  }));
  return {
    id,
    title,
    caption: `${totals.live.toLocaleString('en-US')} live and ${totals.backfill.toLocaleString('en-US')} backfilled subagents${perDay ? `, per day (${daysCaption(points)})` : ' (no per-day groups in this document)'}.`,
    svg,
    table: perDay
      ? {
          columns: ['Day (UTC)', 'Live', 'Backfill'],
          rows: shown.map((d) => ({
            label: humanDay(d.g.key!),
            cells: [
              { value: d.g.live, path: `${base}.${d.i}.live` },
              { value: d.g.backfill, path: `${base}.${d.i}.backfill` },
            ],
          })),
        }
      : {
          columns: ['Scope', 'Live', 'Backfill'],
          rows: [
            {
              label: 'all',
              cells: [
                { value: totals.live, path: 'totals.live' },
                { value: totals.backfill, path: 'totals.backfill' },
              ],
            },
          ],
        },
  };
}

export function fanOutChart(totals: Figures): Chart {
  const id = 'chart-fan-out';
  const title = 'Fan-out per turn';
  if (totals.fan_out.length === 0) {
    return { id, title, caption: 'No turn launched a subagent in scope.', svg: null, table: null };
  }
  const x = totals.fan_out.map((b) => String(b.top_level));
  const svg = render(() => ({
    grid: grid(28),
    xAxis: {
      type: 'category',
      data: x,
      name: 'top-level subagents in the turn',
      nameLocation: 'middle',
      nameGap: 28,
      axisLabel: axisLabel(),
    },
    yAxis: { type: 'value', name: 'turns', minInterval: 1, axisLabel: axisLabel({ formatter: compact }) },
    series: [
      {
        type: 'bar',
        data: totals.fan_out.map((b) => b.turns),
        itemStyle: { color: COLORS.primary },
        label: valueLabels(x.length),
      },
    ],
  }));
  const n = (v: number) => v.toLocaleString('en-US');
  return {
    id,
    title,
    caption: `${n(totals.turns)} turns launched ${n(totals.top_level)} top-level subagents (${n(totals.nested)} nested under them).`,
    svg,
    table: {
      columns: ['Top-level subagents in the turn', 'Turns'],
      rows: totals.fan_out.map((b, i) => ({
        label: n(b.top_level),
        cells: [{ value: b.turns, path: `totals.fan_out.${i}.turns` }],
      })),
    },
  };
}

function horizontalBars(color: string, rows: readonly { label: string; cell: ChartCell }[]) {
  const shown = rows.slice(0, CHART_BARS).reverse();
  return render(
    (v) => {
      const labels = shown.map((r) => shortLabel(r.label, v.labelChars));
      // room for the longest label (SSR measures text roughly, so the grid is sized here)
      const widest = Math.max(...labels.map((l) => codePoints(l)));
      return {
        grid: {
          left: 12 + Math.ceil(widest * CHART_FONT_PX * 0.6),
          right: 40,
          top: 8,
          bottom: 28,
          outerBoundsMode: 'none',
        },
        xAxis: { type: 'value', minInterval: 1, axisLabel: axisLabel({ formatter: compact }) },
        yAxis: {
          type: 'category',
          data: labels,
          axisLabel: axisLabel({ hideOverlap: false }),
        },
        series: [
          {
            type: 'bar',
            data: shown.map((r) => r.cell.value),
            itemStyle: { color },
            label: valueLabels(0, 'right'),
          },
        ],
      };
    },
    () => Math.max(120, 48 + shown.length * 26),
  );
}

export function byTypeChart(types: GroupsAt | undefined): Chart {
  const id = 'chart-by-type';
  const title = 'Subagents by type';
  if (types === undefined || types.groups.length === 0) {
    return { id, title, caption: 'This document has no per-type groups.', svg: null, table: null };
  }
  const base = types.path;
  const rows = types.groups
    .map((g, i) => ({ g, i }))
    .sort((a, b) => b.g.subagents - a.g.subagents || compare(keyLabel(a.g.key), keyLabel(b.g.key)))
    .map(({ g, i }) => ({ label: keyLabel(g.key), cell: { value: g.subagents, path: `${base}.${i}.subagents` } }));
  const more = rows.length > CHART_BARS ? ` (the ${CHART_BARS} largest shown)` : '';
  return {
    id,
    title,
    caption: `${rows.length.toLocaleString('en-US')} subagent types${more}.`,
    svg: horizontalBars(COLORS.primary, rows),
    table: tableOf(['Type', 'Subagents'], rows),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function byModelChart(totals: Figures): Chart {
  const id = 'chart-by-model';
  const title = 'Subagents by model';
  const rows = totals.models.counts.map((m, i) => ({
    label: keyLabel(m.model),
    cell: { value: m.subagents, path: `totals.models.counts.${i}.subagents` },
  }));
  if (totals.models.unreported > 0) {
    rows.push({
      label: NOT_REPORTED_LABEL,
      cell: { value: totals.models.unreported, path: 'totals.models.unreported' },
    });
  }
  if (rows.length === 0) return { id, title, caption: 'No subagents in scope.', svg: null, table: null };
  const n = (v: number) => v.toLocaleString('en-US');
  const more = totals.models.counts.length > CHART_BARS ? ` (the ${CHART_BARS} largest shown)` : '';
  return {
    id,
    title,
    caption: `${n(totals.models.counts.length)} models${more}; ${n(totals.models.unreported)} subagents reported no model.`,
    svg: horizontalBars(COLORS.tertiary, rows),
    table: tableOf(['Model', 'Subagents'], rows),
  };
}

function bucketLabel(from: number, to: number | null): string {
  return to === null ? `≥ ${humanDuration(from)}` : `< ${humanDuration(to)}`;
}

export function durationChart(distributions: Distributions | undefined, totals: Figures): Chart {
  const id = 'chart-duration';
  const title = 'Duration (reported rows only)';
  const d = totals.duration_ms;
  const h = (ms: number | null) => (ms === null ? 'not reported' : humanDuration(ms));
  const summary = `${d.reported.toLocaleString('en-US')} of ${totals.subagents.toLocaleString('en-US')} subagents reported a duration: median ${h(d.p50)}, p95 ${h(d.p95)}, longest ${h(d.max)}.`;
  if (distributions === undefined) {
    return { id, title, caption: `${summary} This document has no duration histogram.`, svg: null, table: null };
  }
  const hist = distributions.duration_ms;
  if (hist.reported === 0) {
    return { id, title, caption: `${summary} No subagent reported a duration.`, svg: null, table: null };
  }
  const x = hist.buckets.map((b) => bucketLabel(b.from_ms, b.to_ms));
  const svg = render((v) => ({
    grid: grid(v === CHART_VARIANTS.narrow ? 36 : 28),
    xAxis: {
      type: 'category',
      data: x,
      name: 'duration',
      nameLocation: 'middle',
      nameGap: v === CHART_VARIANTS.narrow ? 52 : 44,
      axisLabel: axisLabel({ interval: 0, hideOverlap: false, rotate: v === CHART_VARIANTS.narrow ? 50 : 35 }),
    },
    yAxis: { type: 'value', name: 'subagents', minInterval: 1, axisLabel: axisLabel({ formatter: compact }) },
    series: [
      {
        type: 'bar',
        data: hist.buckets.map((b) => b.subagents),
        itemStyle: { color: COLORS.secondary },
        label: valueLabels(v === CHART_VARIANTS.narrow ? 99 : x.length),
      },
    ],
  }));
  return {
    id,
    title,
    caption: summary,
    svg,
    table: {
      columns: ['Duration', 'Subagents'],
      rows: hist.buckets.map((b, i) => ({
        label: bucketLabel(b.from_ms, b.to_ms),
        cells: [{ value: b.subagents, path: `distributions.duration_ms.buckets.${i}.subagents` }],
      })),
    },
  };
}

/** An axis in dollars for subcents: "$0.25", "$1.5", "$12k" (the table has the exact figures). */
function dollarAxis(subcents: number): string {
  const usd = subcents / SUBCENTS_PER_DOLLAR;
  return Math.abs(usd) >= 1e4 ? `$${compact(Math.round(usd))}` : `$${+usd.toPrecision(3)}`;
}

/**
 * R5-3: what a turn costs, by how many subagents it fanned out to (`fan_out_cost`): the median and
 * p95 of a costed turn's cost per bucket as bars, the turns in the bucket as a second figure on
 * its own axis. A bucket with no costed turn has no bar (null is never drawn as 0).
 */
export function fanOutCostChart(
  fanOutCost: FanOutCost | null,
  notes: readonly string[],
  closing: string | null = null,
): Chart {
  const id = 'chart-fan-out-cost';
  const title = 'What a turn costs, by how many subagents it fanned out to';
  if (fanOutCost === null) {
    return { id, title, caption: `Not available: ${fanOutCostGap(notes)}`, svg: null, table: null };
  }
  const b = fanOutCost.buckets;
  const sum = (f: (x: (typeof b)[number]) => number | null) => b.reduce((a, x) => a + (f(x) ?? 0), 0);
  const n = (v: number) => v.toLocaleString('en-US');
  const turns = sum((x) => x.turns);
  const costed = sum((x) => x.costed_turns);
  const unpriced = b.some((x) => x.unpriced_turns === null) ? null : sum((x) => x.unpriced_turns);
  const without = sum((x) => x.turns_without_cost);
  const unreadable = sum((x) => x.unreadable_cost_turns);
  const u = fanOutCost;
  const unattributed =
    u.unattributed_events === 0
      ? 'Every cost event in scope is on a turn.'
      : `${n(u.unattributed_events)} cost events are on no turn${u.unattributed_cost_subcents === null ? '' : ` (${dollars(u.unattributed_cost_subcents)})`}${u.unattributed_unpriced_events === null ? '' : `, ${n(u.unattributed_unpriced_events)} of them unpriced`}: they are in no bucket.`;
  const caption = `${n(turns)} turns in scope by their top-level subagents, ${n(costed)} of them costed: the median and p95 are over those, and a bucket with no costed turn has no bar (never $0). ${unpriced === null ? '' : `${n(unpriced)} ${unpriced === 1 ? 'turn' : 'turns'} with an unpriced event, `}${n(without)} without a cost event${unreadable > 0 ? ` and ${n(unreadable)} with an unreadable cost` : ''} are counted, never costed. ${unattributed}${closing === null ? '' : ` With the total: ${closing}.`} ${TURN_COST_WORDS}`;
  if (turns === 0) return { id, title, caption, svg: null, table: null };
  const x = b.map((bucket) => bucket.fan_out);
  // '-' is ECharts' empty value: no bar, never a bar at 0
  const empty = (v: number | null) => v ?? '-';
  const svg = render((v) => ({
    legend: legend(['median', 'p95', 'turns']),
    grid: grid(28),
    xAxis: {
      type: 'category',
      data: x,
      name: 'top-level subagents in the turn',
      nameLocation: 'middle',
      nameGap: 28,
      axisLabel: axisLabel({ interval: 0, hideOverlap: false }),
    },
    yAxis: [
      { type: 'value', name: 'cost of a turn', axisLabel: axisLabel({ formatter: dollarAxis }) },
      {
        type: 'value',
        name: 'turns',
        minInterval: 1,
        splitLine: { show: false },
        axisLabel: axisLabel({ formatter: compact }),
      },
    ],
    series: [
      {
        name: 'median',
        type: 'bar',
        barMaxWidth: v === CHART_VARIANTS.narrow ? 14 : 24,
        data: b.map((bucket) => empty(bucket.median_subcents)),
        itemStyle: { color: COLORS.primary },
      },
      {
        name: 'p95',
        type: 'bar',
        barMaxWidth: v === CHART_VARIANTS.narrow ? 14 : 24,
        data: b.map((bucket) => empty(bucket.p95_subcents)),
        itemStyle: { color: COLORS.secondary },
      },
      {
        name: 'turns',
        type: 'line',
        yAxisIndex: 1,
        data: b.map((bucket) => bucket.turns),
        itemStyle: { color: COLORS.tertiary },
        lineStyle: { color: COLORS.tertiary, width: 2, type: 'dashed' },
        symbolSize: 7,
      },
    ],
  }));
  const path = (i: number, field: string) => `fan_out_cost.buckets.${i}.${field}`;
  const money = (i: number, field: string, value: number | null): ChartCell => ({
    value,
    path: path(i, field),
    unit: 'dollars',
    none: 'none costed',
  });
  return {
    id,
    title,
    caption,
    svg,
    table: {
      columns: [
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
      ],
      rows: b.map((bucket, i) => ({
        label: bucket.fan_out,
        cells: [
          { value: bucket.turns, path: path(i, 'turns') },
          { value: bucket.costed_turns, path: path(i, 'costed_turns') },
          money(i, 'median_subcents', bucket.median_subcents),
          money(i, 'p95_subcents', bucket.p95_subcents),
          money(i, 'mean_subcents', bucket.mean_subcents),
          money(i, 'cost_subcents', bucket.cost_subcents),
          { value: bucket.unpriced_turns, path: path(i, 'unpriced_turns'), none: 'not known' },
          { value: bucket.turns_without_cost, path: path(i, 'turns_without_cost') },
          // R6-10: the priced events of the bucket's turns that are not costed
          {
            value: bucket.uncosted_turns_priced_cost_subcents,
            path: path(i, 'uncosted_turns_priced_cost_subcents'),
            unit: 'dollars',
            none: 'none',
          },
          // R6-5, R6-6: what the turns' own subagents spent (null: spend not collected, or no such turn)
          { value: bucket.spend_known_turns, path: path(i, 'spend_known_turns'), none: 'not collected' },
          { ...money(i, 'subagent_cost_subcents', bucket.subagent_cost_subcents), none: 'none known' },
          { value: bucket.subagent_share, path: path(i, 'subagent_share'), unit: 'share', none: 'none known' },
        ],
      })),
    },
  };
}

/** R6-6: where the spend figures come from (the fan-out cost text and the spend chart say the same). */
export const SPEND_SOURCE_WORDS =
  "What a subagent spent is its own run's usage, read from the agent's record of it (Claude Code transcripts, OpenCode child sessions, Codex rollouts) by `subagent-context spend`; its context at finish is not spend and is never added to it.";

/** R6-6: the coverage, in these words: "usage known for N of M subagents". */
export function usageCoverage(spend: Figures['spend'], subagents: number): string {
  const n = (v: number) => v.toLocaleString('en-US');
  return `usage known for ${n(spend.subagents_with_usage ?? 0)} of ${n(subagents)} subagents`;
}

/** A type label, cut to `chars`, with how many of its subagents have usage, never cut: "Explore (12 of 40)". */
const typeWithCoverage = (label: string, g: SeriesGroup, chars: number) =>
  `${shortLabel(label, chars)} (${(g.spend.subagents_with_usage ?? 0).toLocaleString('en-US')} of ${g.subagents.toLocaleString('en-US')})`;

/**
 * R6-6: what one subagent spent, by type: per type the median and p95 of a subagent's run cost
 * (over its priced runs, the document's per-group figures), as horizontal bars in dollars, each
 * type labelled with how many of its subagents have usage. A type with no priced run has no bar
 * (never $0); the table lists every type with its coverage.
 */
export function spendByTypeChart(types: GroupsAt | undefined, totals: Figures): Chart {
  const id = 'chart-spend-by-type';
  const title = 'What one subagent spent, by type';
  const s = totals.spend;
  if (s.subagents_with_usage === null) {
    return {
      id,
      title,
      caption:
        'Not available: spend not collected (the store has no `task_session_subagent_usage` table: `subagent-context migrate` creates it, `subagent-context spend` fills it).',
      svg: null,
      table: null,
    };
  }
  const n = (v: number) => v.toLocaleString('en-US');
  const money = (v: number | null) => (v === null ? 'none priced' : dollars(v));
  const lower =
    s.cost_lower_bound === true ? ' Runs unpriced or not final are left out of the costs: each is a lower bound.' : '';
  const costs =
    s.cost_p50_subcents === null
      ? 'no run is priced.'
      : `one subagent's run cost a median of ${money(s.cost_p50_subcents)}, p95 ${money(s.cost_p95_subcents)}, at most ${money(s.cost_max_subcents)}.`;
  const coverage = `${capitalize(usageCoverage(s, totals.subagents))} (${n(s.complete ?? 0)} final, ${n(s.unpriced ?? 0)} unpriced): ${costs}${lower} ${SPEND_SOURCE_WORDS}`;
  if (types === undefined || types.groups.length === 0) {
    return { id, title, caption: `${coverage} This document has no per-type groups.`, svg: null, table: null };
  }
  const base = types.path;
  const ordered = types.groups
    .map((g, i) => ({ g, i, label: keyLabel(g.key) }))
    .sort(
      (a, b) =>
        (b.g.spend.subagents_with_usage ?? 0) - (a.g.spend.subagents_with_usage ?? 0) ||
        b.g.subagents - a.g.subagents ||
        compare(a.label, b.label),
    );
  const p50 = (g: SeriesGroup) => (g.spend as Partial<Figures['spend']>).cost_p50_subcents ?? null;
  const p95 = (g: SeriesGroup) => (g.spend as Partial<Figures['spend']>).cost_p95_subcents ?? null;
  const priced = ordered.filter((r) => p50(r.g) !== null);
  const caption = `${coverage}${priced.length > CHART_BARS ? ` The ${CHART_BARS} types with the most usage are drawn.` : ''} A type's label says how many of its subagents have usage.`;
  const shown = priced.slice(0, CHART_BARS).reverse();
  const svg =
    shown.length === 0
      ? null
      : render(
          (v) => {
            const labels = shown.map((r) => typeWithCoverage(r.label, r.g, v.labelChars));
            const widest = Math.max(...labels.map((l) => codePoints(l)));
            return {
              legend: legend(['median', 'p95']),
              grid: {
                left: 12 + Math.ceil(widest * CHART_FONT_PX * 0.6),
                right: 24,
                top: 36,
                bottom: 28,
                outerBoundsMode: 'none',
              },
              xAxis: { type: 'value', axisLabel: axisLabel({ formatter: dollarAxis }) },
              yAxis: { type: 'category', data: labels, axisLabel: axisLabel({ hideOverlap: false }) },
              series: [
                {
                  name: 'median',
                  type: 'bar',
                  data: shown.map((r) => p50(r.g)),
                  itemStyle: { color: COLORS.primary },
                },
                {
                  name: 'p95',
                  type: 'bar',
                  data: shown.map((r) => p95(r.g) ?? '-'),
                  itemStyle: { color: COLORS.secondary },
                },
              ],
            };
          },
          () => Math.max(140, 72 + shown.length * 40),
        );
  const path = (i: number, field: string) => `${base}.${i}.${field}`;
  const cost = (i: number, field: string, value: number | null): ChartCell => ({
    value,
    path: path(i, `spend.${field}`),
    unit: 'dollars',
    none: 'none priced',
  });
  return {
    id,
    title,
    caption,
    svg,
    table: {
      columns: [
        'Type',
        'Subagents',
        'With usage',
        'Final',
        'Median per subagent',
        'p95 per subagent',
        'Largest',
        'Unpriced',
      ],
      rows: ordered.slice(0, CHART_TABLE_ROWS).map(({ g, i, label }) => ({
        label,
        cells: [
          { value: g.subagents, path: path(i, 'subagents') },
          { value: g.spend.subagents_with_usage, path: path(i, 'spend.subagents_with_usage') },
          { value: g.spend.complete, path: path(i, 'spend.complete') },
          cost(i, 'cost_p50_subcents', p50(g)),
          cost(i, 'cost_p95_subcents', p95(g)),
          cost(i, 'cost_max_subcents', g.spend.cost_max_subcents),
          { value: g.spend.unpriced, path: path(i, 'spend.unpriced') },
        ],
      })),
      more: Math.max(0, ordered.length - CHART_TABLE_ROWS),
    },
  };
}
