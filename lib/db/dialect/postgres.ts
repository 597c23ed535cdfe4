import { formatCanonical } from '../../time.js';
import { type Dialect, MAX_JSON_DEPTH, type SqlType, sqlLiteral } from './dialect.js';

const ARRAY_TYPE: Record<SqlType, string> = {
  text: 'text[]',
  integer: 'integer[]',
  bigint: 'bigint[]',
  timestamp: 'timestamp[]',
};

const SCALAR_TYPE: Record<SqlType, string> = {
  text: 'text',
  integer: 'integer',
  bigint: 'bigint',
  timestamp: 'timestamp',
};

export const postgresDialect: Dialect = {
  name: 'postgres',
  fence: 'OFFSET 0',
  // A failed ::jsonb cast aborts the whole statement; this guard turns a malformed metadata
  // document into NULL instead (docs/migrate.md#5-malformed-metadata). PostgreSQL 16+ (Neon) validates with
  // pg_input_is_valid in an inlinable SQL function. PostgreSQL 15 has no such test, so there it is
  // an EXCEPTION block — a subtransaction per call, several times slower, and PARALLEL UNSAFE
  // because PostgreSQL refuses subtransactions inside a parallel plan (SQLSTATE 25000).
  extraDdl: [
    `DO $do$
BEGIN
  IF current_setting('server_version_num')::int >= 160000 THEN
    EXECUTE $f$CREATE OR REPLACE FUNCTION subagent_context_json(doc text) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $b$ SELECT CASE WHEN pg_input_is_valid(doc, 'jsonb') THEN doc::jsonb END $b$$f$;
  ELSE
    EXECUTE $f$CREATE OR REPLACE FUNCTION subagent_context_json(doc text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE AS $b$
BEGIN
  IF doc IS NULL OR doc = '' THEN RETURN NULL; END IF;
  RETURN doc::jsonb;
EXCEPTION WHEN others THEN RETURN NULL;
END
$b$$f$;
  END IF;
END
$do$`,
  ],
  singleColumnIndexes: `SELECT ic.relname AS index_name, a.attname AS column_name
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
WHERE i.indrelid = to_regclass($1::text) AND i.indnatts = 1 AND i.indpred IS NULL AND i.indexprs IS NULL`,
  // A catalog-only change: the index is not rebuilt.
  renameIndex: (from, to) => [`ALTER INDEX ${from} RENAME TO ${to}`],
  columnDefaults: `SELECT column_name, column_default, data_type FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = $1`,
  // Catalog only: existing rows are not touched.
  setColumnDefault: (table, column, value) => `ALTER TABLE ${table} ALTER COLUMN ${column} SET DEFAULT ${value}`,
  // UTC wall time without a zone: a suffix cast to `timestamp` would be silently dropped (docs/time.md).
  encodeTimestamp: formatCanonical,
  timestampParam: (index) => `$${index}::timestamp`,
  comparable: (expr) => expr,
  // microseconds are all `timestamp` holds; infinity, BC and years past 9999 are no instant
  exact: (expr) => postgresDialect.readableInstant(expr),
  // One array per column through unnest: one statement, any number of rows.
  selectRows: (columns) =>
    `SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${ARRAY_TYPE[c.type]}`).join(', ')})`,
  bindRows: (columns, rows) => columns.map((_, i) => rows.map((row) => row[i])),
  jsonDocument: postgresJsonDocument((column) => `subagent_context_json(${column})`),
  // A replacement's backslashes are its escapes (\1, \&): doubled, it is the literal.
  replaceAll: (expr, pattern, replacement) =>
    `regexp_replace(${expr}, ${sqlLiteral(pattern)}, ${sqlLiteral(replacement.replaceAll('\\', '\\\\'))}, 'g')`,
  jsonText: (document, path) => `(${document} #>> ${jsonPath(path)})`,
  jsonString: (document, path) =>
    `(CASE WHEN jsonb_typeof(${document} #> ${jsonPath(path)}) = 'string' THEN ${document} #>> ${jsonPath(path)} END)`,
  // The inner CASE only casts a JSON number, so no document can make the statement fail.
  jsonInteger: (document, path, max) => {
    const number = `(${document} #> ${jsonPath(path)})::numeric`;
    return `(CASE WHEN jsonb_typeof(${document} #> ${jsonPath(path)}) = 'number' THEN CASE WHEN ${number} >= 0 AND ${number} <= ${max} AND ${number} = trunc(${number}) THEN ${number}::bigint END END)`;
  },
  jsonIsTrue: (document, path) => `COALESCE(${document} #> ${jsonPath(path)} = 'true'::jsonb, false)`,
  storedTimestamp: (expr) => expr,
  countInserted: (insert) => [`WITH inserted AS (${insert} RETURNING 1) SELECT COUNT(*) AS inserted FROM inserted`],
  utcDay: (expr) => `to_char(${expr}, 'YYYY-MM-DD')`,
  // Read once per statement where it is selected (the batch upsert's MATERIALIZED CTE), so even a
  // prepared statement's generic plan parses the document once, not once per row.
  jsonParam: (index) => `$${index}::jsonb`,
  jsonMember: (json, label) => `(${json} -> ${label})`,
  jsonElement: (json, index, type) => `((${json} ->> ${index})::${SCALAR_TYPE[type]})`,
  // An integer column holds no text nor fraction on PostgreSQL: only the range is tested.
  readableInteger: (expr, min, max) => `(CASE WHEN ${expr} BETWEEN ${min} AND ${max} THEN ${expr} END)`,
  // NaN and infinity fail the range test; trunc reads numeric, real and double precision alike.
  readableRounded: (expr, min, max) =>
    `(CASE WHEN ${expr} > ${min} - 0.5 AND ${expr} < ${max} + 0.5 THEN CAST(trunc(${expr} + CASE WHEN ${expr} < 0 THEN -0.5 ELSE 0.5 END) AS BIGINT) END)`,
  // `timestamp` holds infinity, -infinity, BC dates and years up to 294276: outside 0001 … 9999, not read.
  readableInstant: (expr) =>
    `(CASE WHEN ${expr} >= '0001-01-01 00:00:00'::timestamp AND ${expr} < '10000-01-01 00:00:00'::timestamp THEN ${expr} END)`,
  byteOrder: (expr) => `(${expr}) COLLATE "C"`,
  // percentile_disc returns the first value whose cumulative share reaches p/100: rank ⌈p/100 · n⌉.
  // An ordered-set aggregate ignores NULL inputs; two of one ORDER BY share one sort per group.
  nearestRank: (value, percent) => `percentile_disc(${percent / 100}) WITHIN GROUP (ORDER BY ${value})`,
};

