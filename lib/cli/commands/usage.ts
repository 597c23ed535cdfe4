import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { readClaudeStream } from '../../producer/usage/claude-stream.js';
import { readClaudeTranscript } from '../../producer/usage/claude-transcript.js';
import { readCodexRollout } from '../../producer/usage/codex-rollout.js';
import { fileLines } from '../../producer/usage/file-lines.js';
import { readOpenCodeSession } from '../../producer/usage/opencode-session.js';
import type { RecordSource, UsageReading } from '../../producer/usage/records.js';
import type { RunUsage } from '../../producer/usage/run-usage.js';
import { dollars } from '../../report/render/units.js';
import { renderFacts, renderTable } from '../../text-table.js';
import { EXIT } from '../exit-codes.js';
import { fileProblem } from '../file-problem.js';
import type { CommandResult } from '../io.js';
import { UsageError } from '../usage-error.js';
import { detectFormat, USAGE_FORMATS, type UsageFormat } from '../usage-format.js';

/*
 * `subagent-context usage FILE [--format …] [--json]` (R6-3, docs/spend.md): what an agent's
 * record of a subagent's run holds, read by the producer package's readers. Reads the file only.
 */

/** One subagent the file holds. */
export interface UsageSubagent {
  /** the Agent call id in a stream; else the agent, session or thread id the file names; or null */
  key: string | null;
  usage: RunUsage;
  unreadable_lines: number;
}

/** The `--json` document. */
export interface UsageDocument {
  file: string;
  format: UsageFormat;
  subagents: UsageSubagent[];
  /** every record of the file that could not be read (a stream's unattributed ones included) */
  unreadable_lines: number;
}

/** `--format`: one of the agents' formats, or undefined to detect it. */
export function usageFormatFlag(raw: string | undefined): UsageFormat | undefined {
  if (raw === undefined) return undefined;
  if (!(USAGE_FORMATS as readonly string[]).includes(raw))
    throw new UsageError(`--format needs one of ${USAGE_FORMATS.join(', ')} (got "${raw}")`);
  return raw as UsageFormat;
}

/** `agent-<agentId>.jsonl` (Claude Code) and `rollout-<time>-<thread id>.jsonl` (Codex): the id the file's name holds. */
function keyFromName(file: string, format: UsageFormat): string | null {
  const name = basename(file);
  if (format === 'claude-transcript') return /^agent-(.+)\.jsonl$/.exec(name)?.[1] ?? null;
  if (format === 'codex')
    return /-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(name)?.[1] ?? null;
  return null;
}

/** The first non-blank line begins a JSON array: an OpenCode API answer, read whole. */
async function isJsonArray(file: string): Promise<boolean> {
  for await (const line of fileLines(file)) if (line.trim() !== '') return line.trimStart().startsWith('[');
  return false;
}

/** The file's records: its lines, or the elements of the one JSON array it holds. */
async function recordsOfFile(file: string): Promise<RecordSource> {
  if (!(await isJsonArray(file))) return fileLines(file);
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown[]; // text that begins with [ and parses is an array
  } catch {
    return ['[not JSON]']; // a broken array reads as one unreadable record
  }
}

export async function usageCommand(
  file: string,
  asked: UsageFormat | undefined,
  options: { width?: number } = {},
): Promise<CommandResult<UsageDocument>> {
  const found = await stat(file).catch(fileProblem('the file', file));
  if (found.isDirectory()) fileProblem('the file', file)(Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));
  const format = asked ?? (await detectFormat(await recordsOfFile(file)));
  if (format === undefined)
    throw new UsageError(
      `cannot tell which agent wrote ${file} (no record of a Claude Code transcript or stream, an OpenCode session or a Codex rollout in its first lines): pass --format ${USAGE_FORMATS.join('|')}`,
    );
  const records = await recordsOfFile(file);
  let subagents: UsageSubagent[];
  let unreadable: number;
  if (format === 'claude-stream') {
    const reading = await readClaudeStream(records);
    subagents = reading.subagents.map(({ key, usage, unreadable_lines }) => ({ key, usage, unreadable_lines }));
    unreadable = reading.unreadable_lines;
  } else {
    const read: Record<Exclude<UsageFormat, 'claude-stream'>, (r: RecordSource) => Promise<UsageReading>> = {
      'claude-transcript': readClaudeTranscript,
      opencode: readOpenCodeSession,
      codex: readCodexRollout,
    };
    const reading = await read[format](records);
    const key =
      format === 'claude-transcript'
        ? (keyFromName(file, format) ?? reading.key)
        : (reading.key ?? keyFromName(file, format));
    subagents = [{ key, usage: reading.usage, unreadable_lines: reading.unreadable_lines }];
    unreadable = reading.unreadable_lines;
  }
  const document: UsageDocument = { file, format, subagents, unreadable_lines: unreadable };
  return { exitCode: EXIT.ok, result: document, text: renderUsage(document, options.width), data: true };
}

const costText = (usage: RunUsage) =>
  usage.cost_subcents == null ? (usage.cost_source === 'unpriced' ? 'unpriced' : null) : dollars(usage.cost_subcents);

const completeText = (complete: boolean | null | undefined) =>
  complete == null ? null : complete ? 'yes' : 'no (the run was still going, or its end is not in the file)';

/** The human reading: what was read, then one row per subagent; `-` is a figure the file did not report. */
export function renderUsage(doc: UsageDocument, width?: number): string {
  const facts = renderFacts([
    ['file', doc.file],
    ['format', doc.format],
    ['subagents', doc.subagents.length],
    [
      'unreadable lines',
      doc.unreadable_lines === 0
        ? 0
        : `${doc.unreadable_lines.toLocaleString('en-US')} (left out: the figures below count only what could be read)`,
    ],
  ]);
  if (doc.subagents.length === 0) return `${facts}\n\nno subagent in this file`;
  const table = renderTable(
    [
      'key',
      'requests',
      'tokens in',
      'out',
      'reasoning',
      'cache read',
      'cache write',
      'cost',
      'source',
      'model',
      'complete',
    ],
    doc.subagents.map(({ key, usage }) => [
      key,
      usage.requests,
      usage.tokens_in,
      usage.tokens_out,
      usage.tokens_reasoning,
      usage.tokens_cached_read,
      usage.tokens_cached_write,
      costText(usage),
      usage.cost_source,
      usage.model,
      completeText(usage.complete),
    ]),
    // a terminal's width: the least telling columns give way first, named under the table
    { fit: { width, keep: 2, see: '--json shows every figure', dropFirst: ['cache write', 'reasoning', 'source'] } },
  );
  return `${facts}\n\n${table}\n\n(- : not in the file; tokens out include reasoning; docs/spend.md says how each agent's figures are read)`;
}
