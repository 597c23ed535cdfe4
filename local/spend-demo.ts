import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE } from '../lib/columns.js';
import type { Queryable } from '../lib/db/database.js';
import { priceUsage } from '../lib/producer/usage/price.js';
import { type RunUsage, USAGE_TOKEN_FIELDS, type UsageTokenField } from '../lib/producer/usage/run-usage.js';
import { RecordFinder } from '../lib/spend/records.js';
import { runSpend, type SpendReport } from '../lib/spend/run.js';
import {
  type AgentKind,
  type AgentRequest,
  type AgentRun,
  expectedUsage,
  writeClaudeTranscript,
  writeCodexRollout,
  writeOpenCodeSession,
} from './agent-records.js';
import { prng } from './generate-host-store.js';

/*
 * R6-8: the demo's agents keep their records too. For a share of the demo's subagents with a
 * record key, the run is written in the agent's own format (some with unreadable lines, some
 * missing), `spend` reads them, and the generator's own sums are what the report must show.
 */

/** A models.dev shaped table for the demo's models; `claude-haiku-demo` has no price (its runs stay unpriced). */
export const DEMO_PRICES = {
  anthropic: {
    models: {
      'claude-sonnet-4-5': { cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } },
      'claude-opus-4-1': { cost: { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 } },
    },
  },
  openai: { models: { 'gpt-5-codex': { cost: { input: 1.25, output: 10, cache_read: 0.125 } } } },
};

/** What the generator wrote, summed as the report's spend must show it (R6-5's fields). */
export interface ExpectedSpend {
  subagents_with_usage: number;
  complete: number;
  tokens: Record<UsageTokenField, number | null>;
  cost_subcents: number | null;
  unpriced: number;
  /** rows given no record at all */
  missing: number;
  unreadable_lines: number;
}

export interface SpendDemo {
  report: SpendReport;
  expected: ExpectedSpend;
}

interface KeyedRow {
  agent_id: string | null;
  child_session_id: string | null;
}

function runFor(kind: AgentKind, next: () => number): AgentRun {
  const between = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const models =
    kind === 'codex'
      ? ['gpt-5-codex']
      : next() < 0.1
        ? ['claude-haiku-demo']
        : next() < 0.15
          ? ['claude-sonnet-4-5', 'claude-opus-4-1']
          : ['claude-sonnet-4-5'];
  const requests: AgentRequest[] = Array.from({ length: between(1, 6) }, (_, i) => {
    const input = between(50, 4_000);
    const output = between(20, 3_000);
    const cacheRead = between(0, 60_000);
    const cacheWrite = kind === 'codex' ? 0 : between(0, 8_000);
    const reasoning = kind === 'claude' ? 0 : between(0, 900);
    // OpenCode prices each message itself (its model catalog): a cost of its own
    const costSubcents = kind === 'opencode' ? between(1, 2_000) : 0;
    return { model: models[i % models.length]!, input, output, cacheRead, cacheWrite, reasoning, costSubcents };
  });
  return { requests, complete: next() < 0.85, unreadableLines: next() < 0.1 ? between(1, 2) : 0 };
}

/**
 * Writes the records for the demo store's subagents in a temporary folder, runs `spend` on them
 * with DEMO_PRICES, and returns what it did beside the generator's own sums. The folder is removed.
 */
export async function runSpendDemo(db: Queryable, seed: number): Promise<SpendDemo> {
  const next = prng(seed * 7919 + 17);
  const folder = mkdtempSync(join(tmpdir(), 'subagent-context-agents-'));
  const dirs = { claude: join(folder, 'claude'), opencode: join(folder, 'opencode'), codex: join(folder, 'codex') };
  const rows = await db.query<KeyedRow>(
    `SELECT agent_id, child_session_id FROM ${TABLE} WHERE (agent_id IS NOT NULL AND agent_id <> '') OR (child_session_id IS NOT NULL AND child_session_id <> '') ORDER BY task_session_id, agent_execution_id, tool_call_id`,
  );
  const expected: ExpectedSpend = {
    subagents_with_usage: 0,
    complete: 0,
    tokens: Object.fromEntries(USAGE_TOKEN_FIELDS.map((f) => [f, null])) as ExpectedSpend['tokens'],
    cost_subcents: null,
    unpriced: 0,
    missing: 0,
    unreadable_lines: 0,
  };
  const written = new Map<string, RunUsage>();
  try {
    rows.forEach((row, i) => {
      const key = row.agent_id ?? row.child_session_id!;
      const kind: AgentKind = row.agent_id ? 'claude' : key.charCodeAt(key.length - 1) % 2 === 0 ? 'opencode' : 'codex';
      // one record per key: two rows naming the same run read the same record
      if (!written.has(`${kind}:${key}`)) {
        if (next() < 0.2) {
          written.set(`${kind}:${key}`, {});
        } else {
          const run = runFor(kind, next);
          if (kind === 'claude')
            writeClaudeTranscript(dirs.claude, { project: '-demo', session: `s${i}`, agentId: key }, run);
          else if (kind === 'opencode') writeOpenCodeSession(dirs.opencode, key, run);
          else writeCodexRollout(dirs.codex, key, run);
          written.set(`${kind}:${key}`, priceUsage(expectedUsage(kind, run), DEMO_PRICES));
          expected.unreadable_lines += run.unreadableLines;
        }
      }
      add(expected, written.get(`${kind}:${key}`)!);
    });
    const report = await runSpend(db, { finder: new RecordFinder(dirs), prices: DEMO_PRICES });
    return { report, expected };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function add(expected: ExpectedSpend, usage: RunUsage): void {
  if (Object.keys(usage).length === 0) {
    expected.missing += 1;
    return;
  }
  expected.subagents_with_usage += 1;
  if (usage.complete === true) expected.complete += 1;
  for (const field of USAGE_TOKEN_FIELDS) {
    const value = usage[field];
    if (value !== undefined && value !== null) expected.tokens[field] = (expected.tokens[field] ?? 0) + value;
  }
  if (usage.cost_subcents === undefined || usage.cost_subcents === null) expected.unpriced += 1;
  else expected.cost_subcents = (expected.cost_subcents ?? 0) + usage.cost_subcents;
}
