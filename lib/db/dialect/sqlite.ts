import type { Column } from '../../columns.js';
import { formatHostSqlite } from '../../time.js';
import type { Dialect } from './dialect.js';

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  extraDdl: [],
  // The host's own text form, so rows written here read like the host's (SPEC §10).
  encodeTimestamp: formatHostSqlite,
  timestampParam: (index) => `$${index}`,
  // Any stored width or separator → fixed-width `YYYY-MM-DD HH:MM:SS.ffffff`, which orders and
  // compares as text to the microsecond. Offsets are always UTC here (converted before binding).
  comparable: (expr) =>
    `(substr(replace(${expr}, 'T', ' '), 1, 19) || '.' || substr(` +
    `CASE WHEN substr(${expr}, 20, 1) = '.' THEN replace(replace(substr(${expr}, 21), '+00:00', ''), 'Z', '') ELSE '' END` +
    ` || '000000', 1, 6))`,
  // One JSON array of row arrays through json_each: one statement, any number of rows.
  // `WHERE true` disambiguates INSERT … SELECT … ON CONFLICT for SQLite's parser.
  selectRows: (columns) =>
    `SELECT ${columns.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each($1) WHERE true`,
  bindRows: (_columns, rows) => [JSON.stringify(rows)],
  jsonDocument: (column) => `(CASE WHEN json_valid(${column}) THEN ${column} END)`,
  // json_extract yields SQL integers/reals for JSON numbers; TEXT matches PostgreSQL's #>>.
  jsonText: (document, path) => `CAST(json_extract(${document}, '${path}') AS TEXT)`,
};
