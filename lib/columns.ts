/**
 * The table, column by column: storage type and what happens on conflict (docs/table.md,
 * docs/merge.md#merging-onto-an-existing-row). The DDL, the upsert's conflict clause and the in-memory merge are all generated
 * from this one list. Types, NULLs and DEFAULTs are exactly the host's own DDL for the table (docs/table.md, R2-10):
 * whichever side creates it first, the other finds the shape it would have made.
 *
 * R2-7, R3-1 (docs/merge.md#replays-and-older-frames, docs/merge.md#two-writers-one-row): a frame whose
 * observed_at is older than the row's newest applied observation is *older*; it only fills NULLs.
 * The row's newest applied observation is the greatest of its `newest` columns, NULL read as
 * observed_at: `last_observed_at` (ours) and `updated_at` (the host's writer sets it from its clock
 * at its write, which for the host is its observation instant; ours sets it to the same value as
 * `last_observed_at`). The rules below say what each does for a frame in observation order and for
 * an older one.
 */
import type { SqlType } from './db/dialect/dialect.js';

export type ColumnType = SqlType;

export type MergeRule =
  /** never changed after the creating write (AC-1, AC-1a) */
  | 'keep'
  /**
   * the stored value wins; a stored NULL is filled (turn_id AC-2a, settled_at write-once AC-11).
   * The same for an older frame: filling a NULL is all it does anyway.
   */
  | 'fill'
  /** a new non-NULL value replaces; NULL never blanks (AC-4, AC-5). An older frame only fills a NULL. */
  | 'replace'
  /**
   * like `replace` until the row is settled, then frozen (tool_status, AC-12). The frame that
   * settles the row (fills settled_at, even an older one) brings its terminal status with it, so a
   * settled row always holds the status that settled it.
   */
  | 'replaceUntilSettled'
  /** 1 wins forever (is_async); order-free, so an older frame's 1 counts too (0 is "not reported") */
  | 'sticky'
  /**
   * the row's newest applied observation (last_observed_at R2-7, updated_at R3-1): the greater of
   * the row's and the frame's, so an older frame leaves the row's (and a row the host wrote gets
   * it written down). Never earlier than observed_at, never backwards.
   */
  | 'newest';

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly merge: MergeRule;
  readonly ddl?: string;
  /** the only values a writer stores, when the column is an enumeration (its TypeScript type narrows to them) */
  readonly values?: readonly (string | number)[];
}

export const TABLE = 'task_session_subagents';

/**
 * The largest metric the table stores: the host declares the metrics `INTEGER`, which is 32-bit
 * on PostgreSQL (docs/table.md, R2-10). A larger value is malformed: NULL and `anomalous_value`
 * in ingest and in the backfill alike, so no value can fail a row or the backfill.
 */
export const MAX_METRIC = 2_147_483_647;
export const CONFLICT_KEY = ['task_session_id', 'agent_execution_id', 'tool_call_id'] as const;

