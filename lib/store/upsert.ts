import { COLUMNS, CONFLICT_KEY, type MergeRule, NEWEST_COLUMNS, TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';

const stored = (c: string) => `${TABLE}.${c}`;
const incoming = (c: string) => `excluded.${c}`;
/** The per-key summary's columns (`summary.at_<c>`, `summary.first_<c>`), see `summarySelect`. */
const summaryAt = (c: string) => `summary.at_${c}`;
const summaryFirst = (c: string) => `summary.first_${c}`;

const REPLACEABLE = COLUMNS.filter((c) => c.merge === 'replace' || c.merge === 'replaceUntilSettled');

/** A `newest` column of the stored row; NULL (a row only the host's writer touched) reads as observed_at. */
const storedNewest = (c: string) => `COALESCE(${stored(c)}, ${stored('observed_at')})`;

/**
 * The stored row's newest applied observation (R2-7, R3-1, `newestObservation` in lib/merge.ts):
 * the greatest of its `newest` columns, compared as instants, as the stored value itself (so a
 * host's sub-microsecond digits survive). A tie keeps the earlier column's value.
 */
function newestSql(dialect: Dialect): string {
  return NEWEST_COLUMNS.map(storedNewest).reduce(
    (acc, next) => `CASE WHEN ${dialect.comparable(next)} > ${dialect.comparable(acc)} THEN ${next} ELSE ${acc} END`,
  );
}

/**
 * `expr` compared with every `newest` column of the stored row (`<`: older than the row's newest
 * applied observation; `>`: newer than all of it), as instants, microsecond-exact on both dialects.
 */
function againstNewest(dialect: Dialect, expr: string, op: '<' | '>'): string {
  const value = dialect.comparable(expr);
  const join = op === '<' ? ' OR ' : ' AND ';
  return `(${NEWEST_COLUMNS.map((c) => `${value} ${op} ${dialect.comparable(storedNewest(c))}`).join(join)})`;
}

/**
 * Each merge rule as SQL over the stored row, the incoming folded row (`excluded`) and its key's
 * summary, the same rules as `mergeFold` in lib/merge.ts (docs/merge.md#batches). Every SET
 * expression reads the row as it was before this statement.
 */
function ruleSql(rule: Exclude<MergeRule, 'keep'>, c: string, d: Dialect, newest: string): string {
  // The closed form: the value of the batch's last record-setting frame that has one, when that
  // frame is not older than the row; else the stored value, or the batch's first value.
  const replace = `CASE WHEN ${summaryAt(c)} IS NOT NULL AND NOT ${againstNewest(d, summaryAt(c), '<')} THEN ${incoming(c)} ELSE COALESCE(${stored(c)}, ${summaryFirst(c)}) END`;
  switch (rule) {
    case 'fill':
      return `COALESCE(${stored(c)}, ${incoming(c)})`;
    case 'replace':
      return replace;
    case 'replaceUntilSettled':
      // Frozen once settled; else the status of the batch's frame that settles the row, if any.
      return `CASE WHEN ${stored('settled_at')} IS NOT NULL THEN ${stored(c)} WHEN ${incoming('settled_at')} IS NOT NULL THEN ${incoming(c)} ELSE ${replace} END`;
    case 'sticky':
      return `CASE WHEN ${stored(c)} = 1 OR ${incoming(c)} = 1 THEN 1 ELSE 0 END`;
    case 'newest':
      // The greater of the row's newest observation and the batch's (a tie keeps the row's).
      return `CASE WHEN ${againstNewest(d, incoming('last_observed_at'), '>')} THEN ${incoming('last_observed_at')} ELSE ${newest} END`;
  }
}

/**
 * The key's summary beyond the folded row (`KeyFold.replace`), one row: for each replaceable
 * column the observation of the last record-setting frame with a value (`at_<c>`) and the first
 * value (`first_<c>`), read from the side document (bound JSON: row id → column → [at, first],
 * parsed once per statement in the `side_doc` CTE) where the key has an entry, else what one frame
 * would say. Fenced, so each is computed once.
 */
function summarySelect(d: Dialect): string {
  const entry = (c: string) => d.jsonMember('side.doc', `'${c}'`);
  const columns = REPLACEABLE.flatMap((c) => [
    `CASE WHEN ${entry(c.name)} IS NULL THEN (CASE WHEN ${incoming(c.name)} IS NOT NULL THEN ${incoming('last_observed_at')} END) ELSE ${d.jsonElement(entry(c.name), 0, 'timestamp')} END AS at_${c.name}`,
    `CASE WHEN ${entry(c.name)} IS NULL THEN ${incoming(c.name)} ELSE ${d.jsonElement(entry(c.name), 1, c.type)} END AS first_${c.name}`,
  ]);
  const side = `SELECT ${d.jsonMember('side_doc.doc', incoming('id'))} AS doc FROM side_doc ${d.fence}`;
  return `SELECT ${columns.join(', ')} FROM (${side}) AS side ${d.fence}`;
}

function conflictClause(dialect: Dialect): string {
  const newest = newestSql(dialect);
  const merged = COLUMNS.filter((c) => c.merge !== 'keep');
  const values = merged.map((c) => ruleSql(c.merge as Exclude<MergeRule, 'keep'>, c.name, dialect, newest));
  return `ON CONFLICT (${CONFLICT_KEY.join(', ')}) DO UPDATE SET\n  (${merged.map((c) => c.name).join(', ')}) = (SELECT\n  ${values.join(',\n  ')}\n  FROM (${summarySelect(dialect)}) AS summary)`;
}

/**
 * The upsert of one batch (docs/merge.md#batches): one row per conflict key, the key's frames
 * folded (`foldFrames` in lib/merge.ts; `updated_at` = `last_observed_at` = the fold's newest
 * observation, R3-1), from `source` (the dialect's multi-row SELECT, or one VALUES row); the merge
 * rules in the conflict clause, which reads the stored row, the folded row and the key's summary
 * (the JSON document bound as `$sideParam`, selected once as the MATERIALIZED `side_doc` CTE so
 * a prepared statement's generic plan parses it once too), never a read-then-write.
 */
export function upsertSqlFrom(dialect: Dialect, source: string, sideParam: number): string {
  return `WITH side_doc AS MATERIALIZED (SELECT ${dialect.jsonParam(sideParam)} AS doc)\nINSERT INTO ${TABLE} (${COLUMNS.map((c) => c.name).join(', ')})\n${source}\n${conflictClause(dialect)}`;
}

/** The parameter number of the side document in `upsertSql`: right after the rows' own. */
export function sideParamIndex(dialect: Dialect): number {
  return dialect.bindRows(COLUMNS, []).length + 1;
}

/** The batch upsert: rows from `dialect.selectRows`, then the side document (`sideParamIndex`). */
export function upsertSql(dialect: Dialect): string {
  return upsertSqlFrom(dialect, dialect.selectRows(COLUMNS), sideParamIndex(dialect));
}
