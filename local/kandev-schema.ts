import type { Queryable } from '../lib/db/database.js';
import type { Dialect } from '../lib/db/dialect/dialect.js';

/*
 * The host's (kandev's) real DDL for the tables this project touches, for tests and the local
 * stack: `tasks`, `task_sessions`, `task_session_turns`, `task_session_messages` with every index
 * the host creates on it, `kandev_meta`, and `task_session_subagents` as the host creates it
 * (docs/table.md, Appendix B). Transcribed from kandev's
 * apps/backend/internal/task/repository/sqlite/base_schema.go (initTaskSchema,
 * sessionWorktreeSchemaDDL, initMessageTurnSchema, initSubagentContextSchema,
 * ensureMessageMetadataIndexes, ensurePromptOrderIndex), base_migrations.go (the ADD COLUMN and
 * CREATE INDEX steps on these tables) and internal/db/dialect (JSONExtract, PromptOrderIndexDDL,
 * PendingIDLookupIndexDDL). The host runs the same text on SQLite and PostgreSQL, so on PostgreSQL
 * `INTEGER` is 32-bit; only the expression indexes differ per dialect, as the host's own helpers
 * make them differ.
 *
 * Left out, because nothing here reads or writes them: the host's other tables (workspaces,
 * workflows, …) and the later nullable/defaulted `tasks` columns its migrations add; `tasks` has
 * no foreign key to them.
 */

type DialectName = Dialect['name'];

/** dialect.JSONExtract(driver, "metadata", path) */
const jsonExtract = (d: DialectName, path: string) =>
  d === 'postgres' ? `metadata::jsonb->>'${path}'` : `json_extract(metadata, '$.${path}')`;

/** dialect.NormalizedMicrosecond(driver, "created_at"): the SQLite prompt-order key. */
const normalizedMicrosecond = (expr: string) => {
  const rest = `substr(${expr}, 21)`;
  const digitRun =
    `CASE WHEN instr(${rest}, '+') > 0 THEN substr(${expr}, 21, instr(${rest}, '+') - 1) ` +
    `WHEN instr(${rest}, '-') > 0 THEN substr(${expr}, 21, instr(${rest}, '-') - 1) ` +
    `WHEN instr(${rest}, 'Z') > 0 THEN substr(${expr}, 21, instr(${rest}, 'Z') - 1) ` +
    `ELSE ${rest} END`;
  return `substr(datetime(${expr}), 1, 19) || '.' || substr((CASE WHEN substr(${expr}, 20, 1) = '.' THEN ${digitRun} ELSE '' END) || '000000000', 1, 6)`;
};

const promptOrderKey = (d: DialectName) =>
  d === 'postgres' ? 'created_at' : `(${normalizedMicrosecond('created_at')})`;

/** The host's `task_session_subagents` DDL, verbatim (initSubagentContextSchema). */
export const KANDEV_SUBAGENT_TABLE = `CREATE TABLE IF NOT EXISTS task_session_subagents (
  id                  TEXT PRIMARY KEY,
  task_session_id     TEXT NOT NULL,
  task_id             TEXT NOT NULL,
  turn_id             TEXT,
  tool_call_id        TEXT NOT NULL,
  agent_execution_id  TEXT NOT NULL DEFAULT 'unknown',
  parent_tool_call_id TEXT,
  subagent_type       TEXT,
  description         TEXT,
  agent_id            TEXT,
  child_session_id    TEXT,
  model               TEXT,
  agent_status        TEXT,
  tool_status         TEXT,
  is_async            INTEGER NOT NULL DEFAULT 0,
  total_tokens        INTEGER,
  tool_use_count      INTEGER,
  duration_ms         INTEGER,
  source              TEXT NOT NULL DEFAULT 'live',
  observed_at         TIMESTAMP NOT NULL,
  settled_at          TIMESTAMP,
  updated_at          TIMESTAMP NOT NULL,
  UNIQUE (task_session_id, agent_execution_id, tool_call_id),
  FOREIGN KEY (task_session_id) REFERENCES task_sessions(id) ON DELETE CASCADE
)`;

