import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/database.js';
import { MAX_STATEMENT_TIMEOUT_MS, statementTimeoutMsOf } from '../../../lib/db/neon.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

// R2-5 (issue 20 D8): a statement cap is always a real bound the server accepts. PostgreSQL takes
// whole milliseconds and reads 0 as "no limit": 0.0004 s must not reach it as 0; above its maximum
// (an int of ms) every connection fails with 22023.
describe("statementTimeoutMsOf: seconds → the server's milliseconds (R2-5)", () => {
  it.each([
    [0.0004, 1],
    [0.0005, 1],
    [1e-7, 1],
    [0.001, 1],
    [0.0011, 2],
    [1.5, 1500],
    [25, 25_000],
    [900, 900_000],
    [MAX_STATEMENT_TIMEOUT_MS / 1000, MAX_STATEMENT_TIMEOUT_MS],
  ])('R2-5: %s s → %s ms (rounded up, at least 1 ms)', (seconds, ms) => {
    expect(statementTimeoutMsOf(seconds)).toBe(ms);
  });

  it.each([
    [3e6, /more than PostgreSQL's maximum, 2147483.647 s/],
    [2147483.648, /more than PostgreSQL's maximum/],
    [0, /positive number of seconds .*0 would mean no limit/],
    [-1, /positive number of seconds/],
    [Number.NaN, /positive number of seconds/],
    [Number.POSITIVE_INFINITY, /positive number of seconds/],
  ])('R2-5: %s s is refused: %s', (seconds, message) => {
    expect(() => statementTimeoutMsOf(seconds)).toThrow(message);
  });
});

// SHOW itself runs under the 1–2 ms cap it reads; on a loaded machine the cap can end it (57014),
// which shows the cap is not 0 but not its value: ask again, a bounded number of times.
async function showUnderItsOwnCap(db: Database): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [row] = await db.query<{ statement_timeout: string }>('SHOW statement_timeout');
      return row?.statement_timeout;
    } catch (e) {
      if ((e as { sqlstate?: string }).sqlstate !== '57014' || attempt >= 50) throw e;
    }
  }
}

// PostgreSQL only: SQLite runs in this process and has no statement cap, and PGlite's socket server
// ignores the startup parameters that carry statement_timeout (SHOW answers 0 whatever is sent).
describe.each(TARGETS.filter((n) => n === 'postgres'))("the server's statement cap on %s (R2-5, D8)", (name) => {
  const t = useTestDatabase(name);
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it.each([
    [0.4, '1ms'],
    [0.5, '1ms'],
    [1.5, '2ms'],
  ])('R2-5: a cap of %s ms reaches the server as %s, never 0 (no limit)', async (ms, shown) => {
    db = t.connect({ statementTimeoutMs: ms });
    expect(await showUnderItsOwnCap(db)).toBe(shown);
  });

  it('R2-5: a sub-millisecond cap still ends pg_sleep(1.5) (57014)', async () => {
    db = t.connect({ statementTimeoutMs: 0.5 });
    await expect(db.query('SELECT pg_sleep(1.5)')).rejects.toMatchObject({ sqlstate: '57014' });
  });
});
