import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import type { Distributions, Figures, Group } from '../document.js';

/*
 * The page's charts (docs/page.md#charts), drawn on the server by Apache ECharts' SSR SVG renderer:
 * inline SVG with its labels as real <text>, so the page needs no script to show them and prints
 * as it looks. Every plotted value is a figure of the document, never recomputed: a day whose
 * tokens nobody reported is a gap in the line, not a 0 (R3-6).
 */

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, SVGRenderer]);

export const CHART_WIDTH = 720;
export const CHART_HEIGHT = 300;

/** Categories beyond this are labelled on the axis only (a value label per bar would overlap). */
const VALUE_LABELS_UP_TO = 24;
/** Type and model charts show this many bars; the caption says how many there were. */
export const CHART_BARS = 15;
/** Axis labels longer than this are cut (the full text is in the tables and trees). */
const LABEL_CHARS = 32;

const COLORS = { primary: '#3f6fd1', secondary: '#d9682b', tertiary: '#25917f' };

export interface Chart {
  id: string;
  title: string;
  /** one sentence under the chart, in words and figures of the document */
  caption: string;
  /** the SVG, or null when the document has nothing to plot (the caption says why) */
  svg: string | null;
}

function label(value: string | null): string {
  const s = value ?? '(not reported)';
  return s.length > LABEL_CHARS ? `${s.slice(0, LABEL_CHARS - 1)}…` : s;
}

function render(option: Record<string, unknown>, height = CHART_HEIGHT): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: CHART_WIDTH, height });
  try {
    chart.setOption({
      animation: false,
      aria: { enabled: false },
      textStyle: { fontFamily: 'system-ui, sans-serif', fontSize: 12 },
      ...option,
    });
    return chart.renderToSVGString();
  } finally {
    // Without dispose, zrender's frame loop keeps the process alive.
    chart.dispose();
  }
}

function valueLabels(categories: number): Record<string, unknown> {
  return { show: categories <= VALUE_LABELS_UP_TO, position: 'top', fontSize: 11 };
}

function grid(bottom = 40): Record<string, unknown> {
  return { left: 64, right: 64, top: 40, bottom, containLabel: false };
}

export function perDayChart(days: readonly Group[] | undefined): Chart {
  const id = 'chart-per-day';
  const title = 'Subagents and reported tokens per day';
  if (days === undefined || days.length === 0) {
    return { id, title, caption: 'This document has no per-day groups (report --by day or --html).', svg: null };
  }
  // Oldest day first, whatever order the document sorted the groups in.
  const sorted = [...days].sort((a, b) => String(a.key).localeCompare(String(b.key)));
  const x = sorted.map((g) => g.key ?? '(no day)');
  const svg = render({
    legend: { top: 4, data: ['subagents', 'reported tokens'] },
    grid: grid(),
    xAxis: { type: 'category', data: x },
    yAxis: [
      { type: 'value', name: 'subagents', minInterval: 1 },
      { type: 'value', name: 'tokens', splitLine: { show: false } },
    ],
    series: [
      {
        name: 'subagents',
        type: 'bar',
        data: sorted.map((g) => g.subagents),
        itemStyle: { color: COLORS.primary },
        label: valueLabels(x.length),
      },
      {
        name: 'reported tokens',
        type: 'line',
        yAxisIndex: 1,
        // null (nobody reported) is a gap, never 0 (R3-6)
        data: sorted.map((g) => g.tokens.sum),
        connectNulls: false,
        itemStyle: { color: COLORS.secondary },
        lineStyle: { color: COLORS.secondary, width: 2 },
      },
    ],
  });
  return {
    id,
    title,
    caption: `${sorted.length} days. Tokens are what the subagents reported (never priced); a day where none reported is a gap, not 0.`,
    svg,
  };
}

export function liveBackfillChart(days: readonly Group[] | undefined, totals: Figures): Chart {
  const id = 'chart-live-backfill';
  const title = 'Live and backfilled subagents';
  const sorted = days === undefined ? [] : [...days].sort((a, b) => String(a.key).localeCompare(String(b.key)));
  const x = sorted.length > 0 ? sorted.map((g) => g.key ?? '(no day)') : ['all'];
  const live = sorted.length > 0 ? sorted.map((g) => g.live) : [totals.live];
  const backfill = sorted.length > 0 ? sorted.map((g) => g.backfill) : [totals.backfill];
  const svg = render({
    legend: { top: 4, data: ['live', 'backfill'] },
    grid: grid(),
    xAxis: { type: 'category', data: x },
    yAxis: { type: 'value', minInterval: 1 },
    series: [
      { name: 'live', type: 'bar', stack: 'source', data: live, itemStyle: { color: COLORS.primary } },
      { name: 'backfill', type: 'bar', stack: 'source', data: backfill, itemStyle: { color: COLORS.tertiary } },
    ],
  });
  return {
    id,
    title,
    caption: `${totals.live} live and ${totals.backfill} backfilled subagents${sorted.length > 0 ? ', per day' : ' (no per-day groups in this document)'}.`,
    svg,
  };
}

