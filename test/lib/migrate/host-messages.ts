import type { Queryable } from '../../../lib/db/database.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { seedSession, seedTurn } from '../../support/frames.js';
import { currentFixture } from '../../support/targets.js';

/** The subagent metadata of docs/table.md#host-tables-this-project-reads, with overrides at the top level and in the payload. */
export function subagentDoc(
  options: { top?: Record<string, unknown>; task?: Record<string, unknown>; kind?: unknown } = {},
): Record<string, unknown> {
  return {
    tool_call_id: 'c1',
    parent_tool_call_id: '',
    status: 'completed',
    ...options.top,
    normalized: {
      kind: options.kind ?? 'subagent_task',
      subagent_task: { subagent_type: 'security-reviewer', status: 'completed', ...options.task },
    },
  };
}

export interface HostMessage {
  id: string;
  /** the metadata TEXT exactly as stored (objects are JSON-encoded) */
  metadata: string | null | Record<string, unknown>;
  session?: string;
  /** the message row's task_id column; default t1 */
  taskId?: string;
  /** the message row's turn_id column; default u1 */
  turnId?: string;
  /** RFC 3339; default 2026-08-12T13:24:58.123456Z */
  createdAt?: string;
  updatedAt?: string;
}

const asText = (metadata: HostMessage['metadata']) =>
  metadata !== null && typeof metadata === 'object' ? JSON.stringify(metadata) : metadata;

/**
 * Whether the running test's host store can hold this metadata at all: the real host's expression
 * indexes refuse a document they cannot parse (local/host-fixtures.ts).
 */
export function hostHolds(db: Queryable, metadata: HostMessage['metadata']): boolean {
  return currentFixture().holdsMetadata(asText(metadata), db.dialect.name);
}

/** A host message (with its session and turn) stored the way the host stores it. */
export async function insertHostMessage(db: Queryable, message: HostMessage): Promise<void> {
  const session = message.session ?? 's1';
  const turn = message.turnId ?? 'u1';
  await seedSession(db, session, 't1');
  await seedTurn(db, turn, session);
  const stamp = (text: string) => {
    const us = parseRfc3339(text);
    if (us === undefined) throw new Error(`bad test instant ${text}`);
    return db.dialect.encodeTimestamp(us);
  };
  const createdAt = message.createdAt ?? '2026-08-12T13:24:58.123456Z';
  const metadata = asText(message.metadata);
  await db.query(
    `INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, content, type, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'agent', 'subagent', 'tool_call', $5, ${db.dialect.timestampParam(6)}, ${db.dialect.timestampParam(7)})`,
    [
      message.id,
      session,
      message.taskId ?? 't1',
      turn,
      metadata,
      stamp(createdAt),
      stamp(message.updatedAt ?? createdAt),
    ],
  );
}
