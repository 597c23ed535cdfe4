import { openDatabase } from '../lib/db/open.js';
import { RecordFinder } from '../lib/spend/records.js';
import { runSpend } from '../lib/spend/run.js';

/**
 * One `spend` run in a fresh process, so its wall time and peak RSS are its own (bench/spend-main.ts):
 * argv: the store's URL, the agents' folder, 'dry' for a dry run. Prints one JSON line.
 */
const [url, folder, dry] = process.argv.slice(2);
const db = openDatabase(url!);
const started = performance.now();
const report = await runSpend(db, {
  finder: new RecordFinder({ claude: `${folder}/claude`, opencode: `${folder}/opencode`, codex: `${folder}/codex` }),
  prices: {
    anthropic: {
      models: { 'claude-sonnet-4-5': { cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } } },
    },
  },
  dryRun: dry === 'dry',
});
const ms = performance.now() - started;
await db.close();
process.stdout.write(
  `${JSON.stringify({ ms, written: report.written, rows: report.rows, maxRssKiB: process.resourceUsage().maxRSS })}\n`,
);
