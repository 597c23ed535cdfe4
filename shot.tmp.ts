import { writeFileSync } from 'node:fs';
import { renderHtml } from './lib/report/render/html.js';
import { makeReportDocument } from './local/report-documents.js';
import { launchChromium } from './test/support/browser.js';
const file = '/tmp/page-demo.html';
writeFileSync(file, renderHtml(makeReportDocument({ shortfall: true })));
const b = await launchChromium();
const p = await b.context.newPage();
await p.setViewportSize({ width: 360, height: 1400 });
await p.emulateMedia({ colorScheme: 'dark' });
await p.goto(`file://${file}`);
for (const [i, y] of [0, 1400, 2800, 4200].entries()) {
  await p.screenshot({ path: `/tmp/n${i}.png`, clip: { x: 0, y, width: 360, height: 1400 }, fullPage: true });
}
await b.close();
