import { randomUUID } from 'node:crypto';
import { COLUMN_NAMES, COLUMNS } from '../columns.js';
import type { Database, Queryable } from '../db/database.js';
import type { Dialect } from '../db/dialect/dialect.js';
import { rowKey, type SubagentWrite } from '../row.js';
import type { Micros } from '../time.js';
import { upsertSql } from './upsert.js';

const sqlByDialect = new Map<string, string>();

/**
 * The writes in rounds: round k holds the k-th write of every conflict key (arrival order), each
 * round in conflict-key order. Frames of one key cannot be folded into one row beforehand: whether
 * a frame is older than the row's newest observation, and so only fills NULLs (R2-7,
 * docs/merge.md), depends on the stored row, which only the database sees. One round per frame of
 * the busiest key: a FIFO batch of 10 rarely holds two frames of one subagent.
 */
export function rounds(writes: readonly SubagentWrite[]): { key: string; write: SubagentWrite }[][] {
  const depth = new Map<string, number>();
  const out: { key: string; write: SubagentWrite }[][] = [];
  for (const write of writes) {
    const key = rowKey(write);
    const k = depth.get(key) ?? 0;
    depth.set(key, k + 1);
    out[k] ??= [];
    out[k].push({ key, write });
  }
  // Conflict-key order: concurrent batches sharing keys lock them in one order and cannot
  // deadlock (40P01) against each other on PostgreSQL.
  for (const round of out) round.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return out;
}

/** One statement of a batch, bound. */
export interface PreparedStatement {
  sql: string;
  params: unknown[];
}

/**
 * The statements `writeBatch` issues for `writes`: one upsert per round (see `rounds`), bound.
 * Each row's `updated_at` is its `last_observed_at`, the frame's observed_at, not the writer's
 * clock: the instant the row's values are as of, the host writer's meaning too (R3-1,
 * docs/merge.md#two-writers-one-row). Pure; `npm run bench` times the database's own limit with
 * exactly these (bench/limit-writer.ts).
 */
export function prepareBatch(dialect: Dialect, writes: readonly SubagentWrite[]): PreparedStatement[] {
  let sql = sqlByDialect.get(dialect.name);
  if (!sql) {
    sql = upsertSql(dialect);
    sqlByDialect.set(dialect.name, sql);
  }
  const statement = sql;
  // A row's observed_at, updated_at, last_observed_at and (when it settles) settled_at are mostly
  // one instant: formatted once, not four times (it was a fifth of this function's time).
  let lastInstant: Micros | undefined;
  let lastText = '';
  const encode = (us: Micros) => {
    if (us !== lastInstant) {
      lastInstant = us;
      lastText = dialect.encodeTimestamp(us);
    }
    return lastText;
  };
  return rounds(writes).map((round) => {
    const rows = round.map(({ write }) =>
      COLUMN_NAMES.map((name) => {
        if (name === 'id') return randomUUID();
        if (name === 'updated_at') return encode(write.last_observed_at);
        const value = write[name];
        return typeof value === 'bigint' ? encode(value) : value;
      }),
    );
    return { sql: statement, params: dialect.bindRows(COLUMNS, rows) };
  });
}

/**
 * Runs a batch's statements: all of them in one transaction when there is more than one, so the
 * batch lands whole or not at all. On PostgreSQL that transaction is one round trip
 * (`Database.batch`, a pipeline); a single statement needs no BEGIN/COMMIT at all.
 */
export async function runPrepared(db: Queryable, statements: readonly PreparedStatement[]): Promise<void> {
  if (statements.length > 1 && isDatabase(db)) await db.batch(statements);
  else for (const { sql, params } of statements) await db.query(sql, params);
}

/**
 * Persists writes given in arrival order so the table ends exactly as one upsert per write, in
 * order, would leave it: one statement per round (see `rounds`), all of them in one transaction
 * when there is more than one. `_clock` is no longer stored (R3-1: `updated_at` is the row's
 * newest observation); the ingest's lag metric uses its clock in memory (lib/ingest/outcome.ts).
 * It stays in the signature until lib/ingest/write-isolated.ts stops passing it.
 */
export async function writeBatch(db: Queryable, writes: readonly SubagentWrite[], _clock?: Micros): Promise<void> {
  if (writes.length === 0) return;
  await runPrepared(db, prepareBatch(db.dialect, writes));
}

function isDatabase(db: Queryable): db is Database {
  return typeof (db as Partial<Database>).transaction === 'function';
}