export function fanOutChart(totals: Figures): Chart {
  const id = 'chart-fan-out';
  const title = 'Fan-out per turn';
  if (totals.fan_out.length === 0) return { id, title, caption: 'No turn launched a subagent in scope.', svg: null };
  const x = totals.fan_out.map((b) => String(b.top_level));
  const svg = render({
    grid: grid(48),
    xAxis: { type: 'category', data: x, name: 'top-level subagents in the turn', nameLocation: 'middle', nameGap: 28 },
    yAxis: { type: 'value', name: 'turns', minInterval: 1 },
    series: [
      {
        type: 'bar',
        data: totals.fan_out.map((b) => b.turns),
        itemStyle: { color: COLORS.primary },
        label: valueLabels(x.length),
      },
    ],
  });
  return {
    id,
    title,
    caption: `${totals.turns} turns launched ${totals.top_level} top-level subagents (${totals.nested} nested under them).`,
    svg,
  };
}

function horizontalBars(id: string, title: string, rows: readonly { label: string; value: number }[]): string {
  const shown = rows.slice(0, CHART_BARS).reverse();
  return render(
    {
      grid: { left: 220, right: 48, top: 16, bottom: 32 },
      xAxis: { type: 'value', minInterval: 1 },
      yAxis: { type: 'category', data: shown.map((r) => r.label) },
      series: [
        {
          name: title,
          type: 'bar',
          data: shown.map((r) => r.value),
          itemStyle: { color: id === 'chart-by-model' ? COLORS.tertiary : COLORS.primary },
          label: { show: true, position: 'right', fontSize: 11 },
        },
      ],
    },
    Math.max(120, 48 + shown.length * 24),
  );
}

export function byTypeChart(types: readonly Group[] | undefined): Chart {
  const id = 'chart-by-type';
  const title = 'Subagents by type';
  if (types === undefined || types.length === 0) {
    return { id, title, caption: 'This document has no per-type groups (report --by type or --html).', svg: null };
  }
  const rows = [...types]
    .sort((a, b) => b.subagents - a.subagents || String(a.key).localeCompare(String(b.key)))
    .map((g) => ({ label: label(g.key), value: g.subagents }));
  const more = rows.length > CHART_BARS ? ` (the ${CHART_BARS} largest shown)` : '';
  return { id, title, caption: `${rows.length} subagent types${more}.`, svg: horizontalBars(id, title, rows) };
}

export function byModelChart(totals: Figures): Chart {
  const id = 'chart-by-model';
  const title = 'Subagents by model';
  const rows = totals.models.counts.map((m) => ({ label: label(m.model), value: m.subagents }));
  if (totals.models.unreported > 0) rows.push({ label: '(not reported)', value: totals.models.unreported });
  if (rows.length === 0) return { id, title, caption: 'No subagents in scope.', svg: null };
  const more = totals.models.counts.length > CHART_BARS ? ` (the ${CHART_BARS} largest shown)` : '';
  return {
    id,
    title,
    caption: `${totals.models.counts.length} models${more}; ${totals.models.unreported} subagents reported no model.`,
    svg: horizontalBars(id, title, rows),
  };
}

function duration(ms: number): string {
  if (ms < 60_000) return `${ms / 1000} s`;
  return `${ms / 60_000} min`;
}

export function durationChart(distributions: Distributions | undefined, totals: Figures): Chart {
  const id = 'chart-duration';
  const title = 'Duration (reported rows only)';
  const d = totals.duration_ms;
  const summary = `n = ${d.reported} of ${totals.subagents}; p50 ${d.p50 ?? '—'} ms, p95 ${d.p95 ?? '—'} ms, max ${d.max ?? '—'} ms.`;
  if (distributions === undefined) {
    return { id, title, caption: `${summary} This document has no duration histogram (report --html).`, svg: null };
  }
  const hist = distributions.duration_ms;
  if (hist.reported === 0) return { id, title, caption: `${summary} No subagent reported a duration.`, svg: null };
  const x = hist.buckets.map((b) => (b.to_ms === null ? `≥ ${duration(b.from_ms)}` : `< ${duration(b.to_ms)}`));
  const svg = render({
    grid: grid(48),
    xAxis: {
      type: 'category',
      data: x,
      name: 'duration_ms',
      nameLocation: 'middle',
      nameGap: 28,
      axisLabel: { interval: 0 },
    },
    yAxis: { type: 'value', name: 'subagents', minInterval: 1 },
    series: [
      {
        type: 'bar',
        data: hist.buckets.map((b) => b.subagents),
        itemStyle: { color: COLORS.secondary },
        label: valueLabels(x.length),
      },
    ],
  });
  return { id, title, caption: summary, svg };
}
