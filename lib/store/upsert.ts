import { COLUMNS, CONFLICT_KEY, type MergeRule, NEWEST_COLUMNS, TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';

const stored = (c: string) => `${TABLE}.${c}`;
const incoming = (c: string) => `excluded.${c}`;

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
 * `expr` compared with every `newest` column of the stored row (`<` for the R2-7/R3-1 test: the
 * frame is older than the row's newest applied observation; `>`: newer than all of it), as
 * instants, microsecond-exact on both dialects.
 */
function againstNewest(dialect: Dialect, expr: string, op: '<' | '>'): string {
  const value = dialect.comparable(expr);
  const join = op === '<' ? ' OR ' : ' AND ';
  return `(${NEWEST_COLUMNS.map((c) => `${value} ${op} ${dialect.comparable(storedNewest(c))}`).join(join)})`;
}

/**
 * Each merge rule as SQL over the stored row and the incoming frame (`excluded`), the same rules
 * as `mergeValue` in lib/merge.ts (docs/merge.md). Every SET expression reads the row as it was
 * before this statement, as `mergeWrite` does in memory.
 */
function ruleSql(rule: Exclude<MergeRule, 'keep'>, c: string, older: string, newest: string, d: Dialect): string {
  const replace = `CASE WHEN ${older} THEN COALESCE(${stored(c)}, ${incoming(c)}) ELSE COALESCE(${incoming(c)}, ${stored(c)}) END`;
  switch (rule) {
    case 'fill':
      return `COALESCE(${stored(c)}, ${incoming(c)})`;
    case 'replace':
      return replace;
    case 'replaceUntilSettled':
      return `CASE WHEN ${stored('settled_at')} IS NOT NULL THEN ${stored(c)} WHEN ${incoming('settled_at')} IS NOT NULL THEN ${incoming(c)} ELSE ${replace} END`;
    case 'sticky':
      return `CASE WHEN ${stored(c)} = 1 OR ${incoming(c)} = 1 THEN 1 ELSE 0 END`;
    case 'newest':
      // The greater of the row's newest observation and the frame's (a tie keeps the row's).
      return `CASE WHEN ${againstNewest(d, incoming('observed_at'), '>')} THEN ${incoming('observed_at')} ELSE ${newest} END`;
  }
}

function conflictClause(dialect: Dialect): string {
  const older = againstNewest(dialect, incoming('observed_at'), '<');
  const newest = newestSql(dialect);
  const sets = COLUMNS.filter((c) => c.merge !== 'keep').map(
    (c) => `${c.name} = ${ruleSql(c.merge as Exclude<MergeRule, 'keep'>, c.name, older, newest, dialect)}`,
  );
  return `ON CONFLICT (${CONFLICT_KEY.join(', ')}) DO UPDATE SET\n  ${sets.join(',\n  ')}`;
}

/**
 * The one atomic upsert (docs/merge.md): many rows in one statement, the merge rules in the
 * conflict clause, never a read-then-write. Rows must have distinct conflict keys, each one frame,
 * with `updated_at` = `last_observed_at` = the frame's observed_at (R3-1).
 */
export function upsertSql(dialect: Dialect): string {
  return `INSERT INTO ${TABLE} (${COLUMNS.map((c) => c.name).join(', ')})\n${dialect.selectRows(COLUMNS)}\n${conflictClause(dialect)}`;
}
