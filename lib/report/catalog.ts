import { TABLE } from '../columns.js';
import type { Queryable } from '../db/database.js';
import { SubagentContextError } from '../errors.js';

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
  /** the host's office cost ledger, when it has the columns R3-7 reads; `turnId`: it attributes cost to turns */
  costEvents: { turnId: boolean } | undefined;
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

export async function readStoreCatalog(db: Queryable): Promise<StoreCatalog> {
  const columnsOf = async (table: string) =>
    new Set((await db.query<{ column_name: string }>(db.dialect.columnDefaults, [table])).map((c) => c.column_name));
  const [subagents, sessions, meta, tasks, costs] = await Promise.all(
    [TABLE, 'task_sessions', 'kandev_meta', 'tasks', 'office_cost_events'].map(columnsOf),
  );
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
    costEvents: hasCosts ? { turnId: costs!.has('turn_id') } : undefined,
  };
}
