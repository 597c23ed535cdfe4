import type { Dialect } from '../db/dialect/dialect.js';
import { framesByKey } from '../merge.js';
import { rowKey, type SubagentWrite } from '../row.js';
import { foldUsage } from '../usage-write.js';
import { USAGE_COLUMNS, USAGE_KEY, USAGE_TABLE, USAGE_WRITTEN_AT } from './usage-table.js';

const stored = (c: string) => `${USAGE_TABLE}.${c}`;

/**
 * R6-2's merge as SQL, `supersedes` in lib/usage-write.ts: the incoming usage replaces the stored
 * one as a whole (every column, so no sum is mixed from two observations) when it is not older,
 * unless the stored usage is final and the incoming is not. Otherwise the row stays as it is.
 * A row written is stamped with the database's clock (USAGE_WRITTEN_AT, R6-7).
 */
/** R6-7: the database's clock as UTC text of the column's form, for USAGE_WRITTEN_AT. */
const WRITE_CLOCK: Record<Dialect['name'], string> = {
  postgres: "(now() AT TIME ZONE 'UTC')",
  sqlite: "strftime('%Y-%m-%d %H:%M:%f', 'now')",
};

export function usageUpsertSql(dialect: Dialect): string {
  const assigned = [
    ...USAGE_COLUMNS.filter((c) => !(USAGE_KEY as readonly string[]).includes(c.name)),
    { name: USAGE_WRITTEN_AT },
  ];
  // `WHERE true`: SQLite's parser needs it before ON CONFLICT in INSERT … SELECT.
  return `INSERT INTO ${USAGE_TABLE} (${USAGE_COLUMNS.map((c) => c.name).join(', ')}, ${USAGE_WRITTEN_AT})
SELECT given.*, ${WRITE_CLOCK[dialect.name]} FROM (${dialect.selectRows(USAGE_COLUMNS)}) given WHERE true
ON CONFLICT (${USAGE_KEY.join(', ')}) DO UPDATE SET
  ${assigned.map((c) => `${c.name} = excluded.${c.name}`).join(',\n  ')}
WHERE ${dialect.comparable('excluded.observed_at')} >= ${dialect.comparable(stored('observed_at'))}
  AND NOT (COALESCE(${stored('complete')}, 0) = 1 AND COALESCE(excluded.complete, 0) <> 1)`;
}

/**
 * One usage row per subagent key that a write of the batch carries usage for: the key's usages
 * folded in arrival order (`foldUsage`), in key order like the rows' upsert. Bound as the
 * dialect's rows; empty when no write carries usage.
 */
export function usageRows(dialect: Dialect, writes: readonly SubagentWrite[]): unknown[][] {
  const byKey = [
    ...framesByKey(
      writes.filter((w) => w.usage !== undefined),
      rowKey,
    ),
  ];
  byKey.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return byKey.map(([, frames]) => {
    const usage = foldUsage(frames.map((f) => f.usage!))!;
    // the key's own identity (the rows' conflict key), then the usage's columns
    const values: Record<string, unknown> = {
      ...frames[0]!,
      ...usage,
      observed_at: dialect.encodeTimestamp(usage.observed_at),
    };
    return USAGE_COLUMNS.map((c) => values[c.name]);
  });
}
