import type { Queryable } from '../../lib/db/database.js';
import { parseFrame } from '../../lib/frame/parse.js';
import type { Frame } from '../../lib/frame/schema.js';
import { normalizeFrame } from '../../lib/normalize.js';
import type { Frame as ProducerFrame } from '../../lib/producer/frame.js';
import type { SubagentWrite } from '../../lib/row.js';
import { currentFixture } from './targets.js';

/** A frame as a host records it (the producer's `Frame`); overrides may make it invalid on purpose. */
export type RecordedFrame = ProducerFrame & Record<string, unknown>;

export type FrameInput = Partial<Omit<Frame, 'subagent_task'>> & { subagent_task?: Record<string, unknown> };

/** A valid v1 frame with overridable fields; defaults identify session s1 / task t1 / call c1. */
export function frame(overrides: FrameInput = {}): RecordedFrame {
  return <RecordedFrame>{
    version: 1,
    task_session_id: 's1',
    task_id: 't1',
    tool_call_id: 'c1',
    execution_id: 'e1',
    observed_at: '2026-08-12T13:24:58.123456Z',
    ...overrides,
    subagent_task: { subagent_type: 'security-reviewer', ...(overrides.subagent_task ?? {}) },
  };
}

/** Frame → the row write the pipeline would make; fails the test if it is not a write. */
export function write(overrides: FrameInput = {}): SubagentWrite {
  const parsed = parseFrame(JSON.stringify(frame(overrides)));
  if (!parsed.ok) throw parsed.error;
  const normalized = normalizeFrame(parsed.frame);
  if (normalized.kind !== 'write') throw new Error('frame was skipped');
  return normalized.row;
}

/** Host rows a subagent row needs: the session (FK target), as the running test's host fixture needs it. */
export async function seedSession(db: Queryable, id = 's1', taskId = 't1'): Promise<void> {
  await currentFixture().addSession(db, id, taskId);
}

/** A turn of a seeded session. */
export async function seedTurn(db: Queryable, id = 'u1', sessionId = 's1'): Promise<void> {
  await currentFixture().addTurn(db, id, sessionId);
}
