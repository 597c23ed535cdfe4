import { formatHostSqlite, utcTextOfOffsetInstant } from '../../time.js';
import { type Dialect, type LastWins, sqlLiteral } from './dialect.js';

/**
 * Any stored width or separator → fixed-width `YYYY-MM-DD HH:MM:SS.f…f` with `digits` fraction
 * digits (further ones dropped), which orders and compares as text. Offsets are always UTC here
 * (converted before binding). Plain SQL on purpose: idx_subagents_observed_at is built on it, and
 * the host's own writer must be able to maintain that index (no function of our connection in it);
 * host text with another offset is read by readInstant (`readableInstant`).
 */
const fixedWidth = (expr: string, digits: number) =>
  `(substr(replace(${expr}, 'T', ' '), 1, 19) || '.' || substr(` +
  `CASE WHEN substr(${expr}, 20, 1) = '.' THEN replace(replace(substr(${expr}, 21), '+00:00', ''), 'Z', '') ELSE '' END` +
  ` || '${'0'.repeat(digits)}', 1, ${digits}))`;

/**
 * R4-3: a stored value SQLite's date functions and lib/time.ts read as one UTC instant, in
 * `comparable`'s fixed width (six fraction digits, further ones dropped), else null: text
 * `YYYY-MM-DD HH:MM:SS` (or `T`) with a real date (no 30 February) in years 0001 … 9999, an hour
 * of at most 23, at most nine fraction digits, and `Z`, `+00:00` or no offset, or any other
 * `±HH:MM` offset, converted to UTC (lib/time.ts utcTextOfOffsetInstant). Anything else (a
 * number, a blob, a NUL, a leap second, year 10000, '') is not an instant.
 *
 * R4-12: a function of the connection, not SQL: the same test written in SQL (strftime, GLOB,
 * substr) cost ~1.8 µs a value, this ~0.33 (0.14 of it the call), and the report reads every
 * row's observed_at and settled_at and every cost event's occurred_at.
 * test/lib/db/dialect/sqlite-instant.test.ts holds that SQL as the oracle this must equal for any
 * text.
 */
function readInstant(value: unknown): string | null {
  // R4-12: the regex tests, then the fields are read as digits in place: capturing them (exec,
  // Number per field) cost 0.75 µs a value, this 0.33 with the call
  if (typeof value !== 'string') return null;
  // another offset (issue 48: `2026-12-03 18:20:00+02:00` is 16:20 UTC): lib/time.ts converts it
  if (!INSTANT_TEXT.test(value)) return utcTextOfOffsetInstant(value);
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (year < 1 || days === undefined || day < 1 || day > days) return null;
  if (digits(value, 11, 2) > 23 || digits(value, 14, 2) > 59 || digits(value, 17, 2) > 59) return null;
  // the fraction's digits run from 20 to the offset (or the end), when a '.' is at 19
  let end = 19;
  if (value.charCodeAt(19) === DOT) {
    end = 20;
    while (end < value.length && isDigit(value.charCodeAt(end))) end++;
  }
  // ' ' between date and time (the host's own form keeps its text), six fraction digits
  const text = value.charCodeAt(10) === SPACE ? value : `${value.slice(0, 10)} ${value.slice(11)}`;
  if (end === 19) return `${text.slice(0, 19)}.000000`;
  return end >= 26 ? text.slice(0, 26) : text.slice(0, end) + '000000'.slice(end - 20);
}

/**
 * `Dialect.exact` on SQLite: readInstant's UTC instant with the fraction's seventh to ninth digits
 * kept (the host's driver writes nanoseconds; readInstant keeps six), `YYYY-MM-DD HH:MM:SS.fffffffff`,
 * which orders as text as the instants do; null for what is no instant. An offset moves whole
 * minutes, never the digits past the microsecond, so they are the stored text's own.
 */
function readExactInstant(value: unknown): string | null {
  const instant = readInstant(value);
  if (instant === null) return null;
  const text = value as string;
  let end = 20;
  if (text.charCodeAt(19) === DOT) while (end < text.length && end < 29 && isDigit(text.charCodeAt(end))) end++;
  return instant + text.slice(26, Math.max(end, 26)).padEnd(3, '0');
}

const DOT = 46;
const SPACE = 32;
const ZERO = 48;
const isDigit = (code: number) => code >= ZERO && code <= ZERO + 9;

/** The number `count` ASCII digits at `at` spell (the regex has checked they are digits). */
function digits(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) n = n * 10 + (text.charCodeAt(i) - ZERO);
  return n;
}

