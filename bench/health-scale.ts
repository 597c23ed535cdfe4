import type { Database, Queryable } from '../lib/db/database.js';
import { runHealthCheck } from '../lib/health/check.js';
import { CHECKPOINT_KEY } from '../lib/health/checkpoint.js';
import { DEFAULT_GRACE_SECONDS, DEFAULT_OVERLAP_SECONDS } from '../lib/health/config.js';
import { excessSql, rowFactsSql, shortfallSql, windowStatements } from '../lib/health/queries.js';
import type { HealthReport } from '../lib/health/report.js';
import { CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { HOST_TOOL_CALL_INDEX } from '../lib/store/reading.js';
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
 *
 * Issue 26: the history is generated and analysed first, then the new traffic (the last 5
 * minutes) is inserted with every index in place, so the scheduled check is timed three ways on
 * one store: with statistics from before the new traffic; after an ANALYZE that knows it (what
 * autovacuum's leaves; PostgreSQL then preferred hash joins over the history before the fences);
 * and on the host shape without `idx_messages_metadata_tool_call_id` (an older host: the check
 * then leaves excess to the full audit). Each window statement's plan is kept for each way.
 */
export interface HealthScaleFigures {
  target: BenchTarget['name'];
  messages: number;
  rows: number;
  /** setup (not a product figure): generating the store and its indexes */
  generateMs: number;
  /** setup: the ANALYZE after the new traffic (the fresh-statistics case) */
  analyzeMs: number;
  /** messages created inside the scheduled window */
  windowMessages: number;
  /** statistics from before the new traffic */
  scheduled: Timing;
  /** after an ANALYZE that knows the new traffic */
  fresh: Timing;
  /** the host shape without idx_messages_metadata_tool_call_id (fresh statistics) */
  noHostIndex: Timing;
  /** the first scheduled run with no checkpoint (after an upgrade): one run's slices, default limits */
  catchUp: CatchUp;
  full: Timing;
  /** each window statement in each case */
  windowPlans: StatementPlan[];
  /** statement → plan text (PostgreSQL: EXPLAIN, not run, for the full audit's) */
  fullPlans: Record<string, string>;
}

export type PlanCase = 'stale statistics' | 'fresh ANALYZE' | 'no host index';

export interface StatementPlan {
  case: PlanCase;
  statement: string;
  /** the statement run on its own, median of STATEMENT_RUNS */
  ms: number;
  /** one line: each plan node (PostgreSQL: actual rows × loops) */
  summary: string;
  /** PostgreSQL: EXPLAIN (ANALYZE, BUFFERS); SQLite: EXPLAIN QUERY PLAN */
  text: string;
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
/** messages in the new traffic (the last 5 minutes), inserted after the history's ANALYZE */
const NEW_MESSAGES = Number(NEW_TRAFFIC / 1000n) / STEP_MS;
const STATEMENT_RUNS = 3;

export async function benchHealthScale(
  target: BenchTarget,
  messages: number,
  runs: { scheduled: number; full: number },
): Promise<HealthScaleFigures> {
  if (messages < 2 * NEW_MESSAGES)
    throw new RangeError(
      `the health bench needs at least ${2 * NEW_MESSAGES} messages (a whole window), got ${messages}`,
    );
  const bench = await target.fresh();
  try {
    const { db } = bench;
    // Generating millions of rows in one statement, and the full audit at 10M, take longer than the
    // functions' per-statement timeout (lib/db/neon.ts): the benchmark lifts it on its own sessions.
    if (db.dialect.name === 'postgres') await db.query('SET statement_timeout = 0');
    const history = messages - NEW_MESSAGES;
    const generated = await timed(async () => {
      await generate(db, messages, history);
      await db.query('ANALYZE');
      // The new traffic, written with every index in place and not yet analysed.
      await insertTraffic(db, messages, history, messages);
    });
    const first = END - BigInt(messages - 1) * BigInt(STEP_MS) * 1000n;
    await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [CAPTURE_SINCE_KEY, formatKey(first)]);

    const pool = bench.connect({ max: 4 });
    const auditPool = untimed(pool);
    const now = END + BigInt(DEFAULT_GRACE_SECONDS) * 1_000_000n;
    // The last 5 minutes are the new traffic: the checkpoint stands at their start.
    const checkpoint = END - NEW_TRAFFIC;
    const from = checkpoint - BigInt(DEFAULT_OVERLAP_SECONDS) * 1_000_000n;
    const setCheckpoint = (at: Micros) =>
      db.query(
        'INSERT INTO kandev_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        [CHECKPOINT_KEY, formatKey(at)],
      );
    const scheduledRun = () =>
      runHealthCheck(pool, {
        kind: 'scheduled',
        graceSeconds: DEFAULT_GRACE_SECONDS,
        now,
        beforeConfirm: async () => undefined,
      });
    const scheduledCase = async (name: PlanCase, hostIndex: boolean) => {
      // One untimed run from the same checkpoint opens the pool's connections and warms the caches,
      // as a warm Lambda has them (without a checkpoint it would be a catch-up run, measured below).
      await setCheckpoint(checkpoint);
      await scheduledRun();
      const timing = await repeat(runs.scheduled, async () => {
        await setCheckpoint(checkpoint);
        return timed(scheduledRun);
      });
      return { timing, plans: await windowPlans(db, name, hostIndex, first, from, END) };
    };

    const stale = await scheduledCase('stale statistics', true);
    const analyzed = await timed(() => db.query('ANALYZE'));
    const fresh = await scheduledCase('fresh ANALYZE', true);
    // The first run after an upgrade: no checkpoint, the whole history since capture_since to
    // verify. Default slices and catch-up time, as the deployed function runs it.
    await db.query('DELETE FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY]);
    const catchUp = await timed(scheduledRun);
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
    const fullPlans = await auditPlans(db, first, END);
    // An older host: the same store without the host's metadata index.
    await db.query(`DROP INDEX ${HOST_TOOL_CALL_INDEX}`);
    const noHostIndex = await scheduledCase('no host index', false);

    for (const [kind, timing] of [
      ['scheduled (stale statistics)', stale.timing],
      ['scheduled (fresh ANALYZE)', fresh.timing],
      ['scheduled (no host index)', noHostIndex.timing],
      ['catch-up', { report: catchUp.result }],
      ['full', full],
    ] as const) {
      if (timing.report.status !== 'healthy')
        throw new Error(
          `the ${kind} check on a consistent store should be healthy, got ${JSON.stringify(timing.report)}`,
        );
    }
    if (noHostIndex.timing.report.excessLeftToAudit === null || fresh.timing.report.excessLeftToAudit !== null)
      throw new Error('excess should be left to the full audit exactly when the host index is missing');
    const windowMessages = Math.min(messages, Number((END - from) / 1000n / BigInt(STEP_MS)) + 1);
    return {
      target: target.name,
      messages,
      rows: Math.ceil(messages / SUBAGENT_EVERY),
      generateMs: generated.ms,
      analyzeMs: analyzed.ms,
      windowMessages,
      scheduled: stale.timing,
      fresh: fresh.timing,
      noHostIndex: noHostIndex.timing,
      catchUp: {
        ms: catchUp.ms,
        verifiedHours: hoursOf(catchUp.result.window!),
        historyHours: Number(now - BigInt(DEFAULT_GRACE_SECONDS) * 1_000_000n - first) / 3.6e9,
        recent: catchUp.result.recent !== null,
      },
      full,
      windowPlans: [...stale.plans, ...fresh.plans, ...noHostIndex.plans],
      fullPlans,
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

/** The set-based generators of one dialect: message g is created at at(g), in session g / 150. */
function generators(db: Database, n: number) {
  const d = db.dialect.name;
  const at = (g: string) =>
    d === 'postgres'
      ? `(TIMESTAMP '${formatCanonical(END)}' - ((${n - 1} - ${g}) * ${STEP_MS}::bigint) * INTERVAL '1 millisecond')`
      : `(strftime('%Y-%m-%d %H:%M:%f', (${Number(END / 1000n)} - (${n - 1} - ${g}) * ${STEP_MS}) / 1000.0, 'unixepoch') || '+00:00')`;
  // g over [start, end)
  const from = (start: number, end: number, body: (g: string) => string) =>
    d === 'postgres'
      ? `${body('g')} FROM generate_series(${start}, ${end - 1}) AS s(g)`
      : `WITH RECURSIVE s(g) AS (SELECT ${start} UNION ALL SELECT g + 1 FROM s WHERE g < ${end - 1}) ${body('g')} FROM s`;
  return { at, from };
}

/**
 * The host's DDL with the message indexes built after the load (as fast as building them while
 * inserting, and far faster on SQLite), then our table (migrate's DDL) and its rows: the history,
 * messages [0, history) of n.
 */
async function generate(db: Database, n: number, history: number): Promise<void> {
  const d = db.dialect.name;
  const statements = kandevSchema(d).filter(
    (s) => !/^CREATE TABLE IF NOT EXISTS task_session_subagents|ON task_session_subagents/.test(s),
  );
  const deferred = statements.filter((s) => /^CREATE INDEX.* ON task_session_messages/s.test(s));
  for (const s of statements) if (!deferred.includes(s)) await db.query(s);

  const sessions = Math.ceil(n / 150);
  const turns = Math.ceil(n / 25);
  const { from } = generators(db, n);
  const hostTime = `'2026-01-01 00:00:00'`;
  await db.query(
    `INSERT INTO tasks (id, title, created_at, updated_at) ${from(0, Math.ceil(sessions / 2), (g) => `SELECT 'task-' || ${g}, 'bench', ${hostTime}, ${hostTime}`)}`,
  );
  await db.query(
    `INSERT INTO task_sessions (id, task_id, started_at, updated_at) ${from(0, sessions, (g) => `SELECT 'ses-' || ${g}, 'task-' || (${g} / 2), ${hostTime}, ${hostTime}`)}`,
  );
  await db.query(
    `INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, updated_at) ${from(0, turns, (g) => `SELECT 'turn-' || ${g}, 'ses-' || (${g} / 6), 'task-' || (${g} / 12), ${hostTime}, ${hostTime}, ${hostTime}`)}`,
  );
  await insertMessages(db, n, 0, history);
  for (const s of deferred) await db.query(s);
  await ensureSubagentTable(db);
  await insertRows(db, n, 0, history);
}

/** Messages [start, end) of n and their rows, as the host and the ingest function write them. */
async function insertTraffic(db: Database, n: number, start: number, end: number): Promise<void> {
  await insertMessages(db, n, start, end);
  await insertRows(db, n, start, end);
}

async function insertMessages(db: Database, n: number, start: number, end: number): Promise<void> {
  const { at, from } = generators(db, n);
  const subagent = (g: string) =>
    `'{"tool_call_id":"toolu_' || ${g} || '","parent_tool_call_id":"","status":"completed","normalized":{"kind":"subagent_task","subagent_task":{"subagent_type":"Explore","status":"completed","is_async":false,"total_tokens":1234,"prompt":"never stored"}}}'`;
  const ordinary = (g: string) =>
    `'{"tool_call_id":"tool_' || ${g} || '","status":"completed","normalized":{"kind":"shell_exec"}}'`;
  await db.query(
    `INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, content, type, metadata, created_at, updated_at) ${from(
      start,
      end,
      (g) =>
        `SELECT 'msg-' || ${g}, 'ses-' || (${g} / 150), 'task-' || (${g} / 300), 'turn-' || (${g} / 25), 'agent', 'bench',
        CASE WHEN ${g} % ${SUBAGENT_EVERY} = 0 THEN 'tool_call' ELSE 'message' END,
        CASE WHEN ${g} % ${SUBAGENT_EVERY} = 0 THEN ${subagent(g)} WHEN ${g} % 2 = 0 THEN '{}' ELSE ${ordinary(g)} END,
        ${at(g)}, ${at(g)}`,
    )}`,
  );
}

/** One row per subagent call among messages [start, end), observed when its message was created (a timely live frame). */
async function insertRows(db: Database, n: number, start: number, end: number): Promise<void> {
  const { at, from } = generators(db, n);
  await db.query(
    `INSERT INTO task_session_subagents (id, task_session_id, task_id, turn_id, tool_call_id, agent_execution_id, subagent_type, agent_status, tool_status, is_async, source, observed_at, updated_at) ${from(
      Math.ceil(start / SUBAGENT_EVERY),
      Math.ceil(end / SUBAGENT_EVERY),
      (k) => {
        const g = `(${k} * ${SUBAGENT_EVERY})`;
        return `SELECT 'row-' || ${g}, 'ses-' || (${g} / 150), 'task-' || (${g} / 300), 'turn-' || (${g} / 25), 'toolu_' || ${g}, 'exec-' || ${g}, 'Explore', 'completed', 'completed', 0, 'live', ${at(g)}, ${at(g)}`;
      },
    )}`,
  );
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Subplan Name'?: string;
  Plans?: PlanNode[];
}

/** PostgreSQL's plan as one line: each node (pre-order), its table or index, actual rows × loops. */
function summarize(node: PlanNode): string {
  const parts: string[] = [];
  const walk = (n: PlanNode) => {
    const on = n['Index Name'] ? ` ${n['Index Name']}` : n['Relation Name'] ? ` ${n['Relation Name']}` : '';
    const sub = n['Subplan Name'] ? `${n['Subplan Name']}: ` : '';
    parts.push(`${sub}${n['Node Type']}${on} ${n['Actual Rows']}×${n['Actual Loops']}`);
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(node);
  return parts.join(' → ');
}

/** Each statement the scheduled check runs on this store shape (lib/health/queries.ts windowStatements). */
async function windowPlans(
  db: Database,
  name: PlanCase,
  hostIndex: boolean,
  since: Micros,
  from: Micros,
  to: Micros,
): Promise<StatementPlan[]> {
  const { dialect } = db;
  const window = [formatCanonical(since), formatCanonical(from), formatCanonical(to)];
  const statements = windowStatements(dialect, hostIndex);
  const out: StatementPlan[] = [];
  for (const [statement, sql] of Object.entries(statements)) {
    if (sql === null) {
      out.push({ case: name, statement, ms: 0, summary: 'not run: left to the full audit (no host index)', text: '' });
      continue;
    }
    const params = statement === 'lastObserved' ? [window[0]] : window;
    const samples: number[] = [];
    for (let i = 0; i < STATEMENT_RUNS; i++) samples.push((await timed(() => db.query(sql, params))).ms);
    let summary: string;
    let text: string;
    if (dialect.name === 'postgres') {
      const [json] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      const raw = json!['QUERY PLAN'];
      const [{ Plan }] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
      summary = summarize(Plan);
      text = formatPlan(await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params));
    } else {
      const rows = await db.query(`EXPLAIN QUERY PLAN ${sql}`, params);
      text = formatPlan(rows);
      summary = rows.map((r) => String(r.detail)).join('; ');
    }
    out.push({ case: name, statement, ms: median(samples), summary, text });
  }
  return out;
}

/** The full audit's statements: PostgreSQL EXPLAIN (not run: each reads the history), SQLite EXPLAIN QUERY PLAN. */
async function auditPlans(db: Database, since: Micros, cutoff: Micros): Promise<Record<string, string>> {
  const { dialect } = db;
  const params = [formatCanonical(since), formatCanonical(cutoff)];
  const statements: [string, string, unknown[]][] = [
    ['full: shortfall', shortfallSql(dialect), params],
    ['full: excess', excessSql(dialect), [params[0]]],
    ['full: row facts', rowFactsSql(dialect), [params[0]]],
  ];
  const out: Record<string, string> = {};
  for (const [name, sql, p] of statements) {
    const explain = dialect.name === 'postgres' ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN';
    out[name] = formatPlan(await db.query(`${explain} ${sql}`, p));
  }
  return out;
}
