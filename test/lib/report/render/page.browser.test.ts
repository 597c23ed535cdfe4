import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHtml } from '../../../../lib/report/render/html.js';
import { HOSTILE, makeReportDocument } from '../../../../local/report-documents.js';
import { type Browser, chromiumMissing, launchChromium } from '../../../support/browser.js';

/** Where the browser tests leave the pages and screenshots they made (git-ignored). */
const PAGE_OUTPUT = resolve('test-output/page');

const missing = chromiumMissing();
if (missing !== undefined) console.warn(`SKIPPED: ${missing}`);

interface Visit {
  page: Page;
  consoleErrors: string[];
  requests: string[];
  dialogs: string[];
}

async function visit(browser: Browser, file: string): Promise<Visit> {
  const page = await browser.context.newPage();
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
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 30_000 });
  return visit;
}

function writePage(name: string, html: string): string {
  mkdirSync(PAGE_OUTPUT, { recursive: true });
  const file = join(PAGE_OUTPUT, name);
  writeFileSync(file, html);
  return file;
}

describe.skipIf(missing !== undefined)(
  'the page in a real browser: headless chromium (R3-9, docs/page.md#browser-test)',
  () => {
    let browser: Browser;
    let file: string;
    let hostileFile: string;

    beforeAll(async () => {
      browser = await launchChromium();
      file = writePage('report-page.html', renderHtml(makeReportDocument({ shortfall: true })));
      hostileFile = writePage('hostile.html', renderHtml(makeReportDocument({ hostile: true, shortfall: true })));
    }, 90_000);

    afterAll(async () => {
      await browser?.close();
    });

    it('R3-9: loads from a file:// URL with no console error and no request leaving the file', async () => {
      const v = await visit(browser, file);
      expect(v.consoleErrors).toEqual([]);
      expect(v.requests).toEqual([pathToFileURL(file).href]);
      expect(await v.page.title()).toMatch(/^Subagents report, /);
      await v.page.close();
    });

    it('R3-9: the six charts are present and drawn: visible SVG with bars or lines and text labels', async () => {
      const v = await visit(browser, file);
      const charts = v.page.locator('figure.chart svg');
      expect(await charts.count()).toBe(6);
      for (let i = 0; i < 6; i++) {
        const chart = charts.nth(i);
        const box = await chart.boundingBox();
        expect(box!.width).toBeGreaterThan(200);
        expect(box!.height).toBeGreaterThan(80);
        expect(await chart.locator('path').count()).toBeGreaterThan(3);
        expect(await chart.locator('text').count()).toBeGreaterThan(2);
      }
      expect(await v.page.evaluate(() => document.scripts.length)).toBe(0);
      await v.page.close();
    });

    it('R3-9: a fan-out tree is a native <details> that opens on click and shows the nested subagents; a screenshot is written', async () => {
      const v = await visit(browser, file);
      const turn = v.page.locator('details.turn').first();
      expect(await turn.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      expect(await turn.locator('ul.tree li').first().isVisible()).toBe(false);
      await turn.locator('summary').click();
      expect(await turn.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      expect(await turn.locator('ul.tree li').first().isVisible()).toBe(true);
      expect(await turn.locator('ul.tree ul.tree li').count()).toBeGreaterThan(0);
      await v.page.screenshot({ path: join(PAGE_OUTPUT, 'report-page.png'), fullPage: true });
      await v.page.emulateMedia({ colorScheme: 'dark' });
      await v.page.screenshot({ path: join(PAGE_OUTPUT, 'report-page-dark.png'), fullPage: true });
      await v.page.emulateMedia({ media: 'print' });
      await v.page.pdf({ path: join(PAGE_OUTPUT, 'report-page.pdf') });
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
      expect(await v.page.locator('style').count()).toBe(7);
      await v.page.close();
    });
  },
);
