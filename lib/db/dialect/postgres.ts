import type { Column, ColumnType } from '../../columns.js';
import { formatCanonical } from '../../time.js';
import type { Dialect } from './dialect.js';

const ARRAY_TYPE: Record<ColumnType, string> = {
  text: 'text[]',
  integer: 'integer[]',
  bigint: 'bigint[]',
  timestamp: 'timestamp[]',
};

export const postgresDialect: Dialect = {
  name: 'postgres',
  // PostgreSQL 15 has no pg_input_is_valid/IS JSON, and a failed ::jsonb cast aborts the whole
  // statement; this guard turns a malformed metadata document into NULL instead (SPEC §8.5).
  extraDdl: [
    `CREATE OR REPLACE FUNCTION subagent_context_json(doc text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
BEGIN
  IF doc IS NULL OR doc = '' THEN RETURN NULL; END IF;
  RETURN doc::jsonb;
EXCEPTION WHEN others THEN RETURN NULL;
END
$fn$`,
  ],
  // UTC wall time without a zone: a suffix cast to `timestamp` would be silently dropped (SPEC §10).
  encodeTimestamp: formatCanonical,
  timestampParam: (index) => `$${index}::timestamp`,
  comparable: (expr) => expr,
  // One array per column through unnest: one statement, any number of rows.
  selectRows: (columns) =>
    `SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${ARRAY_TYPE[c.type]}`).join(', ')})`,
  bindRows: (columns, rows) => columns.map((_, i) => rows.map((row) => row[i])),
  jsonDocument: (column) => `subagent_context_json(${column})`,
  jsonText: (document, path) => `(${document} #>> '{${path.replace(/^\$\./, '').split('.').join(',')}}')`,
};
