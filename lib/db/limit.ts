import type { Queryable, QueryOptions } from './database.js';

/**
 * R4-12: `db` with at most `slots` statements in flight (default: as many as it has connections,
 * `Queryable.connections`, else one); the rest wait here, in order, with no timer. A caller that
 * starts a dozen statements side by side (the report's page) then never waits for a pooled
 * connection the pool cannot give (pg-pool applies its connect timeout to that wait and fails it as
 * if the server were unreachable), and each statement's own cap (the server's statement_timeout)
 * starts when the statement is sent, not while it waits its turn.
 */
export function limitConcurrency(db: Queryable, slots = db.connections ?? 1): Queryable {
  const limit = Math.max(1, Math.floor(slots));
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };
  const acquire = (): Promise<void> => {
    if (running < limit) {
      running += 1;
      return Promise.resolve();
    }
    // the slot passes straight to the next statement: `running` stays the same
    return new Promise((resolve) => waiting.push(resolve));
  };
  return {
    dialect: db.dialect,
    connections: limit,
    query: async <T>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]> => {
      await acquire();
      try {
        return await db.query<T>(sql, params, options);
      } finally {
        release();
      }
    },
  };
}
