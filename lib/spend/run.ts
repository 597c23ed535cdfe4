import { CONFLICT_KEY, TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { parseFrame } from '../frame/parse.js';
import { normalizeFrame } from '../normalize.js';
import type { Frame } from '../producer/frame.js';
import { readClaudeTranscript } from '../producer/usage/claude-transcript.js';
import { readCodexRollout } from '../producer/usage/codex-rollout.js';
import { readOpenCodeSession } from '../producer/usage/opencode-session.js';
import { type PriceTable, priceUsage } from '../producer/usage/price.js';
import type { UsageReading } from '../producer/usage/records.js';
import type { RunUsage } from '../producer/usage/run-usage.js';
import type { SubagentWrite } from '../row.js';
import { USAGE_TABLE } from '../store/usage-table.js';
import { writeBatch } from '../store/write.js';
import { formatRfc3339, type Micros, parseStoredTimestamp } from '../time.js';
import type { FoundRecord, RecordFinder, RecordKind } from './records.js';

/*
 * `subagent-context spend` (R6-4, docs/spend.md#spend): the rows that point at an agent's
 * record of the subagent's run and have no final usage yet, their records read, priced where the
 * agent gave no cost, and the usage written through ingest's own path: a frame per row, parsed and
 * normalized as the handler does, written by its batch upsert. Rows it cannot serve are counted by
 * reason and never get a 0.
 */

/** Why a row got no usage: never a 0 written for it. */
export const UNSERVED_REASONS = [
  /** no record of its key in the folders looked in */
  'no_record',
  /** a record was found and nothing in it could be read */
  'record_unreadable',
  /** a record was found and holds no request yet (a subagent that has not answered) */
  'record_without_usage',
  /** its key names an agent none of whose folders is here (no Claude folder for an agent_id, …) */
  'agent_not_supported',
  /** the host's row cannot be written back as a frame (an id the frame refuses, an unreadable instant) */
  'row_unreadable',
] as const;
export type UnservedReason = (typeof UNSERVED_REASONS)[number];

export interface SpendOptions {
  finder: RecordFinder;
  /** a models.dev shaped price table (`--prices`); without it a run the agent did not price is unpriced */
  prices?: PriceTable;
  /** read and price, write nothing */
  dryRun?: boolean;
  /** rows per page (one read, one transaction) */
  pageSize?: number;
  /** Ctrl-C: stop between pages (each page is committed whole) */
  keepGoing?: () => boolean;
  /** after each row: rows done of the total */
  progress?: (done: number, total: number) => void;
}

/** What a served row got (the dry run's list, and the figures a test checks). */
export interface ServedRow {
  task_session_id: string;
  agent_execution_id: string;
  tool_call_id: string;
  kind: RecordKind;
  usage: RunUsage;
  unreadable_lines: number;
}

export interface SpendReport {
  /** rows with an agent_id or child_session_id and no final usage when the run started */
  rows: number;
  /** rows whose usage was written (dry run: would be) */
  written: number;
  unserved: Record<UnservedReason, number>;
  /** lines of the records read that could not be read, over all rows */
  unreadable_lines: number;
  /** rows written with a cost, and without one (unpriced) */
  priced: number;
  unpriced: number;
  dry_run: boolean;
  /** false when Ctrl-C stopped it between pages (rerun: it picks up where it stopped) */
  complete: boolean;
  /** dry run: what it would write */
  would_write?: ServedRow[];
}

interface Candidate {
  task_session_id: unknown;
  task_id: unknown;
  agent_execution_id: unknown;
  tool_call_id: unknown;
  agent_id: unknown;
  child_session_id: unknown;
  observed_at: unknown;
  last_observed_at: unknown;
  updated_at: unknown;
  usage_observed_at: unknown;
}

/** The rows' conflict key: pages are keyset pages on it. */
const KEY = CONFLICT_KEY;
const named = (column: string) => `(s.${column} IS NOT NULL AND s.${column} <> '')`;

/** The rows to serve: a key to a record, no final usage. Keyset pages in key order. */
function candidatesSql(after: boolean, limit: number | undefined): string {
  return `SELECT s.task_session_id, s.task_id, s.agent_execution_id, s.tool_call_id, s.agent_id, s.child_session_id,
  s.observed_at, s.last_observed_at, s.updated_at, u.observed_at AS usage_observed_at
FROM ${TABLE} s LEFT JOIN ${USAGE_TABLE} u
  ON u.task_session_id = s.task_session_id AND u.agent_execution_id = s.agent_execution_id AND u.tool_call_id = s.tool_call_id
WHERE (${named('agent_id')} OR ${named('child_session_id')}) AND (u.complete IS NULL OR u.complete <> 1)${
    after ? ` AND (s.${KEY.join(', s.')}) > ($1, $2, $3)` : ''
  }
ORDER BY s.${KEY.join(', s.')}${limit === undefined ? '' : ` LIMIT ${limit}`}`;
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The newest of the row's observations and its stored usage's, or undefined when observed_at is unreadable. */
function newestOf(row: Candidate): Micros | undefined {
  const read = (v: unknown) => (typeof v === 'string' ? parseStoredTimestamp(v) : undefined);
  let newest = read(row.observed_at);
  if (newest === undefined) return undefined;
  for (const v of [row.last_observed_at, row.updated_at, row.usage_observed_at]) {
    const at = read(v);
    if (at !== undefined && at > newest) newest = at;
  }
  return newest;
}

/**
 * The frame that carries `usage` to the row and nothing else: its identity, the row's newest
 * observation (so no column of the row is older or newer than it was: a merge leaves the row as
 * it is, docs/merge.md) and no other field. Undefined when the frame would not land on this row.
 */
function frameFor(row: Candidate, usage: RunUsage, at: Micros): SubagentWrite | undefined {
  const executionId = text(row.agent_execution_id);
  const frame: Frame = {
    version: 1,
    task_session_id: text(row.task_session_id) ?? null,
    task_id: text(row.task_id) ?? null,
    tool_call_id: text(row.tool_call_id) ?? null,
    execution_id: executionId === 'unknown' ? null : (executionId ?? null),
    observed_at: formatRfc3339(at),
    subagent_task: { usage },
  };
  const parsed = parseFrame(JSON.stringify(frame));
  if (!parsed.ok) return undefined;
  const normalized = normalizeFrame(parsed.frame);
  if (normalized.kind !== 'write') return undefined;
  const write = normalized.row;
  const sameKey = KEY.every((k) => write[k] === row[k]);
  return sameKey ? write : undefined;
}

const READERS: Record<RecordKind, (records: FoundRecord['records']) => Promise<UsageReading>> = {
  claude: (records) => readClaudeTranscript(records()),
  opencode: (records) => readOpenCodeSession(records()),
  codex: (records) => readCodexRollout(records()),
};

/** A row's record, or why there is none to read. */
function recordOf(row: Candidate, finder: RecordFinder): FoundRecord | UnservedReason {
  const agentId = text(row.agent_id);
  const child = text(row.child_session_id);
  const found =
    (agentId === undefined ? undefined : finder.byAgentId(agentId)) ??
    (child === undefined ? undefined : finder.byChildSession(child));
  if (found !== undefined) return found;
  const lookable =
    (agentId !== undefined && finder.lookable('agent_id')) ||
    (child !== undefined && finder.lookable('child_session_id'));
  return lookable ? 'no_record' : 'agent_not_supported';
}

const reportsNothing = (usage: RunUsage) =>
  Object.values(usage).every((value) => value === undefined || value === null);

export async function runSpend(db: Queryable, options: SpendOptions): Promise<SpendReport> {
  const pageSize = options.pageSize ?? 500;
  const report: SpendReport = {
    rows: 0,
    written: 0,
    unserved: Object.fromEntries(UNSERVED_REASONS.map((r) => [r, 0])) as Record<UnservedReason, number>,
    unreadable_lines: 0,
    priced: 0,
    unpriced: 0,
    dry_run: options.dryRun === true,
    complete: true,
    ...(options.dryRun ? { would_write: [] } : {}),
  };
  const [counted] = await db.query<{ n: unknown }>(
    `SELECT COUNT(*) AS n FROM (${candidatesSql(false, undefined)}) AS c`,
  );
  report.rows = Number(counted?.n ?? 0);
  let done = 0;
  let after: unknown[] | undefined;
  for (;;) {
    if (options.keepGoing?.() === false) {
      report.complete = false;
      break;
    }
    const page = await db.query<Candidate & Record<string, unknown>>(
      candidatesSql(after !== undefined, pageSize),
      after,
    );
    if (page.length === 0) break;
    const writes: SubagentWrite[] = [];
    for (const row of page) {
      const served = await serve(row, options);
      report.unreadable_lines += served.unreadable_lines;
      if ('reason' in served) report.unserved[served.reason] += 1;
      else {
        if (served.write.usage?.cost_subcents === null || served.write.usage?.cost_subcents === undefined)
          report.unpriced += 1;
        else report.priced += 1;
        writes.push(served.write);
        report.written += 1;
        report.would_write?.push(served.row);
      }
      options.progress?.(++done, report.rows);
    }
    // One page, one transaction (writeBatch): an interrupted run leaves whole pages, and a rerun
    // finds only the rows still without final usage.
    if (!options.dryRun && writes.length > 0) await writeBatch(db, writes);
    const last = page[page.length - 1]!;
    after = KEY.map((k) => last[k]);
    if (page.length < pageSize) break;
  }
  return report;
}

async function serve(
  row: Candidate,
  options: SpendOptions,
): Promise<
  | { write: SubagentWrite; row: ServedRow; unreadable_lines: number }
  | { reason: UnservedReason; unreadable_lines: number }
> {
  const at = newestOf(row);
  if (at === undefined) return { reason: 'row_unreadable', unreadable_lines: 0 };
  const record = recordOf(row, options.finder);
  if (typeof record === 'string') return { reason: record, unreadable_lines: 0 };
  const reading = await READERS[record.kind](record.records);
  const unserved = (reason: UnservedReason) => ({ reason, unreadable_lines: reading.unreadable_lines });
  if (reportsNothing(reading.usage))
    return unserved(reading.unreadable_lines > 0 ? 'record_unreadable' : 'record_without_usage');
  const usage = priceUsage(reading.usage, options.prices ?? {});
  const write = frameFor(row, usage, at);
  if (write === undefined) return unserved('row_unreadable');
  // nothing of it passed the frame's rules (every field out of range): nothing readable to store
  if (write.usage === undefined) return unserved('record_unreadable');
  const served: ServedRow = {
    task_session_id: write.task_session_id,
    agent_execution_id: write.agent_execution_id,
    tool_call_id: write.tool_call_id,
    kind: record.kind,
    usage,
    unreadable_lines: reading.unreadable_lines,
  };
  return { write, row: served, unreadable_lines: reading.unreadable_lines };
}