const DEFINITIONS = [
  { name: 'id', type: 'text', nullable: false, merge: 'keep', ddl: 'PRIMARY KEY' },
  { name: 'task_session_id', type: 'text', nullable: false, merge: 'keep' },
  { name: 'task_id', type: 'text', nullable: false, merge: 'keep' },
  { name: 'turn_id', type: 'text', nullable: true, merge: 'fill' },
  { name: 'tool_call_id', type: 'text', nullable: false, merge: 'keep' },
  { name: 'agent_execution_id', type: 'text', nullable: false, merge: 'keep', ddl: "DEFAULT 'unknown'" },
  { name: 'parent_tool_call_id', type: 'text', nullable: true, merge: 'replace' },
  { name: 'subagent_type', type: 'text', nullable: true, merge: 'replace' },
  { name: 'description', type: 'text', nullable: true, merge: 'replace' },
  { name: 'agent_id', type: 'text', nullable: true, merge: 'replace' },
  { name: 'child_session_id', type: 'text', nullable: true, merge: 'replace' },
  { name: 'model', type: 'text', nullable: true, merge: 'replace' },
  { name: 'agent_status', type: 'text', nullable: true, merge: 'replace' },
  { name: 'tool_status', type: 'text', nullable: true, merge: 'replaceUntilSettled' },
  { name: 'is_async', type: 'integer', nullable: false, merge: 'sticky', ddl: 'DEFAULT 0', values: [0, 1] },
  { name: 'total_tokens', type: 'integer', nullable: true, merge: 'replace' },
  { name: 'tool_use_count', type: 'integer', nullable: true, merge: 'replace' },
  { name: 'duration_ms', type: 'integer', nullable: true, merge: 'replace' },
  { name: 'source', type: 'text', nullable: false, merge: 'keep', ddl: "DEFAULT 'live'", values: ['live', 'backfill'] },
  { name: 'observed_at', type: 'timestamp', nullable: false, merge: 'keep' },
  { name: 'settled_at', type: 'timestamp', nullable: true, merge: 'fill' },
  // The instant the row's values are as of: the host's writer stores its clock at its write (its
  // observation instant), ours the row's newest applied observation (R3-1, docs/merge.md).
  { name: 'updated_at', type: 'timestamp', nullable: false, merge: 'newest' },
  // Nullable: the host's own writer does not know the column; NULL reads as observed_at (R2-7).
  { name: 'last_observed_at', type: 'timestamp', nullable: true, merge: 'newest' },
] as const satisfies readonly Column[];

/** The list for code that walks every column (DDL, upsert, merge); the types below keep the literals. */
export const COLUMNS: readonly Column[] = DEFINITIONS;

/** One column's definition, as written above (its literal name, type, nullability, values). */
export type ColumnDef = (typeof DEFINITIONS)[number];
export type ColumnName = ColumnDef['name'];

export const COLUMN_NAMES: readonly ColumnName[] = DEFINITIONS.map((c) => c.name);

/**
 * The columns whose greatest value (NULL read as observed_at) is the row's newest applied
 * observation, the instant an incoming frame is compared with (R2-7, R3-1); every one of them is
 * set to that instant by our writes.
 */
export type NewestColumn = Extract<ColumnDef, { merge: 'newest' }>['name'];
export const NEWEST_COLUMNS: readonly NewestColumn[] = DEFINITIONS.flatMap((c) =>
  c.merge === 'newest' ? [c.name] : [],
);

/** The columns stored as timestamps (read back as RFC 3339 text). */
export type TimestampColumn = Extract<ColumnDef, { type: 'timestamp' }>['name'];
export const TIMESTAMP_COLUMNS: readonly TimestampColumn[] = DEFINITIONS.flatMap((c) =>
  c.type === 'timestamp' ? [c.name] : [],
);

/** What `source` may hold: a live frame's row or a backfilled one. */
export const SOURCES = definition('source').values;

function definition<N extends ColumnName>(name: N): Extract<ColumnDef, { name: N }> {
  return DEFINITIONS.find((c): c is Extract<ColumnDef, { name: N }> => c.name === name)!;
}

/** A column's TypeScript value: its `values` when listed, else by storage type; timestamps as `Time`. */
type ValueOf<C extends Column, Time> = C extends { values: readonly (infer V)[] }
  ? V
  : C['type'] extends 'timestamp'
    ? Time
    : C['type'] extends 'text'
      ? string
      : number;

/**
 * One row, column by column, derived from COLUMNS (a nullable column may be NULL); `Time` is how
 * timestamps travel: `Micros` in writes, RFC 3339 text in reads. lib/row.ts names the two views.
 */
export type RowOf<Time> = {
  -readonly [C in ColumnDef as C['name']]: C['nullable'] extends true ? ValueOf<C, Time> | null : ValueOf<C, Time>;
};

/**
 * R4-3 (docs/report.md): a row is async when its stored `is_async` is the integer 1, the one value
 * the writers store for it; any other value the host could store (0.5, 2, 'true', a blob) is not.
 * One rule, read in SQL by the totals and the trees alike (so the page and the spans, which read
 * the trees, agree): a condition on `column`.
 */
export const isAsyncCondition = (column: string) => `${column} = 1`;
