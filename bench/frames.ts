import { formatRfc3339, parseRfc3339 } from '../lib/time.js';
import { between, pick, prng, weighted } from '../local/generate-host-store.js';

/** One frame as the queue delivers it: the body a producer sent and its FIFO group. */
export interface QueuedFrame {
  body: string;
  groupId: string;
}

export interface FrameStream {
  /** in delivery order */
  frames: QueuedFrame[];
  /** every session a frame names (the FK target rows must exist before ingest) */
  sessions: { id: string; taskId: string }[];
  /** distinct (session, execution, tool call) keys among `frames` */
  keys: number;
}

// docs/README.md#real-traffic: subagents per fanned-out turn (1 → 65 turns, 2 → 12, 3 → 42, 4 → 5, 5 → 2, 8 → 1).
const FAN_OUT: readonly (readonly [number, number])[] = [
  [1, 65],
  [2, 12],
  [3, 42],
  [4, 5],
  [5, 2],
  [8, 1],
];
// docs/README.md#real-traffic: agent status mix (async_launched 190, completed 57, started 5, absent 1).
type Kind = 'async_launched' | 'completed' | 'started' | 'absent';
const KINDS: readonly (readonly [Kind, number])[] = [
  ['async_launched', 190],
  ['completed', 57],
  ['started', 5],
  ['absent', 1],
];
// "each subagent seen on ~3 frames": 2, 3 or 4 (a 4th is a duplicate delivery), mean 3.
const FRAMES_PER_SUBAGENT: readonly (readonly [number, number])[] = [
  [2, 1],
  [3, 2],
  [4, 1],
];
const TYPES = ['general-purpose', 'security-reviewer', 'code-explorer', 'test-writer', 'Explore', 'Plan'];
const MODELS = ['claude-opus-5[1m]', 'claude-sonnet-5', 'claude-haiku-5'];
const START = parseRfc3339('2026-08-12T09:00:00Z')!;

interface Pending {
  at: number; // delivery time, ms after START
  observedAt: number; // ms after START, with a µs fraction
  frame: Record<string, unknown>;
  groupId: string;
}

/**
 * A deterministic stream shaped like the real sample (docs/README.md#real-traffic): turns of concurrently active sessions fan
 * out to 1–8 subagents, each seen on ~3 frames (launch, progress, result) spread over seconds to
 * minutes, so a large batch holds several frames of one subagent and a FIFO batch of 10 rarely
 * does. Delivery jitter reorders nearby frames; a 4th frame is a duplicate delivery.
 */
type Random = () => number;

const chance = (random: Random, p: number) => random() < p;
const hex = (random: Random, length: number) =>
  Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');

export function generateFrameStream(options: { frames: number; seed: number; sessions?: number }): FrameStream {
  const random = prng(options.seed);
  const sessionCount = options.sessions ?? Math.max(4, Math.ceil(options.frames / 50));
  const sessions = Array.from({ length: sessionCount }, (_, i) => ({
    id: `bench-s${options.seed}-${i}`,
    taskId: `bench-t${options.seed}-${i % Math.max(1, Math.floor(sessionCount / 3))}`,
    execution: uuid(random),
  }));
  const pending: Pending[] = [];
  let turn = 0;
  let nested = false;
  // Generate until the frames already due are enough; later turns would only add a tail.
  while (pending.length < options.frames * 1.25) {
    const session = pick(random, sessions);
    if (chance(random, 0.05)) session.execution = uuid(random); // the session was resumed
    const turnAt = turn * 1000 + between(random, 0, 900);
    const turnId = `bench-turn-${options.seed}-${turn++}`;
    const fanOut = weighted(random, FAN_OUT);
    for (let i = 0; i < fanOut; i++) {
      const parent = !nested && turn > 20 && i > 0;
      if (parent) nested = true;
      pending.push(...subagentFrames(random, { session, turnId, at: turnAt + i * 40, nested: parent }));
    }
  }
  pending.sort((a, b) => a.at - b.at);
  const frames = pending.slice(0, options.frames);
  const keys = new Set(frames.map((p) => `${p.frame.task_session_id}|${p.frame.execution_id}|${p.frame.tool_call_id}`));
  return {
    frames: frames.map((p) => ({ body: JSON.stringify(p.frame), groupId: p.groupId })),
    sessions: sessions.map(({ id, taskId }) => ({ id, taskId })),
    keys: keys.size,
  };
}

