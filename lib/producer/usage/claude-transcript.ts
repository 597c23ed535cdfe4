import { ClaudeRequestFold, claudeRequestOf } from './claude-requests.js';
import { type RecordSource, recordsOf, textOf, type UsageReading } from './records.js';

/*
 * A Claude Code subagent's own transcript, `agent-<agentId>.jsonl` in the session's `subagents/`
 * folder under `~/.claude/projects/<project>/` (docs/spend.md#claude-code, SPEC §16 R6-3). Every line
 * is one record; the `assistant` ones hold the subagent's API requests. Nothing in it is a cost.
 */

/**
 * The subagent's whole run from its transcript's lines (or records): tokens summed over distinct
 * requests (`message.id`), the models it used, and whether it ended. The key is the first `agentId`
 * a record names (the file name names it too: `agent-<agentId>.jsonl`). Never throws on content.
 */
export async function readClaudeTranscript(lines: RecordSource): Promise<UsageReading> {
  const fold = new ClaudeRequestFold();
  let unreadable = 0;
  let key: string | null = null;
  for await (const record of recordsOf(lines)) {
    try {
      if (record === undefined) {
        unreadable++;
        continue;
      }
      const agentId = textOf(record.agentId);
      if (key === null && typeof agentId === 'string') key = agentId;
      if (record.type !== 'assistant') continue; // user, system, summary … lines hold no request
      const request = claudeRequestOf(record);
      if (request === undefined) unreadable++;
      else if (request !== 'synthetic') fold.add(request);
    } catch {
      unreadable++; // a record whose reading threw (a hostile object's getter): counted, never thrown
    }
  }
  return { usage: fold.usage(), unreadable_lines: unreadable, key };
}
