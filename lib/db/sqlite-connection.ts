import type BetterSqlite3 from 'better-sqlite3';
import { SQLITE_AGGREGATES, SQLITE_FUNCTIONS } from './dialect/sqlite.js';

/*
 * What every SQLite connection of ours shares, the main one (sqlite.ts) and each reader thread's
 * (sqlite-reader-worker.ts): the dialect's functions, and how a statement is run.
 */

/** `$n` placeholders (the shared SQL's) → positional `?` with the parameters reordered to match. */
export function translate(sql: string): { text: string; order: number[] } {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { text, order };
}

/** The functions and aggregates the dialect's SQL calls (dialect/sqlite.ts), on connection `db`. */
export function registerFunctions(db: BetterSqlite3.Database): void {
  for (const [name, fn] of Object.entries(SQLITE_FUNCTIONS)) db.function(name, { deterministic: true }, fn);
  // the typings give step one argument; the driver counts the step function's own (value, percent)
  for (const [name, fns] of Object.entries(SQLITE_AGGREGATES))
    db.aggregate(name, { ...fns, deterministic: true } as unknown as BetterSqlite3.AggregateOptions);
}

/**
 * Runs the shared SQL on connection `db`: each text prepared once (translate), its parameters in
 * the placeholders' order; a statement that reads returns its rows, one that writes none.
 */
export function statementRunner(db: BetterSqlite3.Database): (sql: string, params: readonly unknown[]) => unknown[] {
  const cache = new Map<string, { statement: BetterSqlite3.Statement; order: number[] }>();
  return (sql, params) => {
    let entry = cache.get(sql);
    if (!entry) {
      const { text, order } = translate(sql);
      entry = { statement: db.prepare(text), order };
      cache.set(sql, entry);
    }
    const args = entry.order.map((i) => params[i]);
    if (entry.statement.reader) return entry.statement.all(...args);
    entry.statement.run(...args);
    return [];
  };
}
