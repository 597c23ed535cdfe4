import type { Queryable } from '../lib/db/database.js';

/**
 * The subset of the host's schema this project reads (docs/table.md#host-tables-this-project-reads). Tests and the local stack
 * create it; in production the host owns these tables. Valid on PostgreSQL and SQLite alike.
 */
export const HOST_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS task_sessions (id TEXT PRIMARY KEY, task_id TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS task_session_turns (
  id TEXT PRIMARY KEY,
  task_session_id TEXT NOT NULL REFERENCES task_sessions(id) ON DELETE CASCADE)`,
  `CREATE TABLE IF NOT EXISTS task_session_messages (
  id TEXT PRIMARY KEY,
  task_session_id TEXT NOT NULL REFERENCES task_sessions(id) ON DELETE CASCADE,
  task_id TEXT DEFAULT '',
  turn_id TEXT NOT NULL REFERENCES task_session_turns(id) ON DELETE CASCADE,
  author_type TEXT NOT NULL DEFAULT 'user',
  content TEXT NOT NULL,
  type TEXT NOT NULL DEFAULT 'message',
  metadata TEXT DEFAULT '{}',
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS idx_messages_created_at ON task_session_messages(created_at)`,
  `CREATE TABLE IF NOT EXISTS kandev_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT '')`,
];

export async function createHostSchema(db: Queryable): Promise<void> {
  for (const statement of HOST_SCHEMA) await db.query(statement);
}