function subagentFrames(
  random: Random,
  spawn: { session: { id: string; taskId: string; execution: string }; turnId: string; at: number; nested: boolean },
): Pending[] {
  const kind = weighted(random, KINDS);
  const count = weighted(random, FRAMES_PER_SUBAGENT);
  const toolCallId = `toolu_01${hex(random, 22)}`;
  const type = pick(random, TYPES);
  const description = `${pick(random, ['Review', 'Explore', 'Test', 'Refactor', 'Document'])} ${hex(random, 6)} module`;
  // Texts sized like real traffic (docs/README.md#real-traffic): a prompt of ~2 KB and (below) a result of ~4 KB on average.
  const prompt = 'Investigate the change and report findings. '.repeat(between(random, 30, 60));
  const base = {
    version: 1,
    task_session_id: spawn.session.id,
    task_id: spawn.session.taskId,
    tool_call_id: toolCallId,
    turn_id: spawn.turnId,
    execution_id: spawn.session.execution,
    ...(spawn.nested ? { parent_tool_call_id: `toolu_01${hex(random, 22)}` } : {}),
  };
  const task = { description, prompt, subagent_type: type };
  // Detached dispatches return at once; a completed subagent reports after seconds to minutes.
  const finalAfter = kind === 'completed' ? between(random, 8_000, 180_000) : between(random, 200, 3_000);
  const stages: { after: number; toolStatus: string; extra: Record<string, unknown> }[] = [
    {
      after: 0,
      toolStatus: 'pending',
      extra: kind === 'absent' ? {} : { status: kind === 'completed' ? 'running' : kind },
    },
    { after: Math.floor(finalAfter / 3), toolStatus: 'in_progress', extra: progress(random, kind) },
    { after: finalAfter, toolStatus: kind === 'started' ? 'in_progress' : 'completed', extra: result(random, kind) },
  ];
  const chosen = count === 2 ? [stages[0]!, stages[2]!] : count === 3 ? stages : [...stages, stages[2]!];
  return chosen.map((stage) => {
    const observedAt = spawn.at + stage.after + between(random, 0, 999) / 1000;
    return {
      at: observedAt + between(random, 0, 300), // delivery jitter reorders nearby frames
      observedAt,
      groupId: spawn.session.id,
      frame: {
        ...base,
        tool_status: stage.toolStatus,
        observed_at: formatRfc3339(START + BigInt(Math.round(observedAt * 1000))),
        subagent_task: { ...task, ...stage.extra },
      },
    };
  });
}

function progress(random: Random, kind: Kind): Record<string, unknown> {
  if (kind === 'async_launched') return { status: 'async_launched', is_async: true, agent_id: hex(random, 8) };
  if (kind === 'started') return { status: 'started', child_session_id: `ses_${hex(random, 24)}` };
  if (kind === 'completed') return { status: 'running', agent_id: hex(random, 8) };
  return {};
}

function result(random: Random, kind: Kind): Record<string, unknown> {
  if (kind !== 'completed') return progress(random, kind);
  return {
    status: 'completed',
    agent_id: hex(random, 8),
    // docs/README.md#real-traffic: a model on 49 of 57 completed subagents.
    ...(chance(random, 49 / 57) ? { model: pick(random, MODELS) } : {}),
    duration_ms: between(random, 2_000, 600_000),
    total_tokens: between(random, 1_000, 275_717),
    tool_use_count: between(random, 0, 60),
    result_text: 'Findings: the module is consistent with the contract. '.repeat(between(random, 50, 100)),
    output_file: `/tmp/${hex(random, 12)}.md`,
  };
}

function uuid(random: Random): string {
  const h = hex(random, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