export const KANDEV_SUBAGENT_INDEXES: readonly string[] = [
  'CREATE INDEX IF NOT EXISTS idx_subagents_session_id ON task_session_subagents(task_session_id)',
  'CREATE INDEX IF NOT EXISTS idx_subagents_task_id    ON task_session_subagents(task_id)',
  'CREATE INDEX IF NOT EXISTS idx_subagents_turn_id    ON task_session_subagents(turn_id)',
];

/** Everything but `task_session_subagents`, in the host's order of creation. */
export function kandevBaseSchema(d: DialectName): readonly string[] {
  return [
    // persistence.ensureMetaTable, before any repository initialises.
    `CREATE TABLE IF NOT EXISTS kandev_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL DEFAULT ''
)`,
    // initTaskSchema
    `CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL DEFAULT '',
  workflow_id TEXT NOT NULL DEFAULT '',
  workflow_step_id TEXT NOT NULL DEFAULT '',
  title TEXT NOT NULL,
  description TEXT DEFAULT '',
  state TEXT DEFAULT 'TODO',
  priority INTEGER DEFAULT 0,
  position INTEGER DEFAULT 0,
  wip_admitted INTEGER NOT NULL DEFAULT 1,
  queued_for_step_id TEXT NOT NULL DEFAULT '',
  queued_at TIMESTAMP,
  metadata TEXT DEFAULT '{}',
  autopilot_enabled INTEGER NOT NULL DEFAULT 0,
  archived_at TIMESTAMP,
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL
)`,
    // sessionWorktreeSchemaDDL
    `CREATE TABLE IF NOT EXISTS task_sessions (
  id TEXT PRIMARY KEY,
  task_id TEXT NOT NULL,
  queue_incarnation_id TEXT NOT NULL DEFAULT '',
  agent_execution_id TEXT NOT NULL DEFAULT '',
  container_id TEXT NOT NULL DEFAULT '',
  agent_profile_id TEXT,
  execution_profile_id TEXT NOT NULL DEFAULT '',
  route_generation INTEGER NOT NULL DEFAULT 0,
  route_state TEXT NOT NULL DEFAULT '',
  route_reason TEXT NOT NULL DEFAULT '',
  downstream_acp_session_id TEXT NOT NULL DEFAULT '',
  executor_id TEXT DEFAULT '',
  executor_profile_id TEXT DEFAULT '',
  environment_id TEXT DEFAULT '',
  repository_id TEXT DEFAULT '',
  base_branch TEXT DEFAULT '',
  agent_profile_snapshot TEXT DEFAULT '{}',
  executor_snapshot TEXT DEFAULT '{}',
  environment_snapshot TEXT DEFAULT '{}',
  repository_snapshot TEXT DEFAULT '{}',
  state TEXT NOT NULL DEFAULT 'CREATED',
  error_message TEXT DEFAULT '',
  metadata TEXT DEFAULT '{}',
  started_at TIMESTAMP NOT NULL,
  completed_at TIMESTAMP,
  updated_at TIMESTAMP NOT NULL,
  is_primary INTEGER DEFAULT 0,
  is_passthrough INTEGER DEFAULT 0,
  review_status TEXT DEFAULT '',
  base_commit_sha TEXT DEFAULT '',
  task_environment_id TEXT DEFAULT '',
  cost_subcents INTEGER NOT NULL DEFAULT 0,
  tokens_in INTEGER NOT NULL DEFAULT 0,
  tokens_cached_in BIGINT NOT NULL DEFAULT 0,
  tokens_out INTEGER NOT NULL DEFAULT 0,
  FOREIGN KEY (task_id) REFERENCES tasks(id) ON DELETE CASCADE
)`,
    'CREATE INDEX IF NOT EXISTS idx_task_sessions_task_id ON task_sessions(task_id)',
    'CREATE INDEX IF NOT EXISTS idx_task_sessions_state ON task_sessions(state)',
    'CREATE INDEX IF NOT EXISTS idx_task_sessions_task_state ON task_sessions(task_id, state)',
    // initMessageTurnSchema
    `CREATE TABLE IF NOT EXISTS task_session_turns (
  id TEXT PRIMARY KEY,
  task_session_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  started_at TIMESTAMP NOT NULL,
  completed_at TIMESTAMP,
  execution_profile_id TEXT NOT NULL DEFAULT '',
  route_generation BIGINT NOT NULL DEFAULT 0,
  metadata TEXT DEFAULT '{}',
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL,
  FOREIGN KEY (task_session_id) REFERENCES task_sessions(id) ON DELETE CASCADE
)`,
    'CREATE INDEX IF NOT EXISTS idx_turns_session_id ON task_session_turns(task_session_id)',
    'CREATE INDEX IF NOT EXISTS idx_turns_session_started ON task_session_turns(task_session_id, started_at)',
    'CREATE INDEX IF NOT EXISTS idx_turns_task_id ON task_session_turns(task_id)',
    `CREATE TABLE IF NOT EXISTS task_session_messages (
  id TEXT PRIMARY KEY,
  task_session_id TEXT NOT NULL,
  task_id TEXT DEFAULT '',
  turn_id TEXT NOT NULL,
  author_type TEXT NOT NULL DEFAULT 'user',
  author_id TEXT DEFAULT '',
  content TEXT NOT NULL,
  requests_input INTEGER DEFAULT 0,
  type TEXT NOT NULL DEFAULT 'message',
  metadata TEXT DEFAULT '{}',
  created_at TIMESTAMP NOT NULL,
  updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY (task_session_id) REFERENCES task_sessions(id) ON DELETE CASCADE,
  FOREIGN KEY (turn_id) REFERENCES task_session_turns(id) ON DELETE CASCADE
)`,
    'CREATE INDEX IF NOT EXISTS idx_messages_session_id ON task_session_messages(task_session_id)',
    'CREATE INDEX IF NOT EXISTS idx_messages_created_at ON task_session_messages(created_at)',
    'CREATE INDEX IF NOT EXISTS idx_messages_session_created ON task_session_messages(task_session_id, created_at)',
    'CREATE INDEX IF NOT EXISTS idx_messages_turn_id ON task_session_messages(turn_id)',
    'CREATE INDEX IF NOT EXISTS idx_messages_task_author_created ON task_session_messages(task_id, author_type, type, created_at DESC)',
    // runMigrations: the steps on these tables (a fresh install runs them too).
    "ALTER TABLE task_sessions ADD COLUMN workspace_path TEXT DEFAULT ''",
    "ALTER TABLE task_sessions ADD COLUMN name TEXT DEFAULT ''",
    "ALTER TABLE task_sessions ADD COLUMN last_read_message_id TEXT DEFAULT ''",
    'CREATE INDEX IF NOT EXISTS idx_messages_session_updated ON task_session_messages(task_session_id, updated_at)',
    'ALTER TABLE task_session_messages ADD COLUMN prompt_seq INTEGER NOT NULL DEFAULT 0',
    "ALTER TABLE task_session_messages ADD COLUMN payload_digest TEXT NOT NULL DEFAULT ''",
    'ALTER TABLE task_session_messages ADD COLUMN payload_size INTEGER NOT NULL DEFAULT 0',
    'CREATE INDEX IF NOT EXISTS idx_messages_payload_digest ON task_session_messages(payload_digest)',
    // ensureMessageMetadataIndexes: every metadata document is parsed on insert, so the host's
    // store cannot hold one that is not valid JSON (nor, on PostgreSQL, one jsonb rejects).
    `CREATE INDEX IF NOT EXISTS idx_messages_metadata_tool_call_id ON task_session_messages(task_session_id, (${jsonExtract(d, 'tool_call_id')}))`,
    `CREATE INDEX IF NOT EXISTS idx_messages_metadata_pending_id ON task_session_messages(task_session_id, (${jsonExtract(d, 'pending_id')}))`,
    `CREATE INDEX IF NOT EXISTS idx_messages_metadata_pending_id_lookup ON task_session_messages((${jsonExtract(d, 'pending_id')}))`,
    `CREATE INDEX IF NOT EXISTS idx_messages_metadata_pending_id_lookup_ordered ON task_session_messages((${jsonExtract(d, 'pending_id')}), created_at, id) WHERE ${jsonExtract(d, 'pending_id')} IS NOT NULL`,
    // ensurePromptOrderIndex
    `CREATE INDEX IF NOT EXISTS idx_messages_prompt_order ON task_session_messages(task_session_id, ${promptOrderKey(d)}, id)`,
    `CREATE INDEX IF NOT EXISTS idx_messages_prompt_user_order ON task_session_messages(task_session_id, author_type, ${promptOrderKey(d)}, id)`,
  ];
}

