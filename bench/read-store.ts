import type { Database } from '../lib/db/database.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../lib/store/meta.js';
import { ensureSubagentTable } from '../lib/store/schema.js';
import { USAGE_TABLE } from '../lib/store/usage-table.js';
import { formatCanonical, formatKey, type Micros, parseRfc3339 } from '../lib/time.js';
import { KANDEV_COST_EVENTS, kandevSchema } from '../local/kandev-schema.js';

/*
 * The read side's bench store (R4-12, issue 35): N messages in the host's real DDL (every index the
 * host creates, local/kandev-schema.ts) and our table with its rows, generated IN the database with
 * set-based SQL (generate_series on PostgreSQL, a recursive CTE on SQLite) as bench/health-scale.ts
 * does, so 10M messages take minutes, not an hour. Shape (docs/README.md#real-traffic, coarsely):
 * sessions of 15 messages in 3 turns of 5, a message every 3 s (1M messages ≈ 35 days, 10M ≈ a
 * year); one task per 4/3 sessions (50,000 tasks at 1M) unless `tasks` is given; per session one top-level subagent, a
 * second one in every third session (fan-out 2), a nested one in every seventh: about one row per
 * ten messages (about 98,000 rows at 1M). Rows carry every figure's column with NULLs where the
 * host leaves them (tokens of one row in 11, the model of one in 4). capture_since is the middle of
 * the history: the first half is backfilled rows (their sessions a lower bound), the second live.
 * The cost ledger as the host writes it under cost contract v3 (R5-5, local/generate-host-store.ts's
 * costLedger): per turn one event, two on one turn in five (usage reported again after the turn),
 * none on one in twenty (about 220,000 with a turn id at 1M messages), each with its tokens, cached
 * split and usage event id; one in ten `unpriced` at cost 0, the rest `provider_reported` or
 * `models_dev_list` (with its rates and catalog version), `tokens_out` NULL on some reported ones;
 * and one legacy event (NULL cost_source and turn_id) per ten turns. Turns start at their first
 * message. Our usage table (R6-2) holds run usage for two subagents in five (about 39,000 rows at
 * 1M), one in ten unpriced, about one in five not final, generated in one statement too.
 */

export interface ReadStore {
  messages: number;
  rows: number;
  /** rows of our usage table (R6-2): two subagents in five */
  usageRows: number;
  /** events of the host's cost ledger */
  costEvents: number;
  tasks: number;
  sessions: number;
  captureSince: Micros;
  /** the newest message's created_at (the report's clock is after it) */
  end: Micros;
}

/**
 * PostgreSQL's g from..to as BIGINT: the generators multiply it (a turn's events by 7919), which
 * passes 2^31 past 270,000 turns (about 1.35M messages) in a 32-bit integer.
 */
const series = (from: number, to: number) => `generate_series(CAST(${from} AS BIGINT), CAST(${to} AS BIGINT)) AS s(g)`;

const STEP_MS = 3_000;
const PER_SESSION = 15;
const PER_TURN = 5;
export const READ_STORE_END: Micros = parseRfc3339('2026-11-30T00:00:00Z')!;

/** Subagent positions within a session's 15 messages: 1 (always), 2 (every 3rd session), 7 nested under 1 (every 7th). */
const SUBAGENT = (g: string) =>
  `((${g}) % ${PER_SESSION} = 1 OR ((${g}) % ${PER_SESSION} = 2 AND ((${g}) / ${PER_SESSION}) % 3 = 0) OR ((${g}) % ${PER_SESSION} = 3 AND ((${g}) / ${PER_SESSION}) % 7 = 0))`;

