import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openDatabase } from '../lib/db/open.js';
import { parseFrame } from '../lib/frame/parse.js';
import { normalizeFrame } from '../lib/normalize.js';
import type { SubagentWrite } from '../lib/row.js';
import { ensureSubagentTable } from '../lib/store/schema.js';
import { writeBatch } from '../lib/store/write.js';
import {
  type AgentRequest,
  writeClaudeTranscript,
  writeCodexRollout,
  writeOpenCodeSession,
} from '../local/agent-records.js';
import { HOST_FIXTURES } from '../local/host-fixtures.js';
import { machineFacts } from './machine.js';
import { markers, replaceSection } from './sections.js';

/**
 * `npm run bench -- spend` (R6-4, issue 56): `spend` over BENCH_SPEND_RECORDS (default 10,000)
 * agent records (70% Claude transcripts, 15% OpenCode sessions, 15% Codex rollouts) on a SQLite
 * store with one row per record, against the same files read by `wc -l` (the baseline: reading
 * every byte once, in C), in the same run. Each spend run is a fresh process (bench/spend-child.ts)
 * so its peak RSS is its own. Its own section of BENCHMARKS.md. BENCH_SPEND_RUNS (default 3), BENCH_OUT.
 */
const exec = promisify(execFile);
const records = Number(process.env.BENCH_SPEND_RECORDS ?? 10_000);
const runs = Number(process.env.BENCH_SPEND_RUNS ?? 3);
const out = process.env.BENCH_OUT || 'BENCHMARKS.md';
const log = (m: string) => process.stderr.write(`[bench spend ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const machine = machineFacts();
const loadBefore = loadavg()
  .map((n) => n.toFixed(2))
  .join(' ');
const dir = mkdtempSync(join(tmpdir(), 'subagent-bench-spend-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

try {
  log(`writing ${records.toLocaleString('en-US')} agent records and their rows`);
  const requests = (i: number): AgentRequest[] =>
    Array.from({ length: 4 + (i % 13) }, (_, r) => ({
      model: 'claude-sonnet-4-5',
      input: 100 + r,
      output: 400 + (i % 97),
      cacheRead: 20_000 + r * 1_000,
      cacheWrite: 2_000,
      reasoning: i % 3 === 0 ? 50 : 0,
      costSubcents: 40 + r,
    }));
  const url = `sqlite:${join(dir, 'store.db')}`;
  const db = openDatabase(url, { create: true });
  await HOST_FIXTURES.minimal.create(db);
  await ensureSubagentTable(db);
  await HOST_FIXTURES.minimal.addSession(db, 's1', 't1');
  const writes: SubagentWrite[] = [];
  for (let i = 0; i < records; i++) {
    const run = { requests: requests(i), complete: i % 10 !== 0, unreadableLines: i % 50 === 0 ? 1 : 0 };
    const kind = i % 20 < 14 ? 'claude' : i % 20 < 17 ? 'opencode' : 'codex';
    const key = `k${i.toString(36).padStart(5, '0')}`;
    if (kind === 'claude')
      writeClaudeTranscript(join(dir, 'agents', 'claude'), { project: 'p', session: `s${i % 100}`, agentId: key }, run);
    else if (kind === 'opencode') writeOpenCodeSession(join(dir, 'agents', 'opencode'), key, run);
    else writeCodexRollout(join(dir, 'agents', 'codex'), key, run);
    const parsed = parseFrame(
      JSON.stringify({
        version: 1,
        task_session_id: 's1',
        task_id: 't1',
        tool_call_id: `c${i}`,
        execution_id: 'e1',
        observed_at: '2026-11-02T09:00:00Z',
        subagent_task: kind === 'claude' ? { agent_id: key } : { child_session_id: key },
      }),
    );
    const normalized = parsed.ok ? normalizeFrame(parsed.frame) : undefined;
    if (normalized?.kind === 'write') writes.push(normalized.row);
  }
  for (let i = 0; i < writes.length; i += 1000) await writeBatch(db, writes.slice(i, i + 1000));
  await db.close();
  const { stdout: du } = await exec('du', ['-sb', join(dir, 'agents')]);
  const bytes = Number(du.split(/\s/)[0]);

  const wc: number[] = [];
  const spend: { ms: number; maxRssKiB: number; written: number }[] = [];
  for (let r = 0; r < runs; r++) {
    let t = performance.now();
    await exec('sh', ['-c', `find '${join(dir, 'agents')}' -type f -print0 | xargs -0 cat | wc -l`]);
    wc.push(performance.now() - t);
    t = performance.now();
    const { stdout } = await exec(
      process.execPath,
      ['--import', 'tsx', 'bench/spend-child.ts', url, join(dir, 'agents'), 'dry'],
      {
        maxBuffer: 1 << 20,
      },
    );
    spend.push(JSON.parse(stdout.trim()));
    log(
      `run ${r + 1}: wc -l ${wc[r]!.toFixed(0)} ms; spend --dry-run ${spend[r]!.ms.toFixed(0)} ms, peak ${(spend[r]!.maxRssKiB / 1024).toFixed(0)} MiB, ${spend[r]!.written} would be written`,
    );
  }
  // and one writing run, last (it fills the usage table)
  const { stdout } = await exec(process.execPath, [
    '--import',
    'tsx',
    'bench/spend-child.ts',
    url,
    join(dir, 'agents'),
  ]);
  const writing = JSON.parse(stdout.trim()) as { ms: number; maxRssKiB: number; written: number };
  const loadAfter = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const wcMs = median(wc);
  const spendMs = median(spend.map((s) => s.ms));
  const { start, end } = markers('spend');
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  replaceSection(
    out,
    'spend',
    [
      start,
      '## spend over agent records (R6-4, issue 56)',
      '',
      `Generated by \`npm run bench -- spend\` (bench/spend-main.ts) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC at commit \`${machine.commit}\`; ${machine.nproc} × ${machine.cpuModel}, Node ${machine.node}; load average before ${loadBefore}, after ${loadAfter}.`,
      '',
      `- **Records**: ${int(records)} (70% Claude transcripts, 15% OpenCode sessions, 15% Codex rollouts; 4–16 requests each, every 50th with an unreadable line), ${int(bytes / 1024)} KiB in all, one row each in a SQLite store.`,
      `- **Baseline**: the same files read once by \`find … | xargs cat | wc -l\` (every byte, in C), in the same run, alternating with spend. **spend --dry-run**: a fresh process (tsx; its loader included) that finds the rows, indexes the folders, reads and prices every record; the time is its own run (not the process start). Median of ${runs}.`,
      '',
      '| case | ms (median) | runs ms | ÷ wc -l | peak RSS MiB |',
      '| --- | ---: | --- | ---: | ---: |',
      `| wc -l | ${int(wcMs)} | ${wc.map(int).join(', ')} | 1.0× | – |`,
      `| spend --dry-run | **${int(spendMs)}** | ${spend.map((s) => int(s.ms)).join(', ')} | **${(spendMs / wcMs).toFixed(1)}×** | ${int(Math.max(...spend.map((s) => s.maxRssKiB)) / 1024)} |`,
      `| spend (writing ${int(writing.written)} usage rows) | ${int(writing.ms)} | ${int(writing.ms)} | ${(writing.ms / wcMs).toFixed(1)}× | ${int(writing.maxRssKiB / 1024)} |`,
      '',
      `Per record: spend ${((spendMs / records) * 1000).toFixed(0)} µs, wc -l ${((wcMs / records) * 1000).toFixed(0)} µs. Memory stays bounded: records are streamed line by line (bench of the readers: a 100 MB transcript in a 48 MB heap, docs/spend.md).`,
      end,
    ].join('\n'),
  );
  log(`wrote the spend section of ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
