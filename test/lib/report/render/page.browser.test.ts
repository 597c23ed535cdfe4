import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../../lib/db/open.js';
import { buildReport } from '../../../../lib/report/build.js';
import type { ReportDocument } from '../../../../lib/report/document.js';
import { renderHtml } from '../../../../lib/report/render/html.js';
import { HOST_FIXTURES } from '../../../../local/host-fixtures.js';
import { CONTROLS, HOSTILE, makeReportDocument } from '../../../../local/report-documents.js';
import { type Browser, chromiumMissing, launchChromium } from '../../../support/browser.js';
import { resolve as figureAt } from '../../../support/page-figures.js';
import { buildReportStore } from '../../../support/report-store.js';

/** Where the browser tests leave the pages and screenshots they made (git-ignored). */
const PAGE_OUTPUT = resolve('test-output/page');
const MB2 = 2 * 1024 * 1024;

const missing = chromiumMissing();
if (missing !== undefined) console.warn(`SKIPPED: ${missing}`);

/**
 * axe-core (npm `axe-core`, a devDependency), found by Node's own resolution; its script is
 * evaluated in the page through the DevTools protocol, which the page's CSP (no script) does not stop.
 */
function axeSource(): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
}

interface Visit {
  page: Page;
  consoleErrors: string[];
  requests: string[];
  dialogs: string[];
}

async function visit(
  browser: Browser,
  file: string,
  view: { width?: number; scheme?: 'light' | 'dark' } = {},
): Promise<Visit> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: view.width ?? 1400, height: 900 });
  await page.emulateMedia({ colorScheme: view.scheme ?? 'light' });
  const visit: Visit = { page, consoleErrors: [], requests: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') visit.consoleErrors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => visit.consoleErrors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => visit.requests.push(r.url()));
  page.on('dialog', (d) => {
    visit.dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 60_000 });
  return visit;
}

function writePage(name: string, html: string): string {
  mkdirSync(PAGE_OUTPUT, { recursive: true });
  const file = join(PAGE_OUTPUT, name);
  writeFileSync(file, html);
  return file;
}

/**
 * The demo store (`npm start`'s generator with costs and titles, backfilled by our migrate, live
 * rows from our writer and the host's: test/support/report-store.ts) and its page's document.
 */
async function demoDocument(): Promise<ReportDocument> {
  const db = await openDatabase('sqlite::memory:');
  try {
    await HOST_FIXTURES.minimal.create(db);
    await buildReportStore(db, 'minimal');
    return await buildReport(db, { pageData: true, trees: 50, by: 'task', sort: 'contexts', graceSeconds: 0 });
  } finally {
    await db.close();
  }
}

/** Opens every <details> (the trees and the charts' tables), so nothing hidden escapes a check. */
async function openAll(page: Page): Promise<void> {
  await page.evaluate(() => {
    for (const d of document.querySelectorAll('details')) d.open = true;
  });
}

/** The page's horizontal scroll: document width beyond the viewport's. */
async function overflow(page: Page): Promise<{ scrollWidth: number; clientWidth: number }> {
  return page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
}

/** Every visible chart text's size on screen in CSS px: its font size times its SVG's scale. */
async function chartTextSizes(page: Page): Promise<{ text: string; px: number }[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<SVGTextElement>('figure.chart svg text')]
      .filter((t) => t.getClientRects().length > 0 && (t.textContent ?? '').trim() !== '')
      .map((t) => ({
        text: t.textContent ?? '',
        px:
          Number.parseFloat(getComputedStyle(t).fontSize) *
          Math.hypot(t.getScreenCTM()?.a ?? 0, t.getScreenCTM()?.b ?? 0),
      })),
  );
}

/**
 * Visible chart labels with a halo (a stroke wider than 0) whose colour is light: relative
 * luminance above 0.5 (WCAG's formula), in the scheme the page is in.
 */
