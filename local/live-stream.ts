import type { Queryable } from '../lib/db/database.js';
import { formatRfc3339, type Micros } from '../lib/time.js';

/**
 * The live half of the local stack: what the host does after activation. For each new subagent
 * invocation it stores a `task_session_messages` row and records frames through the producer,
 * with the traffic's real blemishes (docs/README.md#real-traffic): exact duplicates (the FIFO queue drops them),
 * re-observed duplicates (the merge absorbs them), completions recorded before launches,
 * identity-less frames, an unreported execution, a malformed metric, a nested subagent, a
 * tool_call_id reused by another execution, late completions of backfilled invocations, and
 * bodies that are not valid frames at all. The plan carries what all of it must produce.
 */
export interface HostTurn {
  task_session_id: string;
  task_id: string;
  turn_id: string;
}

export interface BackfilledRow {
  task_session_id: string;
  task_id: string;
  tool_call_id: string;
  agent_status: string | null;
}

export interface HostMessage {
  id: string;
  task_session_id: string;
  task_id: string;
  turn_id: string;
  metadata: string;
  created_at: Micros;
}

export interface LiveExpectation {
  /** valid frames the handler must see (recorded minus exact duplicates) */
  attempted: number;
  skipped_no_identity: number;
  persisted: number;
  anomalous_value: number;
  unknown_execution: number;
  invalid: number;
  /** rows the stream creates */
  newRows: number;
  /** final agent_status of each new row ('(absent)' for NULL) */
  newRowsByStatus: Record<string, number>;
  /** backfilled rows whose agent_status a late frame changes, from → to */
  backfillStatusChanges: Array<{ from: string; to: string }>;
  /** rows − distinct (session, tool_call_id) keys the stream adds */
  collisions: number;
  /** R5-3: the top-level rows the stream adds to each turn (by turn id): its fan-out grows by as many */
  topLevelByTurn: Record<string, number>;
}

export interface LivePlan {
  hostMessages: HostMessage[];
  /** frames for the producer, in recording order */
  frames: Array<Record<string, unknown>>;
  /** message bodies that are not valid frames (sent raw, as a broken producer would) */
  invalidBodies: string[];
  expected: LiveExpectation;
}

export interface LivePlanOptions {
  turns: readonly HostTurn[];
  backfilled: readonly BackfilledRow[];
  /** new subagent invocations */
  invocations: number;
  /** first observation instant; must be after capture_since */
  startAt: Micros;
  /** prefix of generated ids */
  prefix?: string;
}

type LiveStatus = 'async_launched' | 'completed' | 'started';

/** docs/README.md#real-traffic shares: 75% async_launched, 20% completed, 5% started (OpenCode). */
const statusOf = (i: number): LiveStatus => (i % 20 < 15 ? 'async_launched' : i % 20 < 19 ? 'completed' : 'started');
/** fan-outs per turn seen in the real sample */
const FAN_OUTS = [3, 1, 2, 3, 1, 4, 3, 5, 1, 8] as const;
const LATE_COMPLETIONS = 5;
const IDENTITYLESS = 3;
const MS = 1_000n;

export const INVALID_BODIES: readonly string[] = [
  'subagent finished (not JSON)',
  '[1, 2, 3]',
  JSON.stringify({
    version: 2,
    task_session_id: 's',
    task_id: 't',
    tool_call_id: 'c',
    observed_at: '2026-08-12T13:24:58Z',
    subagent_task: {},
  }),
  JSON.stringify({
    version: 1,
    task_session_id: 's',
    task_id: 't',
    tool_call_id: 'c',
    observed_at: 'yesterday',
    subagent_task: {},
  }),
  JSON.stringify({
    version: 1,
    task_session_id: 's',
    task_id: 't',
    tool_call_id: 'c',
    observed_at: '2026-08-12T13:24:58Z',
  }),
  JSON.stringify({
    version: 1,
    task_session_id: 42,
    task_id: 't',
    tool_call_id: 'c',
    observed_at: '2026-08-12T13:24:58Z',
    subagent_task: {},
  }),
];

