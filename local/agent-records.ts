import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunUsage } from '../lib/producer/usage/run-usage.js';

/*
 * One subagent's whole run written as its agent records it (docs/spend.md, R6-8): Claude
 * Code's subagent transcript, OpenCode's child session in its storage folder, Codex's rollout. For
 * the demo (`npm start`) and the tests of `spend`; the generator's own sums (`expectedUsage`) are
 * what the report must show. Our own records in the agents' formats, not copies of theirs.
 */

export type AgentKind = 'claude' | 'opencode' | 'codex';

/** One API request of a run (what the model was sent and answered). */
export interface AgentRequest {
  model: string;
  /** fresh input, not read from or written to the cache */
  input: number;
  /** visible output (without reasoning) */
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** reasoning output (OpenCode, Codex; Claude counts thinking within output) */
  reasoning: number;
  /** what the agent charged for it, in subcents (OpenCode records a cost; the others none) */
  costSubcents: number;
}

export interface AgentRun {
  requests: AgentRequest[];
  /** the run is over (its last request ended the turn) */
  complete: boolean;
  /** lines (documents) no reader can parse, written among the good ones */
  unreadableLines: number;
}

const BROKEN = '{"type":"assistant","message":{"id":"msg_broken","usage":{"input_tok';
const BASE_TIME = Date.UTC(2026, 10, 2, 9, 0, 0);

/** Claude Code: `<home>/projects/<project>/<session>/subagents/agent-<agentId>.jsonl`. */
export function writeClaudeTranscript(
  home: string,
  where: { project: string; session: string; agentId: string },
  run: AgentRun,
): string {
  const folder = join(home, 'projects', where.project, where.session, 'subagents');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, `agent-${where.agentId}.jsonl`);
  const common = { isSidechain: true, agentId: where.agentId, sessionId: where.session, version: '2.1.201' };
  const lines: string[] = [
    JSON.stringify({ ...common, type: 'user', message: { role: 'user', content: 'Review the change' } }),
  ];
  run.requests.forEach((r, i) => {
    const last = i === run.requests.length - 1;
    const usage = {
      input_tokens: r.input,
      cache_creation_input_tokens: r.cacheWrite,
      cache_read_input_tokens: r.cacheRead,
      output_tokens: r.output,
      service_tier: 'standard',
    };
    const message = (content: unknown[]) => ({
      id: `msg_${where.agentId}_${i}`,
      type: 'message',
      role: 'assistant',
      model: r.model,
      content,
      stop_reason: last && run.complete ? 'end_turn' : 'tool_use',
      usage,
    });
    // Claude Code writes a message once per content block, every line with the same id and usage.
    lines.push(
      JSON.stringify({ ...common, type: 'assistant', message: message([{ type: 'thinking', thinking: '…' }]) }),
    );
    lines.push(
      JSON.stringify({ ...common, type: 'assistant', message: message([{ type: 'text', text: 'Looking.' }]) }),
    );
    if (!(last && run.complete)) {
      const toolUse = { type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: 'a.ts' } };
      lines.push(JSON.stringify({ ...common, type: 'assistant', message: message([toolUse]) }));
      lines.push(
        JSON.stringify({
          ...common,
          type: 'user',
          message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'ok' }] },
        }),
      );
    }
  });
  spread(lines, run.unreadableLines, BROKEN);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** OpenCode: `<data>/storage/message/<sessionID>/<messageID>.json` and its step parts under `storage/part/<messageID>/`. */
export function writeOpenCodeSession(data: string, sessionId: string, run: AgentRun): void {
  const messages = join(data, 'storage', 'message', sessionId);
  mkdirSync(messages, { recursive: true });
  const user = `msg_${sessionId}_000_user`;
  writeJson(join(messages, `${user}.json`), {
    id: user,
    sessionID: sessionId,
    role: 'user',
    time: { created: BASE_TIME },
  });
  let broken = run.unreadableLines;
  run.requests.forEach((r, i) => {
    const id = `msg_${sessionId}_${String(i + 1).padStart(3, '0')}`;
    const last = i === run.requests.length - 1;
    const tokens = {
      input: r.input,
      output: r.output,
      reasoning: r.reasoning,
      cache: { read: r.cacheRead, write: r.cacheWrite },
    };
    const dollars = r.costSubcents / 10_000;
    const ended = !last || run.complete;
    writeJson(join(messages, `${id}.json`), {
      id,
      sessionID: sessionId,
      role: 'assistant',
      parentID: user,
      modelID: r.model,
      providerID: 'anthropic',
      mode: 'build',
      path: { cwd: '/work', root: '/work' },
      cost: dollars,
      tokens,
      time: ended
        ? { created: BASE_TIME + i * 1000, completed: BASE_TIME + i * 1000 + 900 }
        : { created: BASE_TIME + i * 1000 },
      ...(ended ? { finish: last ? 'stop' : 'tool-calls' } : {}),
    });
    const parts = join(data, 'storage', 'part', id);
    mkdirSync(parts, { recursive: true });
    writeJson(join(parts, `prt_${id}_0.json`), {
      id: `prt_${id}_0`,
      messageID: id,
      sessionID: sessionId,
      type: 'step-start',
    });
    writeJson(join(parts, `prt_${id}_1.json`), {
      id: `prt_${id}_1`,
      messageID: id,
      sessionID: sessionId,
      type: 'step-finish',
      reason: last ? 'stop' : 'tool-calls',
      cost: dollars,
      tokens,
    });
    if (broken > 0) {
      broken -= 1;
      writeFileSync(join(parts, `prt_${id}_9.json`), '{"id":"prt_x","messageID":');
    }
  });
}

