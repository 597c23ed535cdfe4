import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Database, Queryable, QueryOptions } from '../lib/db/database.js';
import { openDatabase } from '../lib/db/open.js';
import { startWsProxy } from '../lib/db/ws-proxy.js';
import { PAGE_DEFAULTS, STATEMENT_TIMEOUT_SECONDS } from '../lib/defaults.js';
import { CHECKPOINT_KEY } from '../lib/health/checkpoint.js';
import { buildReport, type ReportOptions } from '../lib/report/build.js';
import { formatKey, type Micros } from '../lib/time.js';
import { generateReadStore, READ_STORE_END, type ReadStore } from './read-store.js';
import { median, timed } from './stats.js';
import type { BenchTarget } from './targets.js';

/*
 * R4-12 (issue 35): the read side on generated host stores (bench/read-store.ts). Each case runs as
 * the CLI runs it, in a fresh process (bench/read-side-child.ts: a pool of 4, the page or the JSON
 * text written), so its wall time and peak RSS are its own; each against the database's own
 * one-pass aggregate over the same rows in the same run, through the same driver and pool.
 */

export type ReadCase = 'json' | 'by task' | 'by day' | 'page';

export const CASE_OPTIONS: Record<ReadCase, ReportOptions> = {
  json: {},
  'by task': { by: 'task' },
  'by day': { by: 'day' },
  // as `report --html` builds it (lib/cli/commands/report.ts): the page's data and trees, no --by
  page: { pageData: true, trees: PAGE_DEFAULTS.trees },
};
const CASES = Object.keys(CASE_OPTIONS) as ReadCase[];

/** R4-12's targets at 1M messages, ms; at 10M 10× that. Only `report --json` and the page have one. */
export const READ_TARGET_MS: Partial<Record<ReadCase, number>> = { json: 1_000, page: 2_000 };

/** Issue 59's targets as ratios to the one-pass aggregate in the same run (BASELINE_SQL), at every size. */
export const READ_TARGET_RATIO: Partial<Record<ReadCase, number>> = { json: 10, page: 20, 'by task': 20 };

/** The database's own one-pass aggregate over the same rows (R4-12's ratio). */
export const BASELINE_SQL = 'SELECT task_id, COUNT(*), SUM(total_tokens) FROM task_session_subagents GROUP BY task_id';

export interface CaseFigures {
  case: ReadCase;
  checkpoint: boolean;
  /** median wall ms; NaN when a run failed */
  ms: number;
  perRunMs: number[];
  peakRssMiB: number;
  groups: number;
  bytes: number;
  /** a run's error message (the case then has no figure: "never a failure") */
  error?: string;
  /** the statements of one run, each run alone, slowest first: where the time goes */
  statements?: { label: string; ms: number }[];
}

export interface ReadSideFigures {
  target: BenchTarget['name'];
  store: ReadStore;
  generateMs: number;
  baselineMs: number;
  baselinePerRunMs: number[];
  cases: CaseFigures[];
  /** the page's figures statement (PostgreSQL: EXPLAIN (ANALYZE); SQLite: EXPLAIN QUERY PLAN) */
  plans: Record<string, string>;
}

