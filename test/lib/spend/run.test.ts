import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { priceUsage } from '../../../lib/producer/usage/price.js';
import { RecordFinder } from '../../../lib/spend/records.js';
import { runSpend } from '../../../lib/spend/run.js';
import { readAll } from '../../../lib/store/read.js';
import { readSessionUsage } from '../../../lib/store/usage-read.js';
import { writeBatch } from '../../../lib/store/write.js';
import {
  type AgentRequest,
  type AgentRun,
  expectedUsage,
  writeClaudeTranscript,
  writeCodexRollout,
  writeOpenCodeSession,
} from '../../../local/agent-records.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

const PRICES = {
  anthropic: {
    models: {
      'claude-sonnet-4-5': { cost: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } },
    },
  },
  openai: { models: { 'gpt-5-codex': { cost: { input: 1.25, output: 10, cache_read: 0.125 } } } },
};

const request = (model: string, n: number, extra: Partial<AgentRequest> = {}): AgentRequest => ({
  model,
  input: 100 * n,
  output: 40 * n,
  cacheRead: 1000 * n,
  cacheWrite: 200 * n,
  reasoning: 0,
  costSubcents: 0,
  ...extra,
});

const run = (requests: AgentRequest[], complete = true, unreadableLines = 0): AgentRun => ({
  requests,
  complete,
  unreadableLines,
});

/** A subagent row pointing at an agent's record (`agent_id`: Claude; `child_session_id`: OpenCode, Codex). */
const row = (call: string, task: Record<string, unknown>) =>
  write({ tool_call_id: call, observed_at: '2026-11-02T09:00:00.000000Z', subagent_task: task });

/** Figures of a usage row that R6-1 names, as the report reads them. */
const figures = (stored: Record<string, unknown>) =>
  Object.fromEntries(
    [
      'tokens_in',
      'tokens_out',
      'tokens_cached_read',
      'tokens_cached_write',
      'tokens_reasoning',
      'requests',
      'cost_subcents',
      'cost_source',
      'model',
    ]
      .map((k) => [k, stored[k]])
      .filter(([, v]) => v !== null),
  );

