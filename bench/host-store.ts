import { generateHostStore, type HostStoreSummary } from '../local/generate-host-store.js';
import { createHostSchema } from '../local/host-schema.js';
import { type BackfillFigures, benchBackfill } from './backfill.js';
import { benchHealth, type HealthFigures } from './health.js';
import { benchPageOnStore, type PageFigures } from './page.js';
import { benchReportQuery, type ReportQueryFigures } from './report-query.js';
import { timed } from './stats.js';
import type { BenchTarget } from './targets.js';

export interface HostStoreFigures {
  target: BenchTarget['name'];
  summary: HostStoreSummary;
  /** time to generate the store (setup, not a product figure) */
  generateMs: number;
  backfill: BackfillFigures;
  health: HealthFigures;
  /** the report page of this store (report --html; docs/page.md#size) */
  page: PageFigures;
  /** `report --json` on the same store (docs/report.md) */
  report: ReportQueryFigures;
}

/**
 * One generated host store per target (docs/README.md#real-traffic shapes, 10% subagent messages, malformed
 * documents and values included), then the backfill and the health check on it.
 */
export async function benchHostStore(
  target: BenchTarget,
  plan: { messages: number; runs: number },
): Promise<HostStoreFigures> {
  const bench = await target.fresh();
  try {
    const { db } = bench;
    await createHostSchema(db);
    const generated = await timed(() =>
      generateHostStore(db, { messages: plan.messages, subagentShare: 0.1, seed: 1, costs: true }),
    );
    const summary = generated.result;
    // Planner statistics, as a live store has them (autovacuum / the host's own maintenance).
    await db.query('ANALYZE');
    const backfill = await benchBackfill(db, summary.messages, plan.runs);
    if (backfill.inserted !== summary.qualifyingKeys) {
      throw new Error(
        `the backfill inserted ${backfill.inserted} rows, the store has ${summary.qualifyingKeys} qualifying keys`,
      );
    }
    await db.query('ANALYZE');
    // The health function's database is a pool (its statements run side by side).
    const pool = bench.connect({ max: 4 });
    const health = await benchHealth(pool, summary.createdAt!.first, plan.runs);
    const report = await benchReportQuery(pool, plan.runs);
    if (report.totals.subagents !== summary.qualifyingKeys) {
      throw new Error(
        `the report counts ${report.totals.subagents} subagents, the store has ${summary.qualifyingKeys} rows`,
      );
    }
    // the page as `report --html` builds and renders it, on the same pool (docs/page.md#size)
    const page = await benchPageOnStore(
      pool,
      `${target.name}, ${summary.messages.toLocaleString('en-US')} messages`,
      plan.runs,
    );
    return { target: target.name, summary, generateMs: generated.ms, backfill, health, report, page };
  } finally {
    await bench.dispose();
  }
}
