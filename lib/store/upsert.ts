import { COLUMNS, CONFLICT_KEY, type MergeRule, TABLE } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';

const stored = (c: string) => `${TABLE}.${c}`;
const incoming = (c: string) => `excluded.${c}`;

/** The row's newest applied observation; NULL (a row the host wrote) reads as observed_at (R2-7). */
const NEWEST = `COALESCE(${stored('last_observed_at')}, ${stored('observed_at')})`;

/**
 * Each merge rule as SQL over the stored row and the incoming frame (`excluded`), the same rules
 * as `mergeValue` in lib/merge.ts (docs/merge.md). Every SET expression reads the row as it was
 * before this statement, as `mergeWrite` does in memory. `older` is the R2-7 test: the frame is
 * older than the row's newest applied observation, microsecond-exact on both dialects.
 */
function ruleSql(rule: Exclude<MergeRule, 'keep'>, c: string, older: string): string {
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
    case 'overwrite':
      return incoming(c);
    case 'newest':
      return `CASE WHEN ${older} THEN ${NEWEST} ELSE ${incoming(c)} END`;
  }
}

function conflictClause(dialect: Dialect): string {
  const older = `${dialect.comparable(incoming('observed_at'))} < ${dialect.comparable(NEWEST)}`;
  const sets = COLUMNS.filter((c) => c.merge !== 'keep').map(
    (c) => `${c.name} = ${ruleSql(c.merge as Exclude<MergeRule, 'keep'>, c.name, older)}`,
  );
  return `ON CONFLICT (${CONFLICT_KEY.join(', ')}) DO UPDATE SET\n  ${sets.join(',\n  ')}`;
}

/**
 * The one atomic upsert (docs/merge.md): many rows in one statement, the merge rules in the
 * conflict clause, never a read-then-write. Rows must have distinct conflict keys, each one frame.
 */
export function upsertSql(dialect: Dialect): string {
  return `INSERT INTO ${TABLE} (${COLUMNS.map((c) => c.name).join(', ')})\n${dialect.selectRows(COLUMNS)}\n${conflictClause(dialect)}`;
}