/**
 * `Dialect.jsonDocument` on PostgreSQL with `parse` (NULL for a text that is not JSON) doing the
 * parsing: our guard function, or what a store without it offers (lib/store/reading.ts). jsonb
 * already keeps a repeated key's last value, so `lastWins` needs nothing here.
 */
export function postgresJsonDocument(parse: (column: string) => string): Dialect['jsonDocument'] {
  return (column) => `(CASE WHEN ${deeperThanSqlite(column)} THEN NULL ELSE ${parse(column)} END)`;
}

/**
 * A condition: the JSON text `column` nests containers deeper than MAX_JSON_DEPTH, the documents
 * SQLite cannot read (json_valid is 0), so PostgreSQL reads none of them either (R2-1 parity), and
 * never tries to parse one (deep enough, jsonb's parser fails the statement: stack depth, 54001).
 * Such a text has more than MAX_JSON_DEPTH `[`/`{`, so it is at least twice as long: the common
 * case costs one length test, a long document one count, and only one with that many brackets the
 * exact test: strings removed, the bracket skeleton peeled one level per round (`[]`, `{}` gone);
 * still not empty after MAX_JSON_DEPTH rounds means deeper (or not JSON at all: NULL anyway).
 */
function deeperThanSqlite(column: string): string {
  const openers = `octet_length(${column}) - octet_length(replace(replace(${column}, '[', ''), '{', ''))`;
  const skeleton = `regexp_replace(regexp_replace(${column}, '"(?:[^"\\\\]|\\\\.)*"', '', 'g'), '[^][{}]', '', 'g')`;
  const peeled = `(WITH RECURSIVE peel(s, n) AS (SELECT ${skeleton}, 0 UNION ALL SELECT regexp_replace(s, '\\[\\]|\\{\\}', '', 'g'), n + 1 FROM peel WHERE s <> '' AND n < ${MAX_JSON_DEPTH + 1}) SELECT MAX(n) FROM peel)`;
  // Nested CASEs: each test runs only where the cheaper one before it holds.
  return `(CASE WHEN octet_length(${column}) <= ${2 * MAX_JSON_DEPTH + 1} THEN false WHEN ${openers} <= ${MAX_JSON_DEPTH} THEN false ELSE ${peeled} > ${MAX_JSON_DEPTH} END)`;
}

/** `'$.a.b'` → `'{a,b}'`, the text[] path of `#>` / `#>>`. */
function jsonPath(path: string): string {
  return `'{${path.replace(/^\$\./, '').split('.').join(',')}}'`;
}