const INSTANT_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)?$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The nearest-rank percentiles (Dialect.nearestRank) as an aggregate of the connection: SQLite's
 * own percentile_disc picks rank ⌊(n − 1) · p⌋ + 1 (9 of 10 at p95, not 10). R4-12: it rides the
 * figures' GROUP BY; numbering each level's sorted rows with window functions took ~2 s of the
 * page at 1M messages. It ranks every percentile the statement reads (`percents`, '50,95') in one
 * sort and returns them as a JSON array (SQLite computes one aggregate written twice once, so
 * each percentile reads its element of the same result). NULL and non-numbers are not ranked (as
 * PostgreSQL's ignores NULL).
 */
interface Ranked {
  values: number[];
  percents: string;
}
const nearestRanks = {
  start: (): Ranked => ({ values: [], percents: '' }),
  step: (acc: Ranked, value: unknown, percents: unknown) => {
    if (typeof value === 'number') acc.values.push(value);
    acc.percents = String(percents);
  },
  result: ({ values, percents }: Ranked) => {
    if (values.length === 0) return null;
    // a typed array sorts numbers as numbers, several times faster than a comparator
    const sorted = Float64Array.from(values).sort();
    // rank ⌈p · n / 100⌉ in integer arithmetic (1-based)
    const rank = (p: number) => sorted[Math.floor((p * sorted.length + 99) / 100) - 1]!;
    return JSON.stringify(percents.split(',').map((p) => rank(Number(p))));
  },
};

/**
 * Functions this dialect's SQL calls that SQLite lacks, registered on every connection
 * (lib/db/sqlite.ts). The JSON and pattern ones run only where a cheap SQL test found a rare
 * document first; the instant reader runs on every timestamp a report reads (readInstant).
 */
export const SQLITE_FUNCTIONS: Readonly<Record<string, (...args: unknown[]) => unknown>> = {
  subagent_context_replace_all: replaceAllMatches,
  subagent_context_json_last_wins: jsonLastWins,
  subagent_context_instant: readInstant,
  subagent_context_exact_instant: readExactInstant,
};

/** Aggregates this dialect's SQL calls that SQLite lacks, registered beside SQLITE_FUNCTIONS. */
export const SQLITE_AGGREGATES = { subagent_context_nearest_ranks: nearestRanks } as const;

const patterns = new Map<string, RegExp>();

/** `Dialect.replaceAll` on SQLite: the pattern read by JavaScript, as PostgreSQL's regexp_replace reads it. */
function replaceAllMatches(text: unknown, pattern: unknown, replacement: unknown): unknown {
  if (typeof text !== 'string' || typeof pattern !== 'string' || typeof replacement !== 'string') return text;
  let regexp = patterns.get(pattern);
  if (regexp === undefined) {
    regexp = new RegExp(pattern, 'g');
    patterns.set(pattern, regexp);
  }
  return text.replace(regexp, () => replacement);
}

/**
 * A JSON text with every repeated key reduced to its last value, as JSON.parse and PostgreSQL's
 * jsonb read it (SQLite's json_extract takes the first). Numbers pass through JavaScript's: an
 * integer beyond 2^53 or a `1.0` is re-written (no value this project reads is one).
 */
function jsonLastWins(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/**
 * A condition: an object of the valid JSON text `column` repeats a key (json_tree: one walk of the
 * document, not one parse per object as json_each would need). Any object, not only the ones read:
 * the re-read then keeps every last value, as jsonb does.
 */
const repeatsKey = (column: string) =>
  `EXISTS (SELECT 1 FROM json_tree(${column}) WHERE key IS NOT NULL GROUP BY parent, key HAVING COUNT(*) > 1)`;

/**
 * The text `column` when it is JSON, else NULL; read last-wins where a key repeats (see Dialect).
 * json_valid is 0 for a document nested deeper than 1,000 levels (MAX_JSON_DEPTH) already.
 */
function jsonDocument(column: string, lastWins?: LastWins): string {
  if (lastWins === undefined) return `(CASE WHEN json_valid(${column}) THEN ${column} END)`;
  const repeats = repeatsKey(column);
  return `(CASE WHEN NOT json_valid(${column}) THEN NULL WHEN NOT (${lastWins.relevant}) THEN ${column} WHEN ${repeats} THEN subagent_context_json_last_wins(${column}) ELSE ${column} END)`;
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  // A subquery with a LIMIT is never flattened into its parent.
  fence: 'LIMIT -1 OFFSET 0',
  extraDdl: [],
  singleColumnIndexes: `SELECT il.name AS index_name, ii.name AS column_name
FROM pragma_index_list($1) il JOIN pragma_index_info(il.name) ii
WHERE il.partial = 0 AND ii.name IS NOT NULL AND (SELECT COUNT(*) FROM pragma_index_info(il.name)) = 1`,
  // SQLite cannot rename an index: build the new one, then drop the old (the table is untouched).
  renameIndex: (from, _to, create) => [create, `DROP INDEX IF EXISTS ${from}`],
  columnDefaults: `SELECT name AS column_name, dflt_value AS column_default, type AS data_type FROM pragma_table_info($1)`,
  // SQLite changes a DEFAULT only by rebuilding the table, which migrate never does.
  setColumnDefault: () => undefined,
  // The host's own text form, so rows written here read like the host's (docs/time.md).
  encodeTimestamp: formatHostSqlite,
  timestampParam: (index) => `$${index}`,
  // Any stored width or separator → `YYYY-MM-DD HH:MM:SS.ffffff`: orders and compares to the microsecond.
  comparable: (expr) => fixedWidth(expr, 6),
  // The host's driver writes up to nine digits (`…57.3388988+00:00`): all of them (readExactInstant).
  exact: (expr) => `subagent_context_exact_instant(${expr})`,
  // One JSON array of row arrays through json_each: one statement, any number of rows.
  // `WHERE true` disambiguates INSERT … SELECT … ON CONFLICT for SQLite's parser.
  selectRows: (columns) => `SELECT ${columns.map((_, i) => `value ->> ${i}`).join(', ')} FROM json_each($1) WHERE true`,
  bindRows: (_columns, rows) => [JSON.stringify(rows)],
  jsonDocument,
  replaceAll: (expr, pattern, replacement) =>
    `subagent_context_replace_all(${expr}, ${sqlLiteral(pattern)}, ${sqlLiteral(replacement)})`,
  // json_extract yields SQL integers/reals for JSON numbers; TEXT matches PostgreSQL's #>>.
  jsonText: (document, path) => `CAST(json_extract(${document}, '${path}') AS TEXT)`,
  jsonString: (document, path) =>
    `(CASE WHEN json_type(${document}, '${path}') = 'text' THEN json_extract(${document}, '${path}') END)`,
  // json_type tells 1.0 ('real') from "1" ('text'); a real that is a whole number counts, as in JS.
  jsonInteger: (document, path, max) => {
    const value = `json_extract(${document}, '${path}')`;
    return `(CASE WHEN json_type(${document}, '${path}') IN ('integer', 'real') AND ${value} >= 0 AND ${value} <= ${max} AND ${value} = CAST(${value} AS INTEGER) THEN CAST(${value} AS INTEGER) END)`;
  },
  jsonIsTrue: (document, path) => `COALESCE(json_type(${document}, '${path}') = 'true', 0)`,
  // the instant read (any offset, readInstant; NULL when none) with the fraction's trailing zeros
  // trimmed and +00:00: the host's form
  storedTimestamp: (expr) => `(rtrim(rtrim(subagent_context_instant(${expr}), '0'), '.') || '+00:00')`,
  // better-sqlite3 runs one statement per call; changes() reads the same connection's last count.
  countInserted: (insert) => [insert, 'SELECT changes() AS inserted'],
  jsonParam: (index) => `$${index}`,
  // A label as a quoted path: `->` would read a bare label that starts with a digit as a path.
  jsonMember: (json, label) => `(${json} -> ('$."' || ${label} || '"'))`,
  jsonElement: (json, index) => `(${json} ->> ${index})`,
  utcDay: (expr) => `substr(${sqliteDialect.comparable(expr)}, 1, 10)`,
  // Any value can sit in any column (type affinity): only an SQL integer in range is read.
  readableInteger: (expr, min, max) =>
    `(CASE WHEN typeof(${expr}) = 'integer' AND ${expr} BETWEEN ${min} AND ${max} THEN ${expr} END)`,
  // A REAL is any column's fraction (an INTEGER column keeps 1.5 as REAL); CAST truncates toward zero.
  readableRounded: (expr, min, max) =>
    `(CASE typeof(${expr}) WHEN 'integer' THEN CASE WHEN ${expr} BETWEEN ${min} AND ${max} THEN ${expr} END WHEN 'real' THEN CASE WHEN ${expr} > ${min} - 0.5 AND ${expr} < ${max} + 0.5 THEN CAST(${expr} + CASE WHEN ${expr} < 0 THEN -0.5 ELSE 0.5 END AS INTEGER) END END)`,
  readableInstant: (expr) => `subagent_context_instant(${expr})`,
  // BINARY, SQLite's default collation, is byte order already.
  byteOrder: (expr) => expr,
  nearestRank: (value, percent, percents) =>
    `(subagent_context_nearest_ranks(${value}, '${percents.join(',')}') ->> ${percents.indexOf(percent)})`,
};
