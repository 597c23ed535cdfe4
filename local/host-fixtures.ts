import type { Queryable } from '../lib/db/database.js';
import { type Dialect, MAX_JSON_DEPTH } from '../lib/db/dialect/dialect.js';
import { UNPAIRED_ESCAPE } from '../lib/text.js';
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
      // The host's index parses with json_extract on SQLite (refuses nesting deeper than 1,000) and
      // ::jsonb on PostgreSQL (refuses a \u0000 escape and an unpaired surrogate escape, and runs
      // out of stack some way above 10,000 levels: between 12,000 and 30,000 on PostgreSQL 15).
      if (dialect === 'sqlite') return jsonDepth(metadata) <= MAX_JSON_DEPTH;
      if (jsonDepth(metadata) > 10_000) return false;
      const escapes = metadata.replaceAll('\\\\', '\u0001');
      return !/\\u0000/i.test(escapes) && !new RegExp(UNPAIRED_ESCAPE).test(escapes);
    },
  },
};

/** The deepest nesting of arrays and objects in a valid JSON text (brackets in strings skipped). */
function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ']' || c === '}') depth -= 1;
  }
  return deepest;
}

export const HOST_FIXTURE_NAMES: readonly HostFixtureName[] = ['minimal', 'host'];

/**
 * What the host's driver stores for an instant Go holds with nanoseconds, given in the host's
 * SQLite text form (`2026-08-12 13:24:57.3388988+00:00`, UTC): mattn/go-sqlite3 keeps every digit;
 * pgx sends PostgreSQL whole microseconds, the further digits truncated (its timestamp codec:
 * `t.Nanosecond()/1000`), so a real PostgreSQL host never holds the microsecond PostgreSQL's own
 * text input would round to (docs/time.md#sub-microsecond-digits).
 */
export function hostDriverInstant(dialect: Dialect['name'], hostText: string): string {
  if (dialect === 'sqlite') return hostText;
  const m = /^(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)(?:\.(\d+))?(?:Z|\+00:00)?$/.exec(hostText);
  if (!m) throw new Error(`hostDriverInstant: ${hostText} is not a UTC instant in the host's text form`);
  return m[2] === undefined ? m[1]! : `${m[1]}.${m[2].slice(0, 6)}`;
}
