import type { Queryable } from '../lib/db/database.js';
import type { Dialect } from '../lib/db/dialect/dialect.js';
import { createHostSchema } from './host-schema.js';
import { createKandevCostEvents, createKandevSchema } from './kandev-schema.js';

/**
 * The host databases tests and the local stack run against:
 * - `minimal`: the appendix's subset of the host schema (docs/table.md), nothing else;
 * - `host`: the host's real DDL (local/kandev-schema.ts): every column, foreign key and index the
 *   host creates on these tables, its expression indexes over `metadata` (so every stored document
 *   parses), `task_session_subagents` already created by the host, as on a real install, and the
 *   host's office cost ledger `office_cost_events` (R3-7).
 * Both dialects each. Rows are added through the fixture, because the real host's tables have
 * NOT NULL columns the minimal ones do not.
 */
export type HostFixtureName = 'minimal' | 'host';

export interface HostFixture {
  readonly name: HostFixtureName;
  /** Creates the host's tables (idempotent); on `host` that includes the host's own subagent table. */
  create(db: Queryable): Promise<void>;
  /** A session rows can reference (on `host` also its task). Idempotent. */
  addSession(db: Queryable, id: string, taskId: string): Promise<void>;
  /** A turn of an existing session. Idempotent. */
  addTurn(db: Queryable, id: string, sessionId: string): Promise<void>;
  /**
   * Whether a message with this `metadata` text can exist in such a store. The real host's
   * expression indexes parse every document on insert: one that is not JSON (or, on PostgreSQL,
   * one jsonb refuses, such as a `\u0000` escape) is refused by the host itself.
   */
  holdsMetadata(metadata: string | null, dialect: Dialect['name']): boolean;
}

/** Any fixed instant: the host's timestamps on sessions, turns and tasks are never read here. */
const HOST_TIME = '2026-08-12 13:24:58';

export const HOST_FIXTURES: Readonly<Record<HostFixtureName, HostFixture>> = {
  minimal: {
    name: 'minimal',
    create: createHostSchema,
    async addSession(db, id, taskId) {
      await db.query('INSERT INTO task_sessions (id, task_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [
        id,
        taskId,
      ]);
    },
    async addTurn(db, id, sessionId) {
      await db.query(
        'INSERT INTO task_session_turns (id, task_session_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
        [id, sessionId],
      );
    },
    holdsMetadata: () => true,
  },
  host: {
    name: 'host',
    create: async (db) => {
      await createKandevSchema(db);
      await createKandevCostEvents(db);
    },
    async addSession(db, id, taskId) {
      await db.query(
        `INSERT INTO tasks (id, title, created_at, updated_at) VALUES ($1, $1, '${HOST_TIME}', '${HOST_TIME}') ON CONFLICT (id) DO NOTHING`,
        [taskId],
      );
      await db.query(
        `INSERT INTO task_sessions (id, task_id, started_at, updated_at) VALUES ($1, $2, '${HOST_TIME}', '${HOST_TIME}') ON CONFLICT (id) DO NOTHING`,
        [id, taskId],
      );
    },
    async addTurn(db, id, sessionId) {
      await db.query(
        `INSERT INTO task_session_turns (id, task_session_id, task_id, started_at, created_at, updated_at)
         SELECT $1, s.id, s.task_id, '${HOST_TIME}', '${HOST_TIME}', '${HOST_TIME}' FROM task_sessions s WHERE s.id = $2
         ON CONFLICT (id) DO NOTHING`,
        [id, sessionId],
      );
    },
    holdsMetadata(metadata, dialect) {
      if (metadata === null) return true;
      try {
        JSON.parse(metadata);
      } catch {
        return false;
      }
      return dialect !== 'postgres' || !/\\u0000/i.test(metadata);
    },
  },
};

export const HOST_FIXTURE_NAMES: readonly HostFixtureName[] = ['minimal', 'host'];