describe.each(TARGETS)('R6-4: spend on %s', (name) => {
  const t = useTestDatabase(name);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spend-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const folders = () => ({ claude: join(dir, 'claude'), opencode: join(dir, 'opencode'), codex: join(dir, 'codex') });

  it('R6-4: reads each agent’s record the row points at, prices it where the agent gave no cost, and stores its run usage', async () => {
    await seedSession(t.db);
    const claudeRun = run([request('claude-sonnet-4-5', 1), request('claude-sonnet-4-5', 2)]);
    const openCodeRun = run([request('claude-sonnet-4-5', 1, { reasoning: 7, costSubcents: 1234 })]);
    const codexRun = run([request('gpt-5-codex', 3, { cacheWrite: 0, reasoning: 11 })]);
    writeClaudeTranscript(folders().claude, { project: '-work', session: 'sess-1', agentId: 'a1' }, claudeRun);
    writeOpenCodeSession(folders().opencode, 'ses_child1', openCodeRun);
    writeCodexRollout(folders().codex, '0199a213-81c0-7800-8aa1-bbab2a035a53', codexRun);
    await writeBatch(t.db, [
      row('c1', { agent_id: 'a1' }),
      row('c2', { child_session_id: 'ses_child1' }),
      row('c3', { child_session_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' }),
    ]);
    const report = await runSpend(t.db, { finder: new RecordFinder(folders()), prices: PRICES });
    expect(report).toMatchObject({ rows: 3, written: 3, priced: 3, unpriced: 0, complete: true });
    const stored = await readSessionUsage(t.db, 's1');
    const expected = [
      priceUsage(expectedUsage('claude', claudeRun), PRICES),
      expectedUsage('opencode', openCodeRun),
      priceUsage(expectedUsage('codex', codexRun), PRICES),
    ];
    expect(stored.map(figures)).toEqual(expected.map((u) => figures(u as Record<string, unknown>)));
    expect(stored.map((s) => s.complete)).toEqual([1, 1, 1]);
  });

  it('R6-4: leaves the host’s row as it was: the usage travels alone', async () => {
    await seedSession(t.db);
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'a1' }, run([request('m', 1)]));
    await writeBatch(t.db, [
      row('c1', { agent_id: 'a1', description: 'Review auth', total_tokens: 91234, status: 'completed' }),
    ]);
    const before = await readAll(t.db);
    await runSpend(t.db, { finder: new RecordFinder(folders()) });
    expect(await readAll(t.db)).toEqual(before);
    expect(await readSessionUsage(t.db, 's1')).toHaveLength(1);
  });

  it('R6-4: rows it cannot serve are counted by reason and get no usage, never a 0', async () => {
    await seedSession(t.db);
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'broken' }, run([], true, 3));
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'empty' }, run([]));
    await writeBatch(t.db, [
      row('c1', { agent_id: 'missing' }),
      row('c2', { agent_id: 'broken' }),
      row('c3', { agent_id: 'empty' }),
      row('c4', { child_session_id: 'ses_nowhere' }), // no OpenCode or Codex folder here
      row('c5', {}), // no key: not a candidate
    ]);
    const report = await runSpend(t.db, { finder: new RecordFinder(folders()) });
    expect(report).toMatchObject({
      rows: 4,
      written: 0,
      unserved: {
        no_record: 1,
        record_unreadable: 1,
        record_without_usage: 1,
        agent_not_supported: 1,
        row_unreadable: 0,
      },
      unreadable_lines: 3,
    });
    expect(await readSessionUsage(t.db, 's1')).toEqual([]);
  });

  it('R6-4: without a price for its model a run is stored unpriced: tokens, no cost', async () => {
    await seedSession(t.db);
    writeClaudeTranscript(
      folders().claude,
      { project: 'p', session: 's', agentId: 'a1' },
      run([request('claude-x', 1)]),
    );
    await writeBatch(t.db, [row('c1', { agent_id: 'a1' })]);
    const report = await runSpend(t.db, { finder: new RecordFinder(folders()), prices: PRICES });
    expect(report).toMatchObject({ written: 1, priced: 0, unpriced: 1 });
    expect(await readSessionUsage(t.db, 's1')).toMatchObject([
      { tokens_in: 100, cost_subcents: null, cost_source: 'unpriced' },
    ]);
  });

  it('R6-4: counts the unreadable lines of the records it read, and stores what the rest held', async () => {
    await seedSession(t.db);
    const partial = run([request('claude-sonnet-4-5', 1)], true, 2);
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'a1' }, partial);
    await writeBatch(t.db, [row('c1', { agent_id: 'a1' })]);
    const report = await runSpend(t.db, { finder: new RecordFinder(folders()), prices: PRICES });
    expect(report).toMatchObject({ written: 1, unreadable_lines: 2 });
    expect((await readSessionUsage(t.db, 's1'))[0]).toMatchObject({ tokens_in: 100 });
  });

  it('R6-4: --dry-run reads and prices, lists what it would write, and writes nothing', async () => {
    await seedSession(t.db);
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'a1' }, run([request('m', 1)]));
    await writeBatch(t.db, [row('c1', { agent_id: 'a1' })]);
    const report = await runSpend(t.db, { finder: new RecordFinder(folders()), dryRun: true });
    expect(report.would_write).toMatchObject([{ tool_call_id: 'c1', kind: 'claude', usage: { tokens_in: 100 } }]);
    expect(await readSessionUsage(t.db, 's1')).toEqual([]);
  });

  it('R6-4: a rerun reads only rows without final usage; a run still going is read again', async () => {
    await seedSession(t.db);
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'done' }, run([request('m', 1)]));
    writeClaudeTranscript(
      folders().claude,
      { project: 'p', session: 's', agentId: 'going' },
      run([request('m', 1)], false),
    );
    await writeBatch(t.db, [row('c1', { agent_id: 'done' }), row('c2', { agent_id: 'going' })]);
    expect(await runSpend(t.db, { finder: new RecordFinder(folders()) })).toMatchObject({ rows: 2, written: 2 });
    writeClaudeTranscript(
      folders().claude,
      { project: 'p', session: 's', agentId: 'going' },
      run([request('m', 1), request('m', 5)]),
    );
    expect(await runSpend(t.db, { finder: new RecordFinder(folders()) })).toMatchObject({ rows: 1, written: 1 });
    expect((await readSessionUsage(t.db, 's1')).map((u) => [u.tool_call_id, u.tokens_in, u.complete])).toEqual([
      ['c1', 100, 1],
      ['c2', 600, 1],
    ]);
    expect(await runSpend(t.db, { finder: new RecordFinder(folders()) })).toMatchObject({ rows: 0, written: 0 });
  });

  it('R6-4: stopped between pages, it leaves whole pages; the rerun serves the rest', async () => {
    await seedSession(t.db);
    const rows = Array.from({ length: 5 }, (_, i) => {
      writeClaudeTranscript(
        folders().claude,
        { project: 'p', session: 's', agentId: `a${i}` },
        run([request('m', i + 1)]),
      );
      return row(`c${i}`, { agent_id: `a${i}` });
    });
    await writeBatch(t.db, rows);
    let pages = 0;
    const first = await runSpend(t.db, {
      finder: new RecordFinder(folders()),
      pageSize: 2,
      keepGoing: () => pages++ < 1,
    });
    expect(first).toMatchObject({ complete: false, written: 2 });
    expect(await readSessionUsage(t.db, 's1')).toHaveLength(2);
    const rest = await runSpend(t.db, { finder: new RecordFinder(folders()), pageSize: 2 });
    expect(rest).toMatchObject({ complete: true, rows: 3, written: 3 });
  });

  it('R6-4: a key naming a path outside the folders finds nothing (keys are looked up, never joined into a path)', async () => {
    await seedSession(t.db);
    writeClaudeTranscript(folders().claude, { project: 'p', session: 's', agentId: 'a1' }, run([request('m', 1)]));
    await writeBatch(t.db, [
      row('c1', { agent_id: '../../../etc/passwd' }),
      row('c2', { child_session_id: '../claude/projects/p/s/subagents' }),
    ]);
    const report = await runSpend(t.db, { finder: new RecordFinder(folders()) });
    expect(report).toMatchObject({ written: 0, unserved: { no_record: 1, agent_not_supported: 1 } });
  });
});