async function lightHalos(page: Page): Promise<{ text: string; stroke: string; fill: string }[]> {
  return page.evaluate(() => {
    const luminance = (css: string) => {
      const m = css.match(/[\d.]+/g);
      if (m === null || m.length < 3) return 0;
      const [r, g, b] = m.slice(0, 3).map((v) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    return [...document.querySelectorAll<SVGTextElement>('figure.chart svg text')]
      .filter((t) => t.getClientRects().length > 0)
      .map((t) => {
        const s = getComputedStyle(t);
        return { text: t.textContent ?? '', stroke: s.stroke, width: Number.parseFloat(s.strokeWidth), fill: s.fill };
      })
      .filter((t) => t.stroke !== 'none' && t.width > 0 && luminance(t.stroke) > 0.5)
      .map(({ text, stroke, fill }) => ({ text, stroke, fill }));
  });
}

/** The page's background luminance (0 black … 1 white). */
async function backgroundLuminance(page: Page): Promise<number> {
  return page.evaluate(() => {
    const m = getComputedStyle(document.body)
      .backgroundColor.match(/[\d.]+/g)!
      .map(Number);
    return (0.2126 * m[0]! + 0.7152 * m[1]! + 0.0722 * m[2]!) / 255;
  });
}

/** axe-core's serious and critical violations, each as rule id and the first offending node. */
async function axeViolations(page: Page, source: string): Promise<string[]> {
  await page.evaluate(source);
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (o: unknown) => Promise<unknown> } }).axe;
    return (await axe.run({ resultTypes: ['violations'] })) as {
      violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
    };
  });
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.length} nodes, e.g. ${v.nodes[0]?.target.join(' ')}`);
}

describe.skipIf(missing !== undefined)(
  'the page in a real browser: headless chromium (R3-9, R4-10, docs/page.md#browser-test)',
  () => {
    let browser: Browser;
    let demoFile: string;
    let file: string;
    let hostileFile: string;
    let hugeFile: string;
    let hugeHtml: string;
    let gapFile: string;
    let gapDays: string[];

    beforeAll(async () => {
      browser = await launchChromium();
      demoFile = writePage('demo.html', renderHtml(await demoDocument()));
      file = writePage('report-page.html', renderHtml(makeReportDocument({ shortfall: true })));
      hostileFile = writePage('hostile.html', renderHtml(makeReportDocument({ hostile: true, shortfall: true })));
      // and ten years of days, 5,000 tasks, 2,000 types and 500 models, all of them hostile text
      hugeHtml = renderHtml(
        makeReportDocument({
          hostile: true,
          shortfall: true,
          huge: true,
          days: 3_650,
          tasks: 5_000,
          types: 2_000,
          models: 500,
          subagents: 1_000_000,
        }),
      );
      hugeFile = writePage('huge.html', hugeHtml);
      // days 1–3 and 10–11 of October: six days without data between them
      const gap = makeReportDocument();
      gap.series!.day = gap.series!.day!.filter((_, i) => i < 3 || i >= 9).slice(0, 5);
      gapDays = gap.series!.day.map((g) => g.key!);
      gapFile = writePage('gap.html', renderHtml(gap));
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
    });

    it('R3-9: loads from a file:// URL with no console error and no request leaving the file', async () => {
      for (const f of [file, demoFile, hugeFile]) {
        const v = await visit(browser, f);
        expect(v.consoleErrors, f).toEqual([]);
        expect(v.requests, f).toEqual([pathToFileURL(f).href]);
        expect(await v.page.title()).toMatch(/^Subagents report, \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/);
        await v.page.close();
      }
    });

    it('R3-9, R5-3, R6-6: the eight charts are present and drawn: one visible SVG each with bars or lines and text labels', async () => {
      for (const width of [1400, 360]) {
        const v = await visit(browser, file, { width });
        const charts = v.page.locator('figure.chart svg:visible');
        expect(await charts.count()).toBe(8);
        for (let i = 0; i < 8; i++) {
          const chart = charts.nth(i);
          const box = await chart.boundingBox();
          expect(box!.width).toBeGreaterThan(width === 360 ? 280 : 400);
          expect(box!.height).toBeGreaterThan(80);
          expect(await chart.locator('path').count()).toBeGreaterThan(3);
          expect(await chart.locator('text').count()).toBeGreaterThan(2);
        }
        expect(await v.page.evaluate(() => document.scripts.length)).toBe(0);
        await v.page.close();
      }
    });

    it('R4-10: no horizontal page scroll at 360 and 1400 CSS px (wide tables scroll in their own box), every <details> open, on the demo, hostile and huge pages', async () => {
      for (const f of [demoFile, hostileFile, hugeFile]) {
        for (const width of [360, 1400]) {
          const v = await visit(browser, f, { width });
          await openAll(v.page);
          const o = await overflow(v.page);
          expect(o.scrollWidth, `${f} at ${width}`).toBeLessThanOrEqual(o.clientWidth);
          expect(o.clientWidth).toBe(width);
          await v.page.close();
        }
      }
    }, 240_000);

    it('issue 51: at 360 px the tasks table shows sessions and subagents before its own scroll, its caption is not cut by the box, and a status label is one line', async () => {
      const v = await visit(browser, demoFile, { width: 360 });
      await openAll(v.page);
      const seen = await v.page.evaluate(() => {
        const box = document.querySelector('#tasks .scroll')!.getBoundingClientRect();
        const headers = [...document.querySelectorAll('#tasks thead th')].filter(
          (th) => th.getBoundingClientRect().right <= box.right + 1,
        );
        const caption = document.querySelector('#tasks caption')!.getBoundingClientRect();
        const split = [...document.querySelectorAll('.node .status')].filter((s) => s.getClientRects().length > 1);
        return { headers: headers.length, captionRight: caption.right, boxRight: box.right, split: split.length };
      });
      // Task, Sessions and Subagents (before: Task and Sessions only)
      expect(seen.headers).toBeGreaterThanOrEqual(3);
      expect(seen.captionRight).toBeLessThanOrEqual(seen.boxRight + 1);
      expect(seen.split).toBe(0);
      await v.page.close();
    });

    it('R4-10: every chart label is drawn at 11 CSS px or more, at 360 and 1400 px', async () => {
      for (const f of [demoFile, hugeFile]) {
        for (const width of [360, 1400]) {
          const v = await visit(browser, f, { width });
          const sizes = await chartTextSizes(v.page);
          expect(sizes.length, `${f} at ${width}`).toBeGreaterThan(40);
          const small = sizes.filter((s) => s.px < 11);
          expect(small, `${f} at ${width}`).toEqual([]);
          await v.page.close();
        }
      }
    }, 240_000);

    it('R4-10: in the dark scheme no chart label has a light halo (and in the light one none either)', async () => {
      for (const scheme of ['dark', 'light'] as const) {
        const v = await visit(browser, demoFile, { scheme });
        const background = await backgroundLuminance(v.page);
        expect(background < 0.2, scheme).toBe(scheme === 'dark');
        expect(await lightHalos(v.page), scheme).toEqual([]);
        await v.page.close();
      }
    });

    it('R4-10: no serious or critical axe-core violation, light and dark, at 360 and 1400 px, on the demo page (and the hostile one, dark at 360)', async () => {
      const source = axeSource();
      const views = [
        ...(['light', 'dark'] as const).flatMap((scheme) =>
          [360, 1400].map((width) => ({ f: demoFile, scheme, width })),
        ),
        { f: hostileFile, scheme: 'dark' as const, width: 360 },
      ];
      for (const { f, scheme, width } of views) {
        const v = await visit(browser, f, { width, scheme });
        await openAll(v.page);
        expect(await axeViolations(v.page, source), `${f} ${scheme} ${width}`).toEqual([]);
        await v.page.close();
      }
    }, 480_000);

    it('R4-10: the per-day chart has a time axis: bars stand at their dates, six days without data are six bars of empty space', async () => {
      const v = await visit(browser, gapFile);
      const centres = await v.page.evaluate(() =>
        [...document.querySelectorAll<SVGPathElement>('#chart-per-day svg.wide path[fill="#3f6fd1"]')]
          .map((p) => p.getBBox())
          // the bars, not the legend's swatch above the plot
          .filter((b) => b.height > 0 && b.y > 50)
          .map((b) => b.x + b.width / 2)
          .sort((a, b) => a - b),
      );
      expect(centres).toHaveLength(gapDays.length);
      const dayOf = gapDays.map((d) => Date.parse(`${d}T00:00:00Z`) / 86_400_000);
      const perDay = (centres[1]! - centres[0]!) / (dayOf[1]! - dayOf[0]!);
      for (let i = 1; i < centres.length; i++) {
        // every spacing is proportional to the days between (a category axis spaces them evenly)
        expect(centres[i]! - centres[i - 1]!).toBeCloseTo(perDay * (dayOf[i]! - dayOf[i - 1]!), 0);
      }
      expect(dayOf[3]! - dayOf[2]!).toBe(7);
      await v.page.close();
    });

    it('R4-4: the page stays under 2 MB with a 30,000-wide turn, a 100,000-deep chain, a 1 MiB title, ten years of days, 5,000 tasks, 2,000 types', () => {
      const size = readFileSync(hugeFile).length;
      expect(size).toBeLessThan(MB2);
      const html = readFileSync(hugeFile, 'utf8');
      expect(html).toContain('and 29,800 more subagents in this turn');
      expect(html).toContain('and 99,800 more subagents in this turn');
      expect(html).toContain(`… (${(1024 * 1024 + CONTROLS.length).toLocaleString('en-US')} characters)`);
    });

    it('R4-2: no raw control character and no half of a surrogate pair anywhere in the file, chart labels included; host text isolated in <bdi>', async () => {
      const html = hugeHtml;
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls the page must not carry
      expect(html.match(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g)).toBeNull();
      expect(html.match(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g)).toBeNull();
      // the chart labels went through the boundary: controls shown as U+FFFD, cuts between characters
      expect(html).toMatch(/<text[^>]*>\uFFFD\[2J\uFFFD\uFFFD31m/);
      expect(html).toMatch(/<text[^>]*>m{12}😀😀m{12}😀…<\/text>/);
      const v = await visit(browser, hugeFile);
      // every U+202E on the page sits inside an isolating element (bdi, or code with dir=auto)
      const loose = await v.page.evaluate(() => {
        const out: string[] = [];
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
          if (!n.textContent?.includes('\u202E')) continue;
          const el = n.parentElement!;
          if (el.closest('svg')) continue;
          if (!el.closest('bdi, [dir="auto"]')) out.push(el.outerHTML.slice(0, 80));
        }
        return out;
      });
      expect(loose).toEqual([]);
      await v.page.close();
    });

    it('R3-9: a fan-out tree is a native <details> that opens on click and shows the nested subagents; a task row links to its tree', async () => {
      const v = await visit(browser, file);
      const turn = v.page.locator('details.turn').first();
      expect(await turn.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      expect(await turn.locator('ul.tree li').first().isVisible()).toBe(false);
      await turn.locator('summary').click();
      expect(await turn.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      expect(await turn.locator('ul.tree li').first().isVisible()).toBe(true);
      expect(await turn.locator('ul.tree ul.tree li').count()).toBeGreaterThan(0);
      const link = v.page.locator('#tasks a.to-tree').first();
      const target = (await link.getAttribute('href'))!;
      expect(target).toMatch(/^#turn-\d+$/);
      expect(await v.page.locator(target).count()).toBe(1);
      expect(v.consoleErrors).toEqual([]);
      await v.page.close();
    });

    it('R3-9: hostile text from the database is shown as text and runs nothing (no dialog, no script, no image)', async () => {
      const v = await visit(browser, hostileFile);
      for (const summary of await v.page.locator('details.turn > summary').all()) await summary.click();
      expect(v.dialogs).toEqual([]);
      expect(v.consoleErrors).toEqual([]);
      expect(v.requests).toEqual([pathToFileURL(hostileFile).href]);
      expect(await v.page.evaluate(() => document.scripts.length)).toBe(0);
      expect(await v.page.evaluate(() => document.images.length)).toBe(0);
      expect(await v.page.locator('.desc').first().textContent()).toBe(HOSTILE);
      expect(await v.page.locator('.task-title').first().textContent()).toBe(`${HOSTILE} task 0`);
      // the page's own style sheet and one per chart drawing (two per chart), none from the data
      expect(await v.page.locator('style').count()).toBe(1 + 2 * 8);
      await v.page.close();
    });

    it('R5-1, R5-3, R5-4, R6-9, R6-10, R6-11: at 360 and 1400 px, light and dark: lower-bound costs marked ≥ each with its own count, the fan-out cost chart drawn with its seven buckets and the line that closes its sum, each money column at one precision, no page scroll, no serious or critical axe violation', async () => {
      const source = axeSource();
      const doc = makeReportDocument({ shortfall: true });
      expect(doc.totals.cost_lower_bound).toBe(true);
      for (const width of [360, 1400]) {
        for (const scheme of ['light', 'dark'] as const) {
          const v = await visit(browser, file, { width, scheme });
          const cost = v.page.locator('#totals dt:text-is("Cost") + dd');
          expect(await cost.textContent()).toMatch(
            new RegExp(`^≥ -?\\$[\\d,]+\\.(\\d\\d|\\d{4}), ${doc.totals.unpriced_events} events unpriced$`),
          );
          // R6-9: the estimated part with its own count
          const estimated = v.page.locator('#totals dt:text-is("Estimated part of the cost") + dd');
          expect(await estimated.textContent()).toMatch(
            doc.totals.estimated_cost_lower_bound
              ? new RegExp(`^≥ \\$[\\d,.]+, ${doc.totals.estimated_unpriced_events} events? unpriced$`)
              : /^\$[\d,]+\.(\d\d|\d{4})$/,
          );
          expect(await v.page.locator('#totals').textContent()).toContain('Context at finish, tokens, as reported');
          const chart = v.page.locator('#chart-fan-out-cost');
          expect(await chart.locator('h3').textContent()).toBe(
            'What a turn costs, by how many subagents it fanned out to',
          );
          const svg = chart.locator('svg:visible');
          expect(await svg.count()).toBe(1);
          expect((await svg.boundingBox())!.width).toBeGreaterThan(width === 360 ? 280 : 400);
          await chart.locator('details.numbers > summary').click();
          const rows = chart.locator('tbody tr');
          expect(await rows.count()).toBe(7);
          expect(await rows.locator('th').allInnerTexts()).toEqual(['0', '1', '2', '3', '4-5', '6-8', '9+']);
          // R6-11: every money column of the table at one precision
          const columns = await rows.evaluateAll((trs) =>
            trs[0]!.querySelectorAll('td').length === 0
              ? []
              : [...trs[0]!.querySelectorAll('td')].map((_, i) =>
                  trs.map((tr) => tr.querySelectorAll('td')[i]!.textContent!.trim()),
                ),
          );
          for (const column of columns) {
            const decimals = new Set(column.flatMap((s) => /^-?\$[\d,]+\.(\d+)$/.exec(s)?.[1]?.length ?? []));
            expect(decimals.size, column.join(' | ')).toBeLessThanOrEqual(1);
          }
          // R6-10: the caption closes the sum with the total
          expect(await chart.locator('figcaption').textContent()).toMatch(
            /With the total: .+ in costed turns \+ .+ on no turn/,
          );
          // each cell is the document's figure
          for (const cell of await chart.locator('data[data-figure]').all()) {
            const path = (await cell.getAttribute('data-figure'))!;
            const value = await cell.getAttribute('value');
            expect(value === 'null' ? null : Number(value), path).toEqual(figureAt(doc, path));
          }
          await openAll(v.page);
          const o = await overflow(v.page);
          expect(o.scrollWidth, `${scheme} ${width}`).toBeLessThanOrEqual(o.clientWidth);
          expect(await axeViolations(v.page, source), `${scheme} ${width}`).toEqual([]);
          await v.page.close();
        }
      }
    }, 240_000);

    it('the screenshots: the demo page at 360 and 1400 px, light and dark, and a print PDF (test-output/page)', async () => {
      for (const width of [1400, 360]) {
        for (const scheme of ['light', 'dark'] as const) {
          const v = await visit(browser, demoFile, { width, scheme });
          // the top of the page: the banner, the totals and the first charts (at 1400 px down to the fan-out cost chart)
          await v.page.setViewportSize({ width, height: width === 360 ? 1800 : 2000 });
          await v.page.screenshot({ path: join(PAGE_OUTPUT, `report-page-${width}-${scheme}.png`) });
          if (width === 1400 && scheme === 'light') {
            await v.page.emulateMedia({ media: 'print' });
            await v.page.pdf({ path: join(PAGE_OUTPUT, 'report-page.pdf') });
          }
          expect(v.consoleErrors).toEqual([]);
          await v.page.close();
        }
      }
    }, 120_000);
  },
);
