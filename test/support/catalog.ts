import type { Queryable } from '../../lib/db/database.js';

/**
 * A table's shape as the engine's catalog reports it (columns with type, NULL, DEFAULT; indexes;
 * constraints), so two DDL texts can be compared by what they create. Only tests read catalogs.
 */
export interface TableShape {
  columns: unknown[];
  indexes: unknown[];
  constraints: unknown[];
}

export async function tableShape(
  db: Queryable,
  table: string,
  options: { ignoreColumns?: string[]; ignoreIndexes?: string[] } = {},
): Promise<TableShape> {
  const ignore = new Set(options.ignoreColumns ?? []);
  const ignoreIndex = new Set(options.ignoreIndexes ?? []);
  const keepIndex = (i: unknown) =>
    !ignoreIndex.has((i as { name?: string; indexname?: string }).name ?? (i as { indexname: string }).indexname);
  if (db.dialect.name === 'sqlite') {
    const columns = await db.query<{ name: string }>(
      `SELECT name, type, "notnull" AS not_null, dflt_value, pk FROM pragma_table_info($1) ORDER BY cid`,
      [table],
    );
    const indexes = await db.query(
      `SELECT il.name, il."unique", il.origin, il.partial,
         (SELECT group_concat(ii.name, ',') FROM pragma_index_info(il.name) ii) AS columns
       FROM pragma_index_list($1) il ORDER BY il.name`,
      [table],
    );
    const constraints = await db.query(
      `SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list($1) ORDER BY "from"`,
      [table],
    );
    return { columns: columns.filter((c) => !ignore.has(c.name)), indexes: indexes.filter(keepIndex), constraints };
  }
  const columns = await db.query<{ name: string }>(
    `SELECT column_name AS name, data_type, is_nullable, column_default FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  const indexes = await db.query(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 ORDER BY indexname`,
    [table],
  );
  const constraints = await db.query(
    `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = to_regclass($1::text) ORDER BY conname`,
    [table],
  );
  return { columns: columns.filter((c) => !ignore.has(c.name)), indexes: indexes.filter(keepIndex), constraints };
}

/** Names of the table's indexes, excluding the ones the engine makes for PRIMARY KEY / UNIQUE. */
export async function indexNames(db: Queryable, table: string, ignore: readonly string[] = []): Promise<string[]> {
  const sql =
    db.dialect.name === 'sqlite'
      ? `SELECT name FROM pragma_index_list($1) WHERE origin = 'c' ORDER BY name`
      : `SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
         WHERE x.indrelid = to_regclass($1::text) AND NOT x.indisunique ORDER BY i.relname`;
  return (await db.query<{ name: string }>(sql, [table])).map((r) => r.name).filter((n) => !ignore.includes(n));
}
