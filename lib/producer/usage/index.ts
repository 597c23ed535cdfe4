/*
 * `subagent-context-producer/usage` (SPEC §16 R6-3, docs/spend.md): readers of the agents' own
 * records of a subagent's run, for hosts in TypeScript and for the CLI's `usage` command. Node's
 * built-ins only: the producer package gains no dependency.
 */
export { readClaudeStream, type StreamReading, type StreamSubagentReading } from './claude-stream.js';
export { readClaudeTranscript } from './claude-transcript.js';
export { readCodexRollout } from './codex-rollout.js';
export { fileLines, MAX_LINE_CHARS, OVERLONG_LINE } from './file-lines.js';
export { readOpenCodeSession } from './opencode-session.js';
export { lookUpPrice, type ModelPrice, type PriceTable, priceUsage } from './price.js';
export type { RecordSource, UsageReading } from './records.js';
export {
  COST_SOURCES,
  type CostSource,
  type RunUsage,
  SUBCENTS_PER_DOLLAR,
  USAGE_COUNT_FIELDS,
  USAGE_TOKEN_FIELDS,
  type UsageCountField,
  type UsageTokenField,
} from './run-usage.js';