/** The host's whole schema for these tables, `task_session_subagents` included, as its boot creates it. */
export function kandevSchema(d: DialectName): readonly string[] {
  return [...kandevBaseSchema(d), KANDEV_SUBAGENT_TABLE, ...KANDEV_SUBAGENT_INDEXES];
}

/**
 * Runs the host's DDL; like the host's migration logger, an ADD COLUMN that finds its column
 * already there (a second boot) is not an error.
 */
export async function createKandevSchema(db: Queryable, options: { subagentTable?: boolean } = {}): Promise<void> {
  const statements =
    options.subagentTable === false ? kandevBaseSchema(db.dialect.name) : kandevSchema(db.dialect.name);
  for (const statement of statements) {
    try {
      await db.query(statement);
    } catch (err) {
      if (!/ADD COLUMN/.test(statement) || !isDuplicateColumn(err)) throw err;
    }
  }
}

function isDuplicateColumn(err: unknown): boolean {
  const e = err as { sqlstate?: string; message?: string };
  return e.sqlstate === '42701' || /duplicate column/i.test(e.message ?? '');
}

/**
 * The host's office cost ledger (R3-7), verbatim: office/repository/sqlite/base.go createCostTables
 * (the table and its indexes, with the columns migrateCostEventContract adds inline, as a fresh
 * install has them) and base_migrations.go's uniq_office_cost_usage_event. The host runs the same
 * text on both dialects, so `INTEGER` is 32-bit on PostgreSQL. Kept apart from kandevSchema: the
 * report reads it, nothing writes it but the host (and the generator, local/generate-host-store.ts).
 */
