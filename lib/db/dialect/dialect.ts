import type { Micros } from '../../time.js';

/** The storage types the shared SQL binds; the domain's column list (lib/columns.ts) is written in these. */
export type SqlType = 'text' | 'integer' | 'bigint' | 'timestamp';

/** Each storage type as the DDL writes it: the same word on both dialects. */
export const SQL_TYPE_NAME: Record<SqlType, string> = {
  text: 'TEXT',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  timestamp: 'TIMESTAMP',
};

/** All the dialect needs to know of a column: its storage type (the layer knows nothing of the domain). */
export interface TypedColumn {
  readonly type: SqlType;
}

/** Containers nested deeper than this make a JSON document unreadable on both dialects (SQLite's JSON_MAX_DEPTH). */
export const MAX_JSON_DEPTH = 1000;

/** Where a repeated key can matter to `jsonDocument`. */
export interface LastWins {
  /** a condition on the text without which no value read matters (only there are repeats looked for) */
  readonly relevant: string;
}

/** A string as an SQL literal (both dialects: single quotes doubled, backslashes literal). */
export const sqlLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * Everything that differs between PostgreSQL and SQLite, in one small interface (one file per
 * dialect beside this one). All SQL elsewhere is shared and uses `$n` placeholders.
 */
export interface Dialect {
  readonly name: 'postgres' | 'sqlite';
  /**
   * Ends a derived table so the planner cannot merge it into the query around it: each of its
   * columns is then computed once per row, however often the outer query refers to it.
   */
  readonly fence: string;
  /** Statements the schema needs on this dialect only, run after the shared DDL. */
  readonly extraDdl: readonly string[];
  /**
   * Rows `{ index_name, column_name }`: every plain (not partial, not expression) one-column
   * index of the table named by `$1` in the current schema.
   */
  readonly singleColumnIndexes: string;
  /** Statements that leave index `from` under the name `to`; `create` is `to`'s CREATE INDEX. */
  renameIndex(from: string, to: string, create: string): readonly string[];
  /**
   * Rows `{ column_name, column_default, data_type }` of the table named by `$1` (default NULL when
   * none; the type as declared: information_schema's name on PostgreSQL, the DDL's text on SQLite).
   */
  readonly columnDefaults: string;
  /**
   * The statement giving an existing column a DEFAULT without rebuilding the table, or undefined
   * where the engine cannot (SQLite).
   */
  setColumnDefault(table: string, column: string, value: string): string | undefined;
  /** An instant in the form this dialect stores and binds. */
  encodeTimestamp(us: Micros): string;
  /** Casts a bound `$n` timestamp parameter where the dialect needs it. */
  timestampParam(index: number): string;
  /**
   * An expression over a stored timestamp column that compares microsecond-exactly with
   * `timestampParam` bound to `formatCanonical(us)` and with other `comparable` expressions
   * (docs/time.md: never raw strings of different forms, never julianday).
   */
  comparable(expr: string): string;
  /**
   * `readableInstant`'s reading (R4-3: the UTC instant any offset names; NULL for what is no
   * instant), but keeping every fraction digit the column can hold (SQLite text written by the
   * host's driver keeps nanoseconds; PostgreSQL's `timestamp` holds microseconds), in one fixed
   * width that orders as the instants do: what a high-water mark reads (its MAX), so it is never
   * earlier than the value it covers (R3-2) and never a value that is no instant or another
   * offset's later-looking text (round 2 leftover, issue 57). Its text is read by
   * `parseStoredTimestamp`, which rounds sub-microsecond digits up.
   */
  exact(expr: string): string;
  /**
   * `SELECT <columns> FROM <one batch of rows>` for `INSERT … SELECT`, reading every row from
   * parameters starting at `$1`, so no bind-parameter limit applies; `bindRows` gives them.
   */
  selectRows(columns: readonly TypedColumn[]): string;
  bindRows(columns: readonly TypedColumn[], rows: readonly (readonly unknown[])[]): unknown[];
  /**
   * A parsed JSON document from a TEXT column that may hold anything (NULL, '', 'null', invalid
   * JSON): NULL instead of an error. Select it once (`AS doc`) and read it with `jsonText`. Both
   * dialects read the same document (R2-1 parity, docs/dialects.md#json-documents): a document
   * nested deeper than MAX_JSON_DEPTH is NULL (SQLite's own limit), and with `lastWins` a repeated
   * key reads as its last value (as jsonb and JSON.parse read it). The column is
   * referenced several times: give a column, not an expression that costs.
   */
  jsonDocument(textColumn: string, lastWins?: LastWins): string;
  /**
   * `expr` with every match of `pattern` replaced by the literal `replacement`. The pattern is
   * written in the syntax PostgreSQL's regular expressions and JavaScript's read alike (SQLite has
   * none of its own: a function of the connection, `SQLITE_FUNCTIONS`).
   */
  replaceAll(expr: string, pattern: string, replacement: string): string;
  /** The value at `path` (e.g. `'$.normalized.kind'`) of a `jsonDocument` as TEXT, or NULL. */
  jsonText(document: string, path: string): string;
  /** The value at `path` when it is a JSON string, else NULL (a number or object is not text). */
  jsonString(document: string, path: string): string;
  /**
   * The value at `path` as an integer when it is a JSON number that is a non-negative integer
   * no larger than `max`, else NULL: strings, fractions, negatives, too-large values never abort
   * (docs/merge.md#recording-one-frame,
   * docs/migrate.md#5-malformed-metadata, R2-10).
   */
  jsonInteger(document: string, path: string, max: number): string;
  /** A boolean condition: the value at `path` is JSON `true` (not "true", not 1). */
  jsonIsTrue(document: string, path: string): string;
  /** A host timestamp column (e.g. `created_at`) in the form `encodeTimestamp` gives. */
  storedTimestamp(expr: string): string;
  /**
   * Statements that run `insert` (an INSERT without RETURNING); the last returns one row
   * `{ inserted }`, the number of rows it inserted. All run with the insert's parameters.
   */
  countInserted(insert: string): readonly string[];
  /** The UTC day `YYYY-MM-DD` (TEXT) of a stored timestamp column. */
  utcDay(expr: string): string;
  /**
   * The nearest-rank percentile of a value over its non-NULL values, as an aggregate expression of
   * the figures' own GROUP BY: the value at rank ⌈p/100 · n⌉ of the sorted values
   * (docs/report.md#percentiles, R3-6; R4-12: that one pass computes it). `percents` are all the
   * percentiles of `value` the statement reads, `percent` among them: a dialect may rank them in
   * one aggregate.
   */
  nearestRank(value: string, percent: number, percents: readonly number[]): string;
  /** A bound `$n` JSON document (JSON text), as the `jsonMember`/`jsonElement` below read it. */
  jsonParam(index: number): string;
  /** The member of a JSON object `json` named by the TEXT expression `label`, as JSON (NULL when absent). */
  jsonMember(json: string, label: string): string;
  /** Element `index` of a JSON array `json` as an SQL value of `type` (JSON null and absence: NULL). */
  jsonElement(json: string, index: number, type: SqlType): string;
  /**
   * R4-3 (docs/report.md#unreadable-values): the integer column `expr` when it holds an integer in
   * [min, max], else NULL. The host's table has no CHECKs, so a column can hold text, a fraction or
   * any value its type can: none of them is read, and none can fail the statement.
   */
  readableInteger(expr: string, min: number, max: number): string;
  /**
   * R4-3, issue 57 #19 (docs/report.md#unreadable-values): the number column `expr` (an integer or
   * a fraction: a host's numeric, real or double precision, a SQLite REAL) rounded once to an
   * integer, half away from zero (x ± ½ truncated toward zero, the same arithmetic on both
   * dialects), when that integer is in [min, max], else NULL (text, NaN, infinity, out of range).
   * PostgreSQL: `expr` must be of a number type.
   */
  readableRounded(expr: string, min: number, max: number): string;
  /**
   * R4-3: `comparable(expr)` when the stored timestamp is an instant lib/time.ts reads (UTC,
   * 0001-01-01 … 9999-12-31, at most nine fraction digits), else NULL: garbage, `''`, a number,
   * another offset, `infinity`, a BC date or a year past 9999 is not an instant, never an error.
   */
  readableInstant(expr: string): string;
  /**
   * An ORDER BY term ordering text by code point (the byte order of its UTF-8), whatever the
   * database's collation: where a list is cut (`LIMIT`), every database keeps the same items.
   */
  byteOrder(expr: string): string;
}
