import type { Queryable } from '../lib/db/database.js';
import { PAGE_DEFAULTS } from '../lib/defaults.js';
import { buildReport } from '../lib/report/build.js';
import { renderHtml } from '../lib/report/render/html.js';
import { makeReportDocument } from '../local/report-documents.js';
import { median, timed } from './stats.js';

/*
 * The page (`report --html`, docs/page.md#size): its size and render time. On a generated host store
 * (bench/host-store.ts) the report's own build is timed apart from the rendering; over a generated
 * document (100k subagents, 365 days, 5,000 tasks, 2,000 trees) the rendering alone.
 */

export interface PageFigures {
  /** where the document came from */
  source: string;
  subagents: number;
  /** buildReport with the page's data (series, histogram, PAGE_DEFAULTS.trees trees), median ms; null over a generated document */
  reportMs: number | null;
  /** renderHtml, median ms (the first run includes loading ECharts' modules, so it is left out when there are more) */
  renderMs: number;
  perRunRenderMs: number[];
  bytes: number;
  /** the page's bound (R3-9) */
  limitBytes: number;
  /** the build or the render failed: the message (the section says so instead of a figure) */
  error?: string;
}

export const PAGE_LIMIT_BYTES = 2 * 1024 * 1024;

async function renderRuns(doc: Parameters<typeof renderHtml>[0], runs: number) {
  const perRun: number[] = [];
  let html = '';
  for (let i = 0; i < runs + 1; i++) {
    const { result, ms } = await timed(async () => renderHtml(doc));
    html = result;
    perRun.push(ms);
  }
  // run 0 warms the chart library's modules and the JIT
  return { html, perRun: perRun.slice(1) };
}

/** The page of a generated host store, as `report --html` builds and renders it; a failure is a figure too. */
export async function benchPageOnStore(db: Queryable, source: string, runs: number): Promise<PageFigures> {
  try {
    return await pageOnStore(db, source, runs);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return {
      source,
      subagents: 0,
      reportMs: null,
      renderMs: Number.NaN,
      perRunRenderMs: [],
      bytes: 0,
      limitBytes: PAGE_LIMIT_BYTES,
      error,
    };
  }
}

async function pageOnStore(db: Queryable, source: string, runs: number): Promise<PageFigures> {
  const reports: number[] = [];
  let doc: Awaited<ReturnType<typeof buildReport>> | undefined;
  for (let i = 0; i < runs; i++) {
    const { result, ms } = await timed(() =>
      buildReport(db, { by: 'task', pageData: true, trees: PAGE_DEFAULTS.trees, graceSeconds: 0 }),
    );
    doc = result;
    reports.push(ms);
  }
  const { html, perRun } = await renderRuns(doc!, runs);
  return {
    source,
    subagents: doc!.totals.subagents,
    reportMs: median(reports),
    renderMs: median(perRun),
    perRunRenderMs: perRun,
    bytes: Buffer.byteLength(html),
    limitBytes: PAGE_LIMIT_BYTES,
  };
}

/** The page of a generated 100k-subagent document (no database): the renderer's own cost and the size bound. */
export async function benchPageDocument(runs: number): Promise<PageFigures> {
  const doc = makeReportDocument({ subagents: 100_000, days: 365, tasks: 5_000, types: 40, models: 12, trees: 2_000 });
  const { html, perRun } = await renderRuns(doc, runs);
  return {
    source: 'generated document: 100,000 subagents, 365 days, 5,000 tasks, 40 types, 12 models, 2,000 trees',
    subagents: doc.totals.subagents,
    reportMs: null,
    renderMs: median(perRun),
    perRunRenderMs: perRun,
    bytes: Buffer.byteLength(html),
    limitBytes: PAGE_LIMIT_BYTES,
  };
}
