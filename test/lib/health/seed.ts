import type { Queryable } from '../../../lib/db/database.js';
import { type HealthCheckOptions, runHealthCheck } from '../../../lib/health/check.js';
import type { HealthReport } from '../../../lib/health/report.js';
import { CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { writeBatch } from '../../../lib/store/write.js';
import { formatRfc3339, type Micros, parseRfc3339 } from '../../../lib/time.js';
import { seedSession, seedTurn, write } from '../../support/frames.js';

export const SECOND = 1_000_000n;
export const MINUTE = 60n * SECOND;

export function at(rfc3339: string): Micros {
  const us = parseRfc3339(rfc3339);
  if (us === undefined) throw new Error(`bad instant ${rfc3339}`);
  return us;
}

/** A host subagent message's metadata (docs/table.md#host-tables-this-project-reads). */
export function subagentMetadata(toolCallId: string | undefined, kind = 'subagent_task'): string {
  return JSON.stringify({
    ...(toolCallId === undefined ? {} : { tool_call_id: toolCallId }),
    parent_tool_call_id: '',
    status: 'completed',
    normalized: {
      kind,
      subagent_task: { subagent_type: 'security-reviewer', status: 'async_launched', is_async: true },
    },
  });
}

let messageSequence = 0;

export interface MessageSeed {
  createdAt: Micros;
  /** metadata TEXT as stored; default: a subagent message for `toolCallId` */
  metadata?: string | null;
  toolCallId?: string;
  session?: string;
  /** the message row's own task_id column (the identity filter reads it) */
  taskId?: string;
}

/** Inserts a host message (and its session and turn) as the host would store it. */
export async function seedMessage(db: Queryable, seed: MessageSeed): Promise<void> {
  const session = seed.session ?? 's1';
  await seedSession(db, session, 't1');
  const turn = `${session}-turn`;
  await seedTurn(db, turn, session);
  const created = db.dialect.encodeTimestamp(seed.createdAt);
  const metadata = seed.metadata !== undefined ? seed.metadata : subagentMetadata(seed.toolCallId ?? 'c1');
  await db.query(
    `INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, author_type, content, type, metadata, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'agent', '', 'tool_call', $5, ${db.dialect.timestampParam(6)}, ${db.dialect.timestampParam(6)})`,
    [`m${++messageSequence}`, session, seed.taskId ?? 't1', turn, metadata, created],
  );
}

export interface RowSeed {
  observedAt: Micros;
  toolCallId?: string;
  session?: string;
  execution?: string;
  source?: 'live' | 'backfill';
}

/** Writes a subagent row through the real writer. */
export async function seedRow(db: Queryable, seed: RowSeed): Promise<void> {
  const session = seed.session ?? 's1';
  await seedSession(db, session, 't1');
  const row = write({
    task_session_id: session,
    tool_call_id: seed.toolCallId ?? 'c1',
    execution_id: seed.execution ?? 'e1',
    observed_at: formatRfc3339(seed.observedAt),
  });
  const source = seed.source ?? 'live';
  await writeBatch(db, [source === 'backfill' ? { ...row, source, agent_execution_id: 'unknown' } : row]);
}

/** The host's own index on the metadata's tool_call_id, as the host's DDL spells it (docs/table.md). */
export async function createHostToolCallIndex(db: Queryable): Promise<void> {
  await db.query(
    db.dialect.name === 'postgres'
      ? `CREATE INDEX IF NOT EXISTS idx_messages_metadata_tool_call_id ON task_session_messages (task_session_id, (metadata::jsonb->>'tool_call_id'))`
      : `CREATE INDEX IF NOT EXISTS idx_messages_metadata_tool_call_id ON task_session_messages (task_session_id, json_extract(metadata, '$.tool_call_id'))`,
  );
}

/** An older host: its store without that index (the real-host fixture has it; the minimal one never). */
export async function dropHostToolCallIndex(db: Queryable): Promise<void> {
  await db.query('DROP INDEX IF EXISTS idx_messages_metadata_tool_call_id');
}

export async function setCaptureSince(db: Queryable, value: string): Promise<void> {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [CAPTURE_SINCE_KEY, value]);
}

/** The check with the test's clock and no confirmation wait (the wait is production pacing only). */
export function check(db: Queryable, now: Micros, options: Partial<HealthCheckOptions> = {}): Promise<HealthReport> {
  return runHealthCheck(db, { graceSeconds: 900, now, beforeConfirm: async () => undefined, ...options });
}
