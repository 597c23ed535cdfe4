import { createHash, randomUUID } from 'node:crypto';
import { COLUMN_NAMES, COLUMNS } from '../columns.js';
import type { Database, Queryable } from '../db/database.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { foldFrames, framesByKey, type KeyFold } from '../merge.js';
import { rowKey, type SubagentWrite } from '../row.js';
import type { Micros } from '../time.js';
import { upsertSql } from './upsert.js';
import { USAGE_COLUMNS } from './usage-table.js';
import { usageRows, usageUpsertSql } from './usage-upsert.js';

/** Per statement and dialect: its text and the name its connections keep it parsed under. */
const sqlByDialect = new Map<string, { sql: string; name: string }>();

function named(kind: string, dialect: Dialect, build: (d: Dialect) => string): { sql: string; name: string } {
  const cacheKey = `${kind}:${dialect.name}`;
  let entry = sqlByDialect.get(cacheKey);
  if (!entry) {
    const sql = build(dialect);
    // The name identifies the text: a process never sends two texts under one name.
    entry = { sql, name: `${kind}_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}` };
    sqlByDialect.set(cacheKey, entry);
  }
  return entry;
}

const batchUpsert = (dialect: Dialect) => named('subagent_upsert', dialect, upsertSql);

/**
 * A batch's writes folded per conflict key (docs/merge.md#batches): each key's frames in arrival
 * order summarised by `foldFrames`, whose merge onto any stored row is what the frames landing one
 * at a time would leave. In conflict-key order: concurrent batches sharing keys lock them in one
 * order and cannot deadlock (40P01) against each other on PostgreSQL.
 */
export function foldBatch(writes: readonly SubagentWrite[]): KeyFold[] {
  const byKey = [...framesByKey(writes, rowKey)];
  byKey.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return byKey.map(([, frames]) => foldFrames(frames));
}

/** One statement of a batch, bound. */
export interface PreparedStatement {
  sql: string;
  params: unknown[];
  /** kept parsed on the connection under this name (QueryOptions.prepareAs) */
  name?: string;
}

/**
 * The statement `writeBatch` issues for `writes`: one upsert of one row per conflict key (see
 * `foldBatch`), its summary beyond the folded row bound as one JSON document (row id → column →
 * [at, first]). Each row's `updated_at` is its `last_observed_at`, the newest observation folded,
 * not the writer's clock: the instant the row's values are as of, the host writer's meaning too
 * (R3-1, docs/merge.md#two-writers-one-row). Pure; `npm run bench` times the database's own limit
 * with exactly this (bench/limit-writer.ts).
 */
export function prepareBatch(dialect: Dialect, writes: readonly SubagentWrite[]): PreparedStatement[] {
  const statements = prepareFolded(dialect, foldBatch(writes));
  // R6-2: the run usage some frames carry, in the same transaction as their rows (runPrepared).
  const usage = usageRows(dialect, writes);
  if (usage.length > 0) {
    const { sql, name } = named('subagent_usage_upsert', dialect, usageUpsertSql);
    statements.push({ sql, name, params: dialect.bindRows(USAGE_COLUMNS, usage) });
  }
  return statements;
}

/** `prepareBatch` for writes already folded (`foldBatch`). */
export function prepareFolded(dialect: Dialect, folds: readonly KeyFold[]): PreparedStatement[] {
  const { sql, name } = batchUpsert(dialect);
  // A row's observed_at, updated_at, last_observed_at and (when it settles) settled_at are mostly
  // one or two instants: formatted once, not four times (it was a fifth of this function's time).
  let lastInstant: Micros | undefined;
  let lastText = '';
  const encode = (us: Micros) => {
    if (us !== lastInstant) {
      lastInstant = us;
      lastText = dialect.encodeTimestamp(us);
    }
    return lastText;
  };
  const side: Record<string, Record<string, [string | null, unknown]>> = {};
  const rows = folds.map(({ row, replace }) => {
    const id = randomUUID();
    const names = Object.keys(replace) as (keyof typeof replace)[];
    if (names.length > 0) {
      const entry: Record<string, [string | null, unknown]> = {};
      for (const name of names) {
        const { at, first } = replace[name]!;
        entry[name] = [at === null ? null : dialect.encodeTimestamp(at), first];
      }
      side[id] = entry;
    }
    return COLUMN_NAMES.map((name) => {
      if (name === 'id') return id;
      if (name === 'updated_at') return encode(row.last_observed_at);
      const value = row[name];
      return typeof value === 'bigint' ? encode(value) : value;
    });
  });
  return [{ sql, name, params: [...dialect.bindRows(COLUMNS, rows), JSON.stringify(side)] }];
}

/**
 * Runs a batch's statements: all of them in one transaction when there is more than one, so the
 * batch lands whole or not at all. On PostgreSQL that transaction is one round trip
 * (`Database.batch`, a pipeline); a single statement needs no BEGIN/COMMIT at all, and a named one
 * is parsed once per connection (docs/ingest.md#one-statement).
 */
export async function runPrepared(db: Queryable, statements: readonly PreparedStatement[]): Promise<void> {
  if (statements.length > 1 && isDatabase(db)) await db.batch(statements);
  else
    for (const { sql, params, name } of statements) await db.query(sql, params, name ? { prepareAs: name } : undefined);
}

/**
 * Persists writes given in arrival order so the table ends exactly as one upsert per write, in
 * order, would leave it: one statement, one row per conflict key (see `foldBatch`). `_clock` is
 * no longer stored (R3-1: `updated_at` is the row's newest observation); the ingest's lag metric
 * uses its clock in memory (lib/ingest/outcome.ts). It stays in the signature until
 * lib/ingest/write-isolated.ts stops passing it.
 */
export async function writeBatch(db: Queryable, writes: readonly SubagentWrite[], _clock?: Micros): Promise<void> {
  if (writes.length === 0) return;
  await runPrepared(db, prepareBatch(db.dialect, writes));
}

function isDatabase(db: Queryable): db is Database {
  return typeof (db as Partial<Database>).transaction === 'function';
}
