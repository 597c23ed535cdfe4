import type { Database, Queryable } from '../lib/db/database.js';
import { runHealthCheck } from '../lib/health/check.js';
import { CHECKPOINT_KEY } from '../lib/health/checkpoint.js';
import { DEFAULT_GRACE_SECONDS, DEFAULT_OVERLAP_SECONDS } from '../lib/health/config.js';
import {
  excessSql,
  lastObservedSql,
  rowFactsSql,
  shortfallSql,
  windowCollisionsSql,
  windowExcessSql,
  windowShortfallSql,
} from '../lib/health/queries.js';
import type { HealthReport } from '../lib/health/report.js';
import { CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { ensureSubagentTable } from '../lib/store/schema.js';
import { formatCanonical, formatKey, type Micros, parseRfc3339 } from '../lib/time.js';
import { kandevSchema } from '../local/kandev-schema.js';
import { formatPlan } from './health.js';
import { median, timed } from './stats.js';
import type { BenchTarget } from './targets.js';

/**
 * Issue 13's cost at scale: a host store of N messages in the host's real DDL (every index the
 * host creates), generated IN the database with set-based SQL (generate_series on PostgreSQL, a
 * recursive CTE on SQLite), at one fixed traffic rate: a message every 300 ms (200 a minute, 10%
 * of them subagent calls, each with its row). A bigger store is a longer history at the same
 * rate, so the scheduled check's window (5 minutes of new traffic plus the 5-minute overlap) holds
 * the same 2,000 messages at every size, and only the history around it grows.
 */
export interface HealthScaleFigures {
  target: BenchTarget['name'];
  messages: number;
  rows: number;
  /** setup (not a product figure): generating the store and its indexes */
  generateMs: number;
  /** messages created inside the scheduled window */
  windowMessages: number;
  scheduled: Timing;
  /** the first scheduled run with no checkpoint (after an upgrade): one run's slices, default limits */
  catchUp: CatchUp;
  full: Timing;
  /** statement → plan text (PostgreSQL: EXPLAIN ANALYZE for the window statements) */
  plans: Record<string, string>;
}

export interface CatchUp {
  ms: number;
  /** hours of history the run verified (its window) */
  verifiedHours: number;
  /** hours from capture_since to now − grace */
  historyHours: number;
  /** whether it also compared the newest traffic (it did not reach now − grace) */
  recent: boolean;
}

const hoursOf = (w: { from: string; to: string }) => Number(parseRfc3339(w.to)! - parseRfc3339(w.from)!) / 3.6e9;

export interface Timing {
  wallMs: number;
  perRunMs: number[];
  report: HealthReport;
}

const STEP_MS = 300;
const SUBAGENT_EVERY = 10;
/** the last generated message is created here; the clock of every check is END + grace */
const END: Micros = parseRfc3339('2026-11-30T00:00:00Z')!;
const NEW_TRAFFIC = 300n * 1_000_000n;

export async function benchHealthScale(
  target: BenchTarget,
  messages: number,
  runs: { scheduled: number; full: number },
): Promise<HealthScaleFigures> {
  const bench = await target.fresh();
  try {
    const { db } = bench;
    // Generating millions of rows in one statement, and the full audit at 10M, take longer than the
    // functions' per-statement timeout (lib/db/neon.ts): the benchmark lifts it on its own sessions.
    if (db.dialect.name === 'postgres') await db.query('SET statement_timeout = 0');
    const generated = await timed(() => generate(db, messages));
    const first = END - BigInt(messages - 1) * BigInt(STEP_MS) * 1000n;
    await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [CAPTURE_SINCE_KEY, formatKey(first)]);
    await db.query('ANALYZE');

    const pool = bench.connect({ max: 4 });
    const auditPool = untimed(pool);
    const now = END + BigInt(DEFAULT_GRACE_SECONDS) * 1_000_000n;
    // The last 5 minutes are the new traffic: the checkpoint stands at their start.
    const checkpoint = END - NEW_TRAFFIC;
    const setCheckpoint = (at: Micros) =>
      db.query(
        'INSERT INTO kandev_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        [CHECKPOINT_KEY, formatKey(at)],
      );
    // One untimed run from the same checkpoint opens the pool's connections and warms the caches,
    // as a warm Lambda has them (without a checkpoint it would be a catch-up run, measured below).
    await setCheckpoint(checkpoint);
    await runHealthCheck(pool, {
      kind: 'scheduled',
      graceSeconds: DEFAULT_GRACE_SECONDS,
      now,
      beforeConfirm: async () => undefined,
    });
    const scheduled = await repeat(runs.scheduled, async () => {
      await setCheckpoint(checkpoint);
      return timed(() =>
        runHealthCheck(pool, {
          kind: 'scheduled',
          graceSeconds: DEFAULT_GRACE_SECONDS,
          now,
          beforeConfirm: async () => undefined,
        }),
      );
    });
    // The first run after an upgrade: no checkpoint, the whole history since capture_since to
    // verify. Default slices and catch-up time, as the deployed function runs it.
    await db.query('DELETE FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]);
    const catchUp = await timed(() =>
      runHealthCheck(pool, {
        kind: 'scheduled',
        graceSeconds: DEFAULT_GRACE_SECONDS,
        now,
        beforeConfirm: async () => undefined,
      }),
    );
    const full = await repeat(runs.full, () =>
      timed(() =>
        runHealthCheck(auditPool, {
          kind: 'full',
          graceSeconds: DEFAULT_GRACE_SECONDS,
          now,
          beforeConfirm: async () => undefined,
        }),
      ),
    );
    for (const [kind, timing] of [
      ['scheduled', scheduled],
      ['catch-up', { report: catchUp.result }],
      ['full', full],
    ] as const) {
      if (timing.report.status !== 'healthy')
        throw new Error(
          `the ${kind} check on a consistent store should be healthy, got ${JSON.stringify(timing.report)}`,
        );
    }
    const from = checkpoint - BigInt(DEFAULT_OVERLAP_SECONDS) * 1_000_000n;
    const windowMessages = Math.min(messages, Number((END - from) / 1000n / BigInt(STEP_MS)) + 1);
    return {
      target: target.name,
      messages,
      rows: Math.ceil(messages / SUBAGENT_EVERY),
      generateMs: generated.ms,
      windowMessages,
      scheduled,
      catchUp: {
        ms: catchUp.ms,
        verifiedHours: hoursOf(catchUp.result.window!),
        historyHours: Number(now - BigInt(DEFAULT_GRACE_SECONDS) * 1_000_000n - first) / 3.6e9,
        recent: catchUp.result.recent !== null,
      },
      full,
      plans: await plans(db, first, from, END),
    };
  } finally {
    await bench.dispose();
  }
}

/**
 * A client for the full audit: at 10M messages its statements outlast the functions'
 * per-statement timeout (lib/db/neon.ts), so each runs in a transaction that lifts it.
 */
function untimed(pool: Database): Queryable {
  if (pool.dialect.name !== 'postgres') return pool;
  return {
    dialect: pool.dialect,
    query: (sql, params) =>
      pool.transaction(async (tx) => {
        await tx.query('SET LOCAL statement_timeout = 0');
        return tx.query(sql, params);
      }),
  };
}

async function repeat(runs: number, once: () => Promise<{ result: HealthReport; ms: number }>): Promise<Timing> {
  const samples: { result: HealthReport; ms: number }[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return {
    wallMs: median(samples.map((s) => s.ms)),
    perRunMs: samples.map((s) => s.ms),
    report: samples.at(-1)!.result,
  };
}

/**
 * The host's DDL with the message indexes built after the load (as fast as building them while
 * inserting, and far faster on SQLite), then our table (migrate's DDL) and its rows.
 */
async function generate(db: Database, n: number): Promise<void> {
  const d = db.dialect.name;
  const statements = kandevSchema(d).filter(
    (s) => !/^CREATE TABLE IF NOT EXISTS task_session_subagents|ON task_session_subagents/.test(s),
  );
  const deferred = statements.filter((s) => /^CREATE INDEX.* ON task_session_messages/s.test(s));
  for (const s of statements) if (!deferred.includes(s)) await db.query(s);

  const sessions = Math.ceil(n / 150);
  const turns = Math.ceil(n / 25);
  const at = (g: string) =>
    d === 'postgres'
      ? `(TIMESTAMP '${formatCanonical(END)}' - ((${n - 1} - ${g}) * ${STEP_MS}::bigint) * INTERVAL '1 millisecond')`
      : `(strftime('%Y-%m-%d %H:%M:%f', (${Number(END / 1000n)} - (${n - 1} - ${g}) * ${STEP_MS}) / 1000.0, 'unixepoch') || '+00:00')`;
  const hostTime = `'2026-01-01 00:00:00'`;
  const from = (count: number, body: (g: string) => string) =>
    d === 'postgres'
      ? `${body('g')} FROM generate_series(0, ${count - 1}) AS s(g)`
      : `WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < ${count - 1}) ${body('g')} FROM s`;

  await db.query(
    `INSERT INTO tasks (id, title, created_at, updated_at) ${from(Math.ceil(sessions / 2), (g) => `SELECT 'task-' || ${g}, 'bench', ${hostTime}, ${hostTime}`)}`,
  );
  await db.query(
    `INSERT INTO task_sessions (id, task_id, started_at, updated_at) ${from(sessions, (g) => `SELECT 'ses-' || ${g}, 'task-' || (${g} / 2), ${hostTime}, ${hostTime}`)}`,
  );
  await db.query(
    `INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, updated_at) ${from(turns, (g) => `SELECT 'turn-' || ${g}, 'ses-' || (${g} / 6), 'task-' || (${g} / 12), ${hostTime}, ${hostTime}, ${hostTime}`)}`,
  );
  const subagent = (g: string) =>
    `'{"tool_call_id":"toolu_' || ${g} || '","parent_tool_call_id":"","status":"completed","normalized":{"kind":"subagent_task","subagent_task":{"subagent_type":"Explore","status":"completed","is_async":false,"total_tokens":1234,"prompt":"never stored"}}}'`;
  const ordinary = (g: string) =>
    `'{"tool_call_id":"tool_' || ${g} || '","status":"completed","normalized":{"kind":"shell_exec"}}'`;
  await db.query(
    `INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, content, type, metadata, created_at, updated_at) ${from(
      n,
      (g) =>
        `SELECT 'msg-' || ${g}, 'ses-' || (${g} / 150), 'task-' || (${g} / 300), 'turn-' || (${g} / 25), 'agent', 'bench',
        CASE WHEN ${g} % ${SUBAGENT_EVERY} = 0 THEN 'tool_call' ELSE 'message' END,
        CASE WHEN ${g} % ${SUBAGENT_EVERY} = 0 THEN ${subagent(g)} WHEN ${g} % 2 = 0 THEN '{}' ELSE ${ordinary(g)} END,
        ${at(g)}, ${at(g)}`,
    )}`,
  );
  for (const s of deferred) await db.query(s);

  await ensureSubagentTable(db);
  // One row per subagent call, observed when its message was created (as a timely live frame).
  await db.query(
    `INSERT INTO task_session_subagents (id, task_session_id, task_id, turn_id, tool_call_id, agent_execution_id, subagent_type, agent_status, tool_status, is_async, source, observed_at, updated_at) ${from(
      Math.ceil(n / SUBAGENT_EVERY),
      (k) => {
        const g = `(${k} * ${SUBAGENT_EVERY})`;
        return `SELECT 'row-' || ${g}, 'ses-' || (${g} / 150), 'task-' || (${g} / 300), 'turn-' || (${g} / 25), 'toolu_' || ${g}, 'exec-' || ${g}, 'Explore', 'completed', 'completed', 0, 'live', ${at(g)}, ${at(g)}`;
      },
    )}`,
  );
}

const EXPLAIN: Record<Database['dialect']['name'], string> = {
  postgres: 'EXPLAIN (ANALYZE, BUFFERS)',
  sqlite: 'EXPLAIN QUERY PLAN',
};

async function plans(db: Database, since: Micros, from: Micros, to: Micros): Promise<Record<string, string>> {
  const { dialect } = db;
  const window = [formatCanonical(since), formatCanonical(from), formatCanonical(to)];
  const statements: [string, string, unknown[], boolean][] = [
    ['scheduled: shortfall', windowShortfallSql(dialect), window, true],
    ['scheduled: excess', windowExcessSql(dialect, true), window, true],
    ['scheduled: collisions', windowCollisionsSql(dialect), window, true],
    ['both: last observed', lastObservedSql(dialect), [window[0]], true],
    ['full: shortfall', shortfallSql(dialect), [window[0], window[2]], false],
    ['full: excess', excessSql(dialect), [window[0]], false],
    ['full: row facts', rowFactsSql(dialect), [window[0]], false],
  ];
  const out: Record<string, string> = {};
  for (const [name, sql, params, analyze] of statements) {
    const explain = dialect.name === 'postgres' && !analyze ? 'EXPLAIN' : EXPLAIN[dialect.name];
    out[name] = formatPlan(await db.query(`${explain} ${sql}`, params));
  }
  return out;
}