/** Codex: `<home>/sessions/YYYY/MM/DD/rollout-<time>-<threadId>.jsonl`, cumulative token counts. */
export function writeCodexRollout(home: string, threadId: string, run: AgentRun): string {
  const folder = join(home, 'sessions', '2026', '11', '02');
  mkdirSync(folder, { recursive: true });
  const path = join(folder, `rollout-2026-11-02T09-00-00-${threadId}.jsonl`);
  const at = (i: number) => new Date(BASE_TIME + i * 1000).toISOString();
  const lines = [
    JSON.stringify({
      timestamp: at(0),
      type: 'session_meta',
      payload: { id: threadId, timestamp: at(0), cwd: '/work', originator: 'codex_cli_rs', cli_version: '0.98.0' },
    }),
  ];
  const total = {
    input_tokens: 0,
    cached_input_tokens: 0,
    output_tokens: 0,
    reasoning_output_tokens: 0,
    total_tokens: 0,
  };
  let model = '';
  run.requests.forEach((r, i) => {
    if (r.model !== model) {
      model = r.model;
      lines.push(JSON.stringify({ timestamp: at(i), type: 'turn_context', payload: { cwd: '/work', model } }));
    }
    // Codex's input counts include the cached input; its output counts include the reasoning.
    const last = {
      input_tokens: r.input + r.cacheRead,
      cached_input_tokens: r.cacheRead,
      output_tokens: r.output + r.reasoning,
      reasoning_output_tokens: r.reasoning,
      total_tokens: r.input + r.cacheRead + r.output + r.reasoning,
    };
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += last[k];
    lines.push(
      JSON.stringify({
        timestamp: at(i),
        type: 'event_msg',
        payload: { type: 'token_count', info: { total_token_usage: { ...total }, last_token_usage: last } },
      }),
    );
  });
  if (run.complete)
    lines.push(
      JSON.stringify({ timestamp: at(run.requests.length), type: 'event_msg', payload: { type: 'task_complete' } }),
    );
  spread(
    lines,
    run.unreadableLines,
    '{"timestamp":"2026-11-02T09:00:00Z","type":"event_msg","payload":{"type":"token_co',
  );
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Appends a line no reader can parse to an existing record (a truncated last line, as a crash leaves). */
export function truncateLast(path: string): void {
  appendFileSync(path, '{"type":"assistant","message":{"id":"msg_cut","usage":{"output_tok');
}

/** Broken lines among the good ones, after the first (which names the run). */
function spread(lines: string[], count: number, broken: string): void {
  for (let i = 0; i < count; i++) lines.splice(1 + ((i * 3) % lines.length), 0, broken);
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, JSON.stringify(value, null, 2));
}

const sum = (run: AgentRun, pick: (r: AgentRequest) => number) => run.requests.reduce((n, r) => n + pick(r), 0);

/**
 * What the agent's reader must find in the run (before pricing): the generator's own sums, by each
 * agent's rules (docs/spend.md): Claude counts thinking within output and records no cost or
 * reasoning; OpenCode's output excludes its reasoning and its cost is its own list price; Codex
 * records no cache writes and no cost.
 */
export function expectedUsage(kind: AgentKind, run: AgentRun): RunUsage {
  const models = [...new Set(run.requests.map((r) => r.model))].join(',');
  const base: RunUsage = {
    tokens_in: sum(run, (r) => r.input),
    tokens_cached_read: sum(run, (r) => r.cacheRead),
    requests: run.requests.length,
    model: models,
    complete: run.complete,
  };
  switch (kind) {
    case 'claude':
      return { ...base, tokens_out: sum(run, (r) => r.output), tokens_cached_write: sum(run, (r) => r.cacheWrite) };
    case 'opencode':
      return {
        ...base,
        tokens_out: sum(run, (r) => r.output + r.reasoning),
        tokens_reasoning: sum(run, (r) => r.reasoning),
        tokens_cached_write: sum(run, (r) => r.cacheWrite),
        cost_subcents: sum(run, (r) => r.costSubcents),
        cost_source: 'models_dev_list',
      };
    case 'codex':
      return {
        ...base,
        tokens_out: sum(run, (r) => r.output + r.reasoning),
        tokens_reasoning: sum(run, (r) => r.reasoning),
      };
  }
}
