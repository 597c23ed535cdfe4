import { ClaudeRequestFold, claudeRequestOf, claudeUsageOf } from './claude-requests.js';
import { asObject, BAD, type RecordSource, recordsOf, textOf, type UsageReading } from './records.js';

/*
 * A Claude Code `--output-format stream-json` stream, or the Agent SDK's messages (the same
 * objects): the subagents' runs in it, one per Agent call (docs/spend.md#claude-code, R6-3).
 * A subagent's assistant messages carry `parent_tool_use_id`, the Agent call's tool_use id; its final
 * request may be found only in the tool result's `tool_use_result.usage` when it was not streamed.
 * `totalTokens` and `usage` on that result are the final request's alone, never the run's.
 */

/** The tool names of a subagent call (Claude Code renamed `Task` to `Agent`). */
const AGENT_TOOLS = new Set(['Task', 'Agent']);

/** One Agent call's reading; `key` is its tool_use id. */
export interface StreamSubagentReading extends UsageReading {
  key: string;
}

export interface StreamReading {
  /** one per Agent call, in the order the stream first names them */
  subagents: StreamSubagentReading[];
  /** every record that could not be read, those of no known call included */
  unreadable_lines: number;
}

class Call {
  readonly fold = new ClaudeRequestFold();
  unreadable = 0;
  /** the call's result was seen: the run is over and what was streamed of it is final */
  ended = false;
}

/**
 * Reads the stream's records and returns each Agent call's run: its streamed requests (distinct
 * `message.id`), plus its final request from `tool_use_result.usage` when no streamed request has
 * the same input side (it was not streamed). A call is an Agent call when a tool_use block named
 * `Task` or `Agent` opened it, when messages name it as their parent, or when its result carries an
 * `agentId`; the results of other tools are no subagent. Never throws on content.
 */
export async function readClaudeStream(lines: RecordSource): Promise<StreamReading> {
  const calls = new Map<string, Call>();
  const call = (id: string) => {
    let found = calls.get(id);
    if (found === undefined) {
      found = new Call();
      calls.set(id, found);
    }
    return found;
  };
  let unreadable = 0;
  for await (const record of recordsOf(lines)) {
    try {
      if (record === undefined) unreadable++;
      else if (record.type === 'assistant') unreadable += assistantRecord(record, call);
      else if (record.type === 'user') unreadable += toolResultRecord(record, calls, call);
    } catch {
      unreadable++; // a record whose reading threw (a hostile object's getter): counted, never thrown
    }
  }
  const subagents = [...calls].map(([key, { fold, unreadable: own, ended }]) => {
    // complete: its result was seen (the run is over, what it streamed is final); without the result
    // the stream was cut or the call still runs, whatever the last message's stop reason said
    const usage = { ...fold.usage(), complete: ended };
    return { key, usage, unreadable_lines: own };
  });
  return { subagents, unreadable_lines: unreadable };
}

/** An assistant message: a subagent's request when it has a parent; its Agent tool_use blocks open calls. Returns the unreadable count. */
function assistantRecord(record: Record<string, unknown>, call: (id: string) => Call): number {
  const parent = textOf(record.parent_tool_use_id);
  if (parent === BAD) return 1;
  const message = asObject(record.message);
  const content = message?.content;
  if (Array.isArray(content))
    for (const block of content) {
      const b = asObject(block);
      const id = textOf(b?.id);
      if (b?.type === 'tool_use' && typeof id === 'string' && AGENT_TOOLS.has(b.name as string)) call(id);
    }
  if (parent === undefined) return 0; // the main agent's own request: no subagent's
  const request = claudeRequestOf(record);
  if (request === 'synthetic') return 0;
  if (request === undefined) {
    call(parent).unreadable++;
    return 1;
  }
  call(parent).fold.add(request);
  return 0;
}

/**
 * A user message holding tool results: an Agent call's result ends its run and may hold its final
 * request (`tool_use_result.usage`). `tool_use_result` belongs to the message's one tool result; a
 * message with several results of Agent calls cannot say whose it is, so its usage is not used.
 */
function toolResultRecord(
  record: Record<string, unknown>,
  calls: Map<string, Call>,
  call: (id: string) => Call,
): number {
  const content = asObject(record.message)?.content;
  if (!Array.isArray(content)) return 0;
  const results = content.map(asObject).filter((b) => b?.type === 'tool_result');
  const ids = results.map((b) => textOf(b?.tool_use_id)).filter((id): id is string => typeof id === 'string');
  const detail = asObject(record.tool_use_result);
  const ownAgent = typeof textOf(detail?.agentId) === 'string';
  const agentIds = ids.filter((id) => calls.has(id) || (ownAgent && ids.length === 1));
  for (const id of agentIds) call(id).ended = true;
  if (agentIds.length !== 1 || ids.length !== 1 || detail === undefined || detail.usage === undefined) return 0;
  const target = call(agentIds[0]!);
  const counts = claudeUsageOf(detail.usage);
  if (counts === undefined) {
    target.unreadable++;
    return 1;
  }
  // the final request was streamed already when the newest streamed request has its input side
  if (!target.fold.sameAsLast(counts))
    target.fold.add({ id: `tool_use_result:${agentIds[0]}`, model: undefined, stopReason: undefined, counts });
  return 0;
}
