import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { SubagentContextError } from '../errors.js';
import { isUsageTable, USAGE_TABLE } from '../store/usage-table.js';

/**
 * What the store holds that the report reads (docs/report.md#the-store): the host's schema varies
 * (the appendix's minimal subset, the host's real DDL, a host before its cost ledger), so the
 * report asks the catalog instead of assuming. One catalog read per table, side by side.
 */
export interface StoreCatalog {
  /** `tasks.title` exists: task groups carry their title */
  taskTitle: boolean;
  /** `task_sessions.started_at` exists: session groups carry their start; time filters apply to sessions */
  sessionStartedAt: boolean;
  /**
   * the host's office cost ledger, when it has the columns R3-7 reads; `turnId`: it attributes cost
   * to turns; `costSource`: it says where each cost came from (cost contract v3: R5-1, R5-2);
   * `fractions`: cost_subcents may hold a fraction, each one rounded once per event (issue 57 #19,
   * sql.ts ledgerValues): a PostgreSQL column of numeric, real or double precision, and any SQLite
   * column (a SQLite value has its own type); false for PostgreSQL's integer types
   */
  costEvents: { turnId: boolean; costSource: boolean; fractions: boolean } | undefined;
  /** the host's task_session_turns (R5-3's turns), `startedAt`: it has started_at (the window's column); undefined: no such table */
  turns: { startedAt: boolean } | undefined;
  /**
   * the host's index on task_session_messages(task_session_id, created_at) (idx_messages_session_created,
   * Appendix B) exists: whether a session has a message before capture_since is one probe per
   * session in scope, not a pass over every message before it (R4-12)
   */
  sessionCreatedIndex: boolean;
  /**
   * R6-2, R6-5: our task_session_subagent_usage exists with every column the spend figures read
   * (migrate creates it); false: a store before it, whose spend figures are all null (a note says why)
   */
  usage: boolean;
}

/** The store cannot be reported on: exit 1, with what to do (docs/report.md#bad-input). */
export class ReportStoreError extends SubagentContextError {
  override readonly name = 'ReportStoreError';
  constructor(
    message: string,
    /** the missing object */
    readonly object: string,
  ) {
    super(message);
  }
}

const COST_COLUMNS = ['session_id', 'task_id', 'cost_subcents', 'estimated', 'occurred_at'] as const;

/** PostgreSQL's types of cost_subcents read as they are (integers) and those rounded per event (issue 57 #19). */
const INTEGER_TYPES = new Set(['smallint', 'integer', 'bigint']);
const FRACTION_TYPES = new Set(['numeric', 'real', 'double precision']);

/**
 * Whether cost_subcents may hold fractions (`StoreCatalog.costEvents.fractions`); a PostgreSQL
 * column of another type (text, say) holds no number the report can sum: refused, named.
 */
function costFractions(dialect: Queryable['dialect']['name'], type: string | undefined): boolean {
  if (dialect === 'sqlite') return true;
  if (type !== undefined && INTEGER_TYPES.has(type)) return false;
  if (type !== undefined && FRACTION_TYPES.has(type)) return true;
  throw new ReportStoreError(
    `office_cost_events.cost_subcents is of type ${type ?? 'unknown'} on this store: the report sums costs as numbers ` +
      '(integer subcents; numeric, real or double precision are rounded per event). Give the column a number type ' +
      "(the host's DDL declares INTEGER), or drop the table to report without cost",
    'office_cost_events.cost_subcents',
  );
}

/** An index (not partial, valid) on task_session_messages whose first two columns are task_session_id, created_at. */
const SESSION_CREATED_INDEX: Record<Queryable['dialect']['name'], string> = {
  postgres: `SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace
  WHERE t.relname = 'task_session_messages' AND ns.nspname = current_schema() AND i.indisvalid AND i.indpred IS NULL
    AND i.indnkeyatts >= 2
    AND (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attnum = i.indkey[0]) = 'task_session_id'
    AND (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attnum = i.indkey[1]) = 'created_at') AS found`,
  sqlite: `SELECT EXISTS (SELECT 1 FROM pragma_index_list('task_session_messages') il WHERE il.partial = 0
  AND (SELECT ii.name FROM pragma_index_info(il.name) ii WHERE ii.seqno = 0) = 'task_session_id'
  AND (SELECT ii.name FROM pragma_index_info(il.name) ii WHERE ii.seqno = 1) = 'created_at') AS found`,
};

export async function readStoreCatalog(db: Queryable): Promise<StoreCatalog> {
  const columnsOf = async (table: string) =>
    new Map(
      (await db.query<{ column_name: string; data_type: string | null }>(db.dialect.columnDefaults, [table])).map(
        (c) => [c.column_name, c.data_type ?? undefined] as const,
      ),
    );
  const [[subagents, sessions, meta, tasks, costs, turns, usage], indexRows] = await Promise.all([
    Promise.all(
      [TABLE, 'task_sessions', 'kandev_meta', 'tasks', 'office_cost_events', 'task_session_turns', USAGE_TABLE].map(
        columnsOf,
      ),
    ),
    db.query<{ found: unknown }>(SESSION_CREATED_INDEX[db.dialect.name]),
  ]);
  if (sessions!.size === 0) {
    throw new ReportStoreError(
      'the store has no task_sessions table: this is not a host store; point --database-url (or DATABASE_URL) at the host database',
      'task_sessions',
    );
  }
  if (subagents!.size === 0 || meta!.size === 0) {
    const missing = subagents!.size === 0 ? TABLE : 'kandev_meta';
    throw new ReportStoreError(
      `the store has no ${missing} table: run \`subagent-context migrate\` against it first (it creates the table and backfills the history)`,
      missing,
    );
  }
  const hasCosts = COST_COLUMNS.every((c) => costs!.has(c));
  return {
    taskTitle: tasks!.has('title'),
    sessionStartedAt: sessions!.has('started_at'),
    costEvents: hasCosts
      ? {
          turnId: costs!.has('turn_id'),
          costSource: costs!.has('cost_source'),
          fractions: costFractions(db.dialect.name, costs!.get('cost_subcents')),
        }
      : undefined,
    turns: turns!.has('id') && turns!.has('task_session_id') ? { startedAt: turns!.has('started_at') } : undefined,
    // EXISTS gives one row: PostgreSQL's true and SQLite's 1 both read as 1
    sessionCreatedIndex: Number(indexRows[0]!.found) === 1,
    usage: isUsageTable(new Set(usage!.keys())),
  };
}
