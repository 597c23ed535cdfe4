import { COLUMNS, CONFLICT_KEY, TABLE, type MergeRule } from '../columns.js';
import type { Dialect } from '../db/dialect/dialect.js';

/**
 * Each merge rule as SQL over the stored row (`t`) and the incoming one (`excluded`). Every SET
 * expression reads the row as it was before this statement, as `mergeWrite` does in memory.
 */
const RULE_SQL: Record<Exclude<MergeRule, 'keep'>, (column: string) => string> = {
  fill: (c) => `COALESCE(${TABLE}.${c}, excluded.${c})`,
  replace: (c) => `COALESCE(excluded.${c}, ${TABLE}.${c})`,
  replaceUntilSettled: (c) =>
    `CASE WHEN ${TABLE}.settled_at IS NOT NULL THEN ${TABLE}.${c} ELSE COALESCE(excluded.${c}, ${TABLE}.${c}) END`,
  sticky: (c) => `CASE WHEN ${TABLE}.${c} = 1 OR excluded.${c} = 1 THEN 1 ELSE 0 END`,
  overwrite: (c) => `excluded.${c}`,
};

const conflictClause = `ON CONFLICT (${CONFLICT_KEY.join(', ')}) DO UPDATE SET\n  ${COLUMNS.filter(
  (c) => c.merge !== 'keep',
)
  .map((c) => `${c.name} = ${RULE_SQL[c.merge as Exclude<MergeRule, 'keep'>](c.name)}`)
  .join(',\n  ')}`;

/**
 * The one atomic upsert (docs/merge.md#merging-onto-an-existing-row): every row of a batch in one statement, the merge rules in the
 * conflict clause, never a read-then-write. Rows must have distinct conflict keys (fold first).
 */
export function upsertSql(dialect: Dialect): string {
  return `INSERT INTO ${TABLE} (${COLUMNS.map((c) => c.name).join(', ')})\n${dialect.selectRows(COLUMNS)}\n${conflictClause}`;
}