const exec = promisify(execFile);
const CHILD = fileURLToPath(new URL('./read-side-child.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));

export async function benchReadSide(
  target: BenchTarget,
  plan: { messages: number; tasks?: number; runs: number },
): Promise<ReadSideFigures> {
  const bench = await target.fresh();
  try {
    const { db } = bench;
    const generated = await timed(() => generateReadStore(db, plan.messages, { tasks: plan.tasks }));
    const store = generated.result;
    // the CLI's statement cap: the profile and the plan run the page's statements on a loaded machine too
    const pool = bench.connect({ max: 4, statementTimeoutMs: STATEMENT_TIMEOUT_SECONDS.cli * 1000 });
    const url = bench.url;
    const now: Micros = READ_STORE_END + 60_000_000n;
    const baseline: number[] = [];
    const cases: CaseFigures[] = [];
    for (const checkpoint of [true, false]) {
      // The scheduled check verified all but the last 5 minutes; or it never ran.
      await db.query('DELETE FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]);
      if (checkpoint)
        await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [
          CHECKPOINT_KEY,
          formatKey(READ_STORE_END - 300_000_000n),
        ]);
      for (const which of CASES) {
        const runs: { ms: number; peakRssMiB: number; groups: number; bytes: number; error?: string }[] = [];
        for (let i = 0; i < plan.runs; i++) {
          // the database's own aggregate beside each run, so the ratio sees the same load
          baseline.push((await timed(() => pool.query(BASELINE_SQL))).ms);
          runs.push(await child(url, which, now));
        }
        const failed = runs.find((r) => r.error !== undefined);
        const figures: CaseFigures = {
          case: which,
          checkpoint,
          ms: failed ? Number.NaN : median(runs.map((r) => r.ms)),
          perRunMs: runs.map((r) => r.ms),
          peakRssMiB: Math.max(...runs.map((r) => r.peakRssMiB)),
          groups: runs[0]!.groups,
          bytes: runs[0]!.bytes,
          ...(failed ? { error: failed.error } : {}),
        };
        const target = READ_TARGET_MS[which];
        const limit = target === undefined ? undefined : target * (plan.messages > 1_000_000 ? 10 : 1);
        const ratioLimit = READ_TARGET_RATIO[which];
        const overRatio = ratioLimit !== undefined && figures.ms > ratioLimit * median(baseline);
        if (failed || (limit !== undefined && figures.ms > limit) || overRatio)
          figures.statements = await profile(url, which, now);
        cases.push(figures);
      }
    }
    return {
      target: target.name,
      store,
      generateMs: generated.ms,
      baselineMs: median(baseline),
      baselinePerRunMs: baseline,
      cases,
      plans: await pagePlan(url).catch((err: unknown) => ({ 'the plan failed': (err as Error).message })),
    };
  } finally {
    await bench.dispose();
  }
}

async function child(
  url: string,
  which: ReadCase,
  now: Micros,
): Promise<{ ms: number; peakRssMiB: number; groups: number; bytes: number; error?: string }> {
  try {
    const { stdout } = await exec(process.execPath, [TSX, CHILD, url, which, String(now)], {
      maxBuffer: 1 << 20,
      env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    return {
      ms: Number(out.ms ?? Number.NaN),
      peakRssMiB: Number(out.peakRssMiB),
      groups: Number(out.groups ?? 0),
      bytes: Number(out.bytes ?? 0),
      ...(typeof out.error === 'string' ? { error: out.error } : {}),
    };
  } catch (err) {
    return { ms: Number.NaN, peakRssMiB: Number.NaN, groups: 0, bytes: 0, error: (err as Error).message };
  }
}

/** What each statement sends, by what it is (lib/report/sql.ts, lib/health/queries.ts, trees.ts). */
function labelOf(sql: string): string {
  // statement 1 holds the spend figures too (R6-5: our usage table joined to each row)
  if (sql.includes('AS lower_bound_sessions')) return 'figures with spend (statement 1)';
  if (sql.includes("'model' AS kind"))
    return sql.includes("'duration'") ? 'breakdown and duration histogram (statement 2)' : 'breakdown (statement 2)';
  if (sql.includes('COUNT(*) OVER () AS total')) return 'shortfall since the checkpoint (health window)';
  // lib/report/fan-out-cost-sql.ts: its turns, top-level rows (with their usage, R6-5) and events
  // grouped by turn; it names turns and parent_tool_call_id as the trees do, so it is told first
  if (sql.includes('per_turn AS (')) return 'fan-out cost and its subagent spend (R5-3, R6-5)';
  if (/turn/i.test(sql) && /parent_tool_call_id/.test(sql)) return 'trees';
  return 'catalog and keys';
}

/**
 * Where the time goes: one run of the case on one read-only connection (as the CLI opens it: JIT
 * off on PostgreSQL), its statements recorded, then each statement run again alone and timed, so
 * no statement's figure holds the JavaScript that ran while it was in flight; what the run took
 * beyond its statements is this process's own (rows into the document).
 */
async function profile(url: string, which: ReadCase, now: Micros): Promise<{ label: string; ms: number }[]> {
  const { db, close } = await openReader(url);
  const sent: { sql: string; params?: readonly unknown[]; options?: QueryOptions }[] = [];
  const recording: Queryable = {
    dialect: db.dialect,
    connections: 1,
    query: <T>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      sent.push({ sql, params, options });
      return db.query<T>(sql, params, options);
    },
  };
  try {
    const { ms } = await timed(() => buildReport(recording, { ...CASE_OPTIONS[which], now, graceSeconds: 0 }));
    const spent = new Map<string, number>();
    for (const { sql, params, options } of sent) {
      const alone = (await timed(() => db.query(sql, params, options))).ms;
      spent.set(labelOf(sql), (spent.get(labelOf(sql)) ?? 0) + alone);
    }
    const statements = [...spent.values()].reduce((a, b) => a + b, 0);
    return [
      ...[...spent].map(([label, ms]) => ({ label, ms })).sort((a, b) => b.ms - a.ms),
      {
        label: `in this process (rows into the document; the sequential run took ${Math.round(ms)} ms)`,
        ms: ms - statements,
      },
    ];
  } catch (err) {
    return [{ label: `the sequential run failed too: ${(err as Error).message}`, ms: Number.NaN }];
  } finally {
    await close();
  }
}

/** The store on one connection as the CLI's read-only open makes it (JIT off on PostgreSQL). */
async function openReader(url: string): Promise<{ db: Database; close: () => Promise<void> }> {
  const proxy = url.startsWith('postgres') ? await startWsProxy() : undefined;
  const db = openDatabase(url, {
    wsProxy: proxy?.address,
    max: 1,
    readonly: true,
    statementTimeoutMs: STATEMENT_TIMEOUT_SECONDS.cli * 1000,
  });
  return {
    db,
    close: async () => {
      await db.close();
      await proxy?.close();
    },
  };
}

async function pagePlan(url: string): Promise<Record<string, string>> {
  const { db: pool, close } = await openReader(url);
  try {
    return await explainPage(pool);
  } finally {
    await close();
  }
}

async function explainPage(pool: Database): Promise<Record<string, string>> {
  const { formatPlan } = await import('./health.js');
  // the page's two heaviest statements as build.ts makes them (their levels and cuts): the figures
  // with spend and the fan-out cost with its subagent spend
  const wanted = ['figures with spend (statement 1)', 'fan-out cost and its subagent spend (R5-3, R6-5)'];
  const statements = new Map<string, { sql: string; params: unknown[] }>();
  const recording: Queryable = {
    dialect: pool.dialect,
    connections: 1,
    query: <T>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      if (wanted.includes(labelOf(sql))) statements.set(labelOf(sql), { sql, params: [...(params ?? [])] });
      return pool.query<T>(sql, params, options);
    },
  };
  await buildReport(recording, { ...CASE_OPTIONS.page, now: READ_STORE_END + 60_000_000n, graceSeconds: 0 });
  if (!statements.has(wanted[0]!)) throw new Error('the page sent no figures statement');
  const explain = pool.dialect.name === 'postgres' ? 'EXPLAIN (ANALYZE, BUFFERS)' : 'EXPLAIN QUERY PLAN';
  const plans: Record<string, string> = {};
  const titles: Record<string, string> = {
    [wanted[0]!]: "the page's figures statement with spend (totals, the series by day and type, the first task groups)",
    [wanted[1]!]: "the page's fan-out cost statement with its subagent spend (lib/report/fan-out-cost-sql.ts)",
  };
  for (const [label, statement] of statements) {
    plans[titles[label]!] = formatPlan(await pool.query(`${explain} ${statement.sql}`, statement.params));
  }
  return plans;
}
