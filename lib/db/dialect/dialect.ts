import type { Column } from '../../columns.js';
import type { Micros } from '../../time.js';

/**
 * Everything that differs between PostgreSQL and SQLite, in one small interface (one file per
 * dialect beside this one). All SQL elsewhere is shared and uses `$n` placeholders.
 */
export interface Dialect {
  readonly name: 'postgres' | 'sqlite';
  /** Statements the schema needs on this dialect only, run after the shared DDL. */
  readonly extraDdl: readonly string[];
  /** An instant in the form this dialect stores and binds. */
  encodeTimestamp(us: Micros): string;
  /** Casts a bound `$n` timestamp parameter where the dialect needs it. */
  timestampParam(index: number): string;
  /**
   * An expression over a stored timestamp column that compares microsecond-exactly with
   * `timestampParam` bound to `formatCanonical(us)` and with other `comparable` expressions
   * (SPEC §10: never raw strings of different forms, never julianday).
   */
  comparable(expr: string): string;
  /**
   * `SELECT <columns> FROM <one batch of rows>` for `INSERT … SELECT`, reading every row from
   * parameters starting at `$1`, so no bind-parameter limit applies; `bindRows` gives them.
   */
  selectRows(columns: readonly Column[]): string;
  bindRows(columns: readonly Column[], rows: readonly (readonly unknown[])[]): unknown[];
  /**
   * A parsed JSON document from a TEXT column that may hold anything (NULL, '', 'null', invalid
   * JSON): NULL instead of an error. Select it once (`AS doc`) and read it with `jsonText`.
   */
  jsonDocument(textColumn: string): string;
  /** The value at `path` (e.g. `'$.normalized.kind'`) of a `jsonDocument` as TEXT, or NULL. */
  jsonText(document: string, path: string): string;
}