export const KANDEV_COST_EVENTS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS office_cost_events (
  id TEXT PRIMARY KEY,
  session_id TEXT DEFAULT '',
  task_id TEXT DEFAULT '',
  agent_profile_id TEXT DEFAULT '',
  project_id TEXT DEFAULT '',
  model TEXT DEFAULT '',
  provider TEXT DEFAULT '',
  tokens_in INTEGER DEFAULT 0,
  tokens_cached_in INTEGER DEFAULT 0,
  tokens_cached_read INTEGER,
  tokens_cached_write INTEGER,
  tokens_out INTEGER DEFAULT 0,
  cost_subcents INTEGER NOT NULL DEFAULT 0,
  estimated INTEGER NOT NULL DEFAULT 0,
  turn_id TEXT,
  usage_event_id TEXT,
  cost_source TEXT,
  rate_input_per_million INTEGER,
  rate_cached_read_per_million INTEGER,
  rate_cached_write_per_million INTEGER,
  rate_output_per_million INTEGER,
  pricing_catalog_version TEXT,
  cost_contract_version INTEGER,
  occurred_at TIMESTAMP NOT NULL,
  created_at TIMESTAMP NOT NULL
)`,
  'CREATE INDEX IF NOT EXISTS idx_office_cost_agent ON office_cost_events(agent_profile_id)',
  'CREATE INDEX IF NOT EXISTS idx_office_cost_occurred ON office_cost_events(occurred_at DESC)',
  'CREATE INDEX IF NOT EXISTS idx_office_cost_task ON office_cost_events(task_id)',
  'CREATE INDEX IF NOT EXISTS idx_office_cost_events_session_id ON office_cost_events(session_id)',
  'CREATE UNIQUE INDEX IF NOT EXISTS uniq_office_cost_usage_event ON office_cost_events(usage_event_id) WHERE usage_event_id IS NOT NULL',
];

/** Creates the host's office cost ledger (idempotent). */
export async function createKandevCostEvents(db: Queryable): Promise<void> {
  for (const statement of KANDEV_COST_EVENTS) await db.query(statement);
}
