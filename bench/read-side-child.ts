import { openDatabase } from '../lib/db/open.js';
import { startWsProxy } from '../lib/db/ws-proxy.js';
import { SQLITE_MAX_READERS, STATEMENT_TIMEOUT_SECONDS } from '../lib/defaults.js';
import { jsonDocumentChunks } from '../lib/json-document.js';
import { buildReport } from '../lib/report/build.js';
import { renderHtml } from '../lib/report/render/html.js';
import { CASE_OPTIONS, type ReadCase } from './read-side.js';

/*
 * One read-side case in a process of its own (bench/read-side.ts), so its peak RSS is its own:
 * argv = <database url> <case> <now, µs>. Opens the store as the CLI does (a pool of 4; the
 * local ws proxy for PostgreSQL, started before the clock), builds the report and writes its text
 * (JSON, or the page), and prints one JSON line: wall ms, peak RSS, groups, bytes; or the error.
 */
const [url, which, nowText] = process.argv.slice(2) as [string, ReadCase, string];
const proxy = url.startsWith('postgres') ? await startWsProxy() : undefined;
// the CLI's statement cap (lib/cli/main.ts: STATEMENT_TIMEOUT_SECONDS.cli unless --statement-timeout)
const db = openDatabase(url, {
  wsProxy: proxy?.address,
  max: 4,
  readonly: true,
  readers: SQLITE_MAX_READERS,
  statementTimeoutMs: STATEMENT_TIMEOUT_SECONDS.cli * 1000,
});
let out: Record<string, unknown>;
try {
  const start = performance.now();
  const doc = await buildReport(db, { ...CASE_OPTIONS[which], now: BigInt(nowText), graceSeconds: 0 });
  // the JSON in pieces, as the CLI writes it (lib/cli/main.ts) (R4-12: 500,000 task groups exceed V8's longest string)
  let bytes = 0;
  for (const piece of which === 'page' ? [renderHtml(doc)] : jsonDocumentChunks(doc)) bytes += Buffer.byteLength(piece);
  const ms = performance.now() - start;
  out = {
    ms,
    // the page (no --by): the task groups in scope, of which it shows the first rows
    groups: which === 'page' ? (doc.series?.task_groups ?? 0) : doc.groups.length,
    bytes,
    shortfallChecked: doc.completeness.shortfall.checked,
  };
} catch (err) {
  out = { error: err instanceof Error ? err.message : String(err) };
}
out.peakRssMiB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify(out)}\n`);
await db.close();
await proxy?.close();