const count = (record: Record<string, number>, key: string) => (record[key] = (record[key] ?? 0) + 1);

export function planLiveStream(options: LivePlanOptions): LivePlan {
  const { turns, invocations } = options;
  if (turns.length === 0) throw new Error('planLiveStream needs at least one host turn to attach invocations to');
  const prefix = options.prefix ?? 'live-';
  let clock = options.startAt;
  const tick = () => (clock += MS);
  const at = (us: Micros, i: number) => {
    // Some producers send offsets; the pipeline must store the same UTC instant.
    const text = formatRfc3339(us);
    return i % 9 === 4 ? text.replace(/Z$/, '+00:00') : text;
  };

  const hostMessages: HostMessage[] = [];
  const frames: Array<Record<string, unknown>> = [];
  const expected: LiveExpectation = {
    attempted: 0,
    skipped_no_identity: 0,
    persisted: 0,
    anomalous_value: 0,
    unknown_execution: 0,
    invalid: INVALID_BODIES.length,
    newRows: 0,
    newRowsByStatus: {},
    backfillStatusChanges: [],
    collisions: 0,
    topLevelByTurn: {},
  };
  /** records a frame; `exactDuplicate` frames are dropped by the queue's deduplication */
  const record = (frame: Record<string, unknown>, effects: { anomalous?: boolean; exactDuplicate?: boolean } = {}) => {
    frames.push(frame);
    if (effects.exactDuplicate) return;
    expected.attempted += 1;
    if (!frame.task_session_id || !frame.task_id || !frame.tool_call_id) {
      expected.skipped_no_identity += 1;
      return;
    }
    expected.persisted += 1;
    if (effects.anomalous) expected.anomalous_value += 1;
    if (!frame.execution_id) expected.unknown_execution += 1;
  };

  let turnIndex = 0;
  let fanIndex = 0;
  let firstOfTurn: string | undefined;
  let nestedDone = false;
  for (let i = 0, inTurn = 0; i < invocations; i++, inTurn++) {
    if (inTurn >= FAN_OUTS[fanIndex % FAN_OUTS.length]!) {
      inTurn = 0;
      fanIndex += 1;
      turnIndex += 1;
    }
    const turn = turns[turnIndex % turns.length]!;
    const toolCallId = `toolu_${prefix}${String(i).padStart(5, '0')}`;
    if (inTurn === 0) firstOfTurn = toolCallId;
    const status = statusOf(i);
    // One in ten executions is not reported by the host (AC-31: stored as 'unknown').
    const executionId = i % 10 === 3 ? undefined : `exec-${turn.task_session_id}`;
    const parent = !nestedDone && inTurn === 1 ? firstOfTurn : undefined;
    if (parent) nestedDone = true;
    const base = {
      version: 1,
      task_session_id: turn.task_session_id,
      task_id: turn.task_id,
      turn_id: turn.turn_id,
      tool_call_id: toolCallId,
      ...(executionId ? { execution_id: executionId } : {}),
      ...(parent ? { parent_tool_call_id: parent } : {}),
    };
    const describe = {
      description: `live task ${i}`,
      subagent_type: i % 2 ? 'Explore' : 'general-purpose',
      prompt: 'never stored',
    };
    const launchedAt = tick();
    hostMessages.push({
      id: `${prefix}msg-${i}`,
      task_session_id: turn.task_session_id,
      task_id: turn.task_id,
      turn_id: turn.turn_id,
      created_at: launchedAt,
      metadata: JSON.stringify({
        tool_call_id: toolCallId,
        parent_tool_call_id: parent ?? '',
        status: status === 'started' ? 'in_progress' : 'completed',
        normalized: { kind: 'subagent_task', subagent_task: { ...describe, status } },
      }),
    });
    expected.newRows += 1;
    count(expected.newRowsByStatus, status);
    if (!parent) count(expected.topLevelByTurn, turn.turn_id);

    if (status === 'async_launched') {
      const frame = {
        ...base,
        tool_status: 'completed',
        observed_at: at(launchedAt, i),
        subagent_task: { ...describe, status, is_async: true },
      };
      record(frame);
      if (i % 7 === 0) record({ ...frame }, { exactDuplicate: true });
      // The host saw it again a moment later: a different frame, merged onto the same row.
      if (i % 11 === 0) record({ ...frame, observed_at: at(tick(), i) });
    } else if (status === 'started') {
      record({
        ...base,
        tool_status: 'in_progress',
        observed_at: at(launchedAt, i),
        subagent_task: { ...describe, status, child_session_id: `ses_${prefix}${i}` },
      });
    } else {
      const launch = {
        ...base,
        tool_status: 'in_progress',
        observed_at: at(launchedAt, i),
        subagent_task: { ...describe, is_async: false },
      };
      const anomalous = i % 3 === 0;
      const completion = {
        ...base,
        tool_status: 'completed',
        observed_at: at(tick(), i),
        subagent_task: {
          ...describe,
          status,
          agent_id: `agent-${i}`,
          model: 'claude-opus-5[1m]',
          duration_ms: 30_000 + i,
          total_tokens: anomalous ? -1 : 40_000 + i,
          tool_use_count: i % 4,
          result_text: 'never stored',
        },
      };
      // Frames arrive out of order: some completions are recorded before their launch.
      const order = i % 5 === 0 ? [completion, launch] : [launch, completion];
      for (const frame of order) record(frame, { anomalous: frame === completion && anomalous });
    }
  }

  // Another execution reusing a tool_call_id of the same session: a second row, one collision.
  const reused = frames.find((f) => f.execution_id && f.tool_call_id);
  if (reused) {
    record({
      ...reused,
      execution_id: `exec-reuse-${prefix}`,
      observed_at: at(tick(), 0),
      tool_status: 'completed',
      subagent_task: { status: 'async_launched', is_async: true },
    });
    expected.newRows += 1;
    expected.collisions += 1;
    count(expected.newRowsByStatus, 'async_launched');
    if (!reused.parent_tool_call_id) count(expected.topLevelByTurn, String(reused.turn_id));
  }

  // Late completions of detached launches captured by the backfill (no execution id: the
  // backfilled row's 'unknown'), each merging onto that row and keeping source = 'backfill'.
  const lateTargets = options.backfilled.filter((r) => r.agent_status === 'async_launched').slice(0, LATE_COMPLETIONS);
  for (const row of lateTargets) {
    record({
      version: 1,
      task_session_id: row.task_session_id,
      task_id: row.task_id,
      tool_call_id: row.tool_call_id,
      tool_status: 'completed',
      observed_at: at(tick(), 1),
      subagent_task: {
        status: 'completed',
        model: 'claude-sonnet-4-5',
        total_tokens: 12_345,
        duration_ms: 60_000,
        tool_use_count: 7,
      },
    });
    expected.backfillStatusChanges.push({ from: 'async_launched', to: 'completed' });
  }

  for (let k = 0; k < IDENTITYLESS; k++) {
    const turn = turns[k % turns.length]!;
    record({
      version: 1,
      task_session_id: turn.task_session_id,
      task_id: turn.task_id,
      tool_call_id: '',
      observed_at: at(tick(), k),
      subagent_task: { status: 'async_launched' },
    });
  }

  return { hostMessages, frames, invalidBodies: [...INVALID_BODIES], expected };
}

/** Stores the plan's host messages, as the host does before it records the frames. */
export async function insertHostMessages(db: Queryable, messages: readonly HostMessage[]): Promise<void> {
  const { dialect } = db;
  for (const m of messages) {
    await db.query(
      `INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, content, type, metadata, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'agent', 'live subagent', 'tool_call', $5, ${dialect.timestampParam(6)}, ${dialect.timestampParam(6)})`,
      [m.id, m.task_session_id, m.task_id, m.turn_id, m.metadata, dialect.encodeTimestamp(m.created_at)],
    );
  }
}