export async function generateReadStore(db: Database, n: number, options: { tasks?: number } = {}): Promise<ReadStore> {
  const d = db.dialect.name;
  if (d === 'postgres') await db.query('SET statement_timeout = 0');
  const at = (g: string) =>
    d === 'postgres'
      ? `(TIMESTAMP '${formatCanonical(READ_STORE_END)}' - ((${n - 1} - (${g})) * ${STEP_MS}::bigint) * INTERVAL '1 millisecond')`
      : `(strftime('%Y-%m-%d %H:%M:%f', (${Number(READ_STORE_END / 1000n)} - (${n - 1} - (${g})) * ${STEP_MS}) / 1000.0, 'unixepoch') || '+00:00')`;
  const from = (start: number, end: number, body: (g: string) => string) =>
    d === 'postgres'
      ? `${body('g')} FROM ${series(start, end - 1)}`
      : `WITH RECURSIVE s(g) AS (SELECT ${start} UNION ALL SELECT g + 1 FROM s WHERE g < ${end - 1}) ${body('g')} FROM s`;
  const statements = kandevSchema(d).filter(
    (s) => !/^CREATE TABLE IF NOT EXISTS task_session_subagents|ON task_session_subagents/.test(s),
  );
  const deferred = statements.filter((s) => /^CREATE INDEX.* ON task_session_messages/s.test(s));
  for (const s of [...statements, ...KANDEV_COST_EVENTS]) if (!deferred.includes(s)) await db.query(s);

  const sessions = Math.ceil(n / PER_SESSION);
  const turns = Math.ceil(n / PER_TURN);
  // sessions spread evenly over the tasks (default one task per 4/3 sessions: 50,000 at 1M messages)
  const tasks = Math.max(1, Math.min(sessions, options.tasks ?? Math.floor(((sessions - 1) * 3) / 4) + 1));
  const task = (s: string) => `('task-' || (CAST(${s} AS BIGINT) * ${tasks} / ${sessions}))`;
  const hostTime = `'2026-01-01 00:00:00'`;
  await db.query(
    `INSERT INTO tasks (id, title, created_at, updated_at) ${from(0, tasks, (g) => `SELECT 'task-' || ${g}, 'bench task ' || ${g}, ${hostTime}, ${hostTime}`)}`,
  );
  await db.query(
    `INSERT INTO task_sessions (id, task_id, started_at, updated_at) ${from(0, sessions, (g) => `SELECT 'ses-' || ${g}, ${task(g)}, ${at(`(${g}) * ${PER_SESSION}`)}, ${hostTime}`)}`,
  );
  const turnSession = (g: string) => `((${g}) / ${PER_SESSION / PER_TURN})`;
  await db.query(
    `INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, updated_at) ${from(0, turns, (g) => `SELECT 'turn-' || ${g}, 'ses-' || ${turnSession(g)}, ${task(turnSession(g))}, ${at(`(${g}) * ${PER_TURN}`)}, ${hostTime}, ${hostTime}`)}`,
  );
  const session = (g: string) => `((${g}) / ${PER_SESSION})`;
  const parent = (g: string) => `CASE WHEN (${g}) % ${PER_SESSION} = 3 THEN 'toolu_' || ((${g}) - 2) ELSE '' END`;
  const subagentDoc = (g: string) =>
    `'{"tool_call_id":"toolu_' || ${g} || '","parent_tool_call_id":"' || ${parent(g)} || '","status":"completed","normalized":{"kind":"subagent_task","subagent_task":{"subagent_type":"Explore","status":"completed","is_async":false,"total_tokens":1234,"prompt":"never stored"}}}'`;
  const ordinaryDoc = (g: string) =>
    `'{"tool_call_id":"tool_' || ${g} || '","status":"completed","normalized":{"kind":"shell_exec"}}'`;
  await db.query(
    `INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, content, type, metadata, created_at, updated_at) ${from(
      0,
      n,
      (g) =>
        `SELECT 'msg-' || ${g}, 'ses-' || ${session(g)}, ${task(session(g))}, 'turn-' || ((${g}) / ${PER_TURN}), 'agent', 'bench',
        CASE WHEN ${SUBAGENT(g)} THEN 'tool_call' ELSE 'message' END,
        CASE WHEN ${SUBAGENT(g)} THEN ${subagentDoc(g)} WHEN ${g} % 2 = 0 THEN '{}' ELSE ${ordinaryDoc(g)} END,
        ${at(g)}, ${at(g)}`,
    )}`,
  );
  for (const s of deferred) await db.query(s);
  await ensureSubagentTable(db);
  const half = Math.floor(n / 2);
  const models = `CASE g % 4 WHEN 0 THEN 'claude-opus-5[1m]' WHEN 1 THEN 'claude-sonnet-4-5' WHEN 2 THEN 'gpt-5-codex' END`;
  const types = `CASE g % 5 WHEN 0 THEN 'Explore' WHEN 1 THEN 'general-purpose' WHEN 2 THEN 'code-reviewer' WHEN 3 THEN 'security-reviewer' ELSE 'test-runner' END`;
  const sql = `INSERT INTO task_session_subagents (id, task_session_id, task_id, turn_id, tool_call_id, parent_tool_call_id,
    agent_execution_id, subagent_type, model, agent_status, tool_status, is_async, total_tokens, tool_use_count, duration_ms,
    source, observed_at, updated_at, settled_at)
  SELECT 'row-' || g, 'ses-' || ${session('g')}, ${task(session('g'))}, 'turn-' || (g / ${PER_TURN}), 'toolu_' || g, ${parent('g')},
    CASE WHEN g < ${half} THEN 'unknown' ELSE 'exec-' || g END, ${types}, ${models}, 'completed',
    CASE WHEN g % 13 = 0 THEN 'error' ELSE 'completed' END, CASE WHEN g % 3 = 0 THEN 1 ELSE 0 END,
    CASE WHEN g % 11 = 0 THEN NULL ELSE ((g % 100003) * 7919) % 275717 END, (g * 31) % 61, CASE WHEN g % 17 = 0 THEN NULL ELSE 2000 + ((g % 9973) * 104729) % 598000 END,
    CASE WHEN g < ${half} THEN 'backfill' ELSE 'live' END, ${at('g')}, ${at('g')}, CASE WHEN g % 3 = 0 THEN NULL ELSE ${at('g')} END`;
  await db.query(
    d === 'postgres'
      ? `${sql} FROM ${series(0, n - 1)} WHERE ${SUBAGENT('g')}`
      : `WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < ${n - 1}) ${sql} FROM s WHERE ${SUBAGENT('g')}`,
  );
  // The ledger as the host writes it (local/generate-host-store.ts costLedger, R5-5): per turn one
  // usage event, two on one turn in five (usage reported again after the turn ended), none on one in
  // twenty; a tenth unpriced (cost 0, no rates), the rest reported by the agent or list-priced (the
  // rates and catalog version recorded); every event with its tokens, cached split and usage event id
  const source = (g: string) =>
    `CASE WHEN (${g}) % 10 = 0 THEN 'unpriced' WHEN (${g}) % 10 < 6 THEN 'provider_reported' ELSE 'models_dev_list' END`;
  const listed = (g: string, then: string) => `CASE WHEN (${g}) % 10 >= 6 THEN ${then} END`;
  const event = (g: string, k: number) =>
    `SELECT 'cost-${k}-' || ${g}, 'ses-' || ${turnSession(g)}, ${task(turnSession(g))}, 'turn-' || ${g},
        CASE (${g}) % 3 WHEN 0 THEN 'gpt-5-codex' ELSE 'claude-sonnet-4-5' END, CASE (${g}) % 3 WHEN 0 THEN 'openai' ELSE 'anthropic' END,
        8000 + ((${g}) * 7919) % 120000, ((${g}) * 131) % 8000, ((${g}) * 131) % 8000, ((${g}) * 37) % 20000,
        CASE WHEN (${g}) % 9 = 0 AND (${g}) % 10 < 6 THEN NULL ELSE 500 + ((${g}) * 53) % 7500 END,
        CASE WHEN (${g}) % 10 = 0 THEN 0 ELSE 100 + ((${g}) + ${k}) % 10007 * 37 % 5000 END,
        CASE WHEN ${g} % 7 = 0 THEN 1 ELSE 0 END, 'usage-${k}-' || ${g}, ${source(g)},
        ${listed(g, '30000')}, ${listed(g, '3000')}, ${listed(g, '37500')}, ${listed(g, '150000')}, ${listed(g, "'models.dev@2026-08-01'")},
        3, ${at(`(${g}) * ${PER_TURN} + ${PER_TURN - 1 + k * 2}`)}, ${at(`(${g}) * ${PER_TURN} + ${PER_TURN - 1 + k * 2}`)}`;
  const eventColumns = `id, session_id, task_id, turn_id, model, provider, tokens_in, tokens_cached_in, tokens_cached_read,
    tokens_cached_write, tokens_out, cost_subcents, estimated, usage_event_id, cost_source, rate_input_per_million,
    rate_cached_read_per_million, rate_cached_write_per_million, rate_output_per_million, pricing_catalog_version,
    cost_contract_version, occurred_at, created_at`;
  await db.query(
    `INSERT INTO office_cost_events (${eventColumns}) ${from(0, turns, (g) => event(g, 0))} WHERE g % 20 <> 19`,
  );
  await db.query(
    `INSERT INTO office_cost_events (${eventColumns}) ${from(0, turns, (g) => event(g, 1))} WHERE g % 5 = 2`,
  );
  // legacy events, written before the host's cost contract: no source, no turn, no cached split, the old rates
  await db.query(
    `INSERT INTO office_cost_events (id, session_id, task_id, model, provider, tokens_in, tokens_out, cost_subcents, estimated,
      usage_event_id, rate_input_per_million, rate_output_per_million, occurred_at, created_at) ${from(
        0,
        Math.ceil(turns / 10),
        (g) =>
          `SELECT 'legacy-' || ${g}, 'ses-' || ${turnSession(`(${g}) * 10`)}, '', 'claude-sonnet-4-5', 'anthropic', 40000, 2000, 250, 0,
        'legacy-usage-' || ${g}, 30000, 150000, ${at(`(${g}) * 10 * ${PER_TURN}`)}, ${at(`(${g}) * 10 * ${PER_TURN}`)}`,
      )}`,
  );
  // R6-2: run usage in our usage table for two subagents in five, as the ingest writes it: tokens
  // (no reasoning count on one in three), requests; one in ten unpriced (no cost), the rest priced
  // by the agent or the list; one in seven not final (complete 0) and one in eleven not reported
  const h = `((g) * 3 + (g) / ${PER_SESSION})`;
  const usageSql = `INSERT INTO ${USAGE_TABLE} (task_session_id, agent_execution_id, tool_call_id, tokens_in, tokens_out,
    tokens_cached_read, tokens_cached_write, tokens_reasoning, requests, cost_subcents, cost_source, model, complete, observed_at)
  SELECT 'ses-' || ${session('g')}, CASE WHEN g < ${half} THEN 'unknown' ELSE 'exec-' || g END, 'toolu_' || g,
    20000 + (g * 131) % 90000, 1000 + (g * 17) % 8000, (g * 53) % 40000, (g * 29) % 10000,
    CASE WHEN g % 3 = 0 THEN NULL ELSE (g * 7) % 3000 END, 1 + g % 40,
    CASE WHEN ${h} % 10 = 0 THEN NULL ELSE 50 + (g * 61) % 4000 END,
    CASE WHEN ${h} % 10 = 0 THEN 'unpriced' WHEN ${h} % 10 < 6 THEN 'provider_reported' ELSE 'models_dev_list' END,
    ${models}, CASE WHEN ${h} % 7 = 3 THEN 0 WHEN ${h} % 11 = 5 THEN NULL ELSE 1 END, ${at('g')}`;
  const usageShare = `(((g) / ${PER_SESSION}) * 2 + (g)) % 5 < 2`;
  await db.query(
    d === 'postgres'
      ? `${usageSql} FROM ${series(0, n - 1)} WHERE ${SUBAGENT('g')} AND ${usageShare}`
      : `WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < ${n - 1}) ${usageSql} FROM s WHERE ${SUBAGENT('g')} AND ${usageShare}`,
  );
  const captureSince = READ_STORE_END - BigInt(n - 1 - half) * BigInt(STEP_MS) * 1000n;
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2), ($3, $4)', [
    CAPTURE_SINCE_KEY,
    formatKey(captureSince),
    BACKFILL_THROUGH_KEY,
    formatKey(captureSince - 1n),
  ]);
  await db.query('ANALYZE');
  const [count] = await db.query<{ n: unknown; usage: unknown; events: unknown }>(
    `SELECT (SELECT COUNT(*) FROM task_session_subagents) AS n, (SELECT COUNT(*) FROM ${USAGE_TABLE}) AS usage,
      (SELECT COUNT(*) FROM office_cost_events) AS events`,
  );
  return {
    messages: n,
    rows: Number(count!.n),
    usageRows: Number(count!.usage),
    costEvents: Number(count!.events),
    tasks,
    sessions,
    captureSince,
    end: READ_STORE_END,
  };
}
