import { describe, expect, it } from 'vitest';
import { DatabaseError } from '../../../lib/db/errors.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS } from '../../../lib/db/neon.js';
import { openDatabase } from '../../../lib/db/open.js';
import { STATEMENT_TIMEOUT_SECONDS } from '../../../lib/defaults.js';
import { POSTGRES_TARGETS, useTestDatabase } from '../../support/targets.js';

// Connection loss exists only where there is a connection: the PostgreSQL targets, reached by the
// Neon driver through the ws proxy. SQLite is a local file.
describe.each(POSTGRES_TARGETS)('the Neon adapter when the connection drops, on %s', (name) => {
  const t = useTestDatabase(name);

  // PGlite's socket server ignores startup parameters (it runs in this process; nothing to cap).
  it.skipIf(name !== 'postgres')(
    "R2-5: every connection carries its caller's statement cap: ingest's by default, a longer one for health, migrate and the CLI",
    async () => {
      const show = async (db: { query: typeof t.db.query }) =>
        (await db.query<{ statement_timeout: string }>('SHOW statement_timeout'))[0]!.statement_timeout;
      expect(await show(t.connect())).toBe(`${DEFAULT_STATEMENT_TIMEOUT_MS / 1000}s`);
      expect(await show(t.connect({ statementTimeoutMs: STATEMENT_TIMEOUT_SECONDS.migrate * 1000 }))).toBe('15min');
    },
  );

  it('R4-12: a read-only open turns JIT off on each of its connections, a fresh one after a drop too; a writer keeps the server setting', async () => {
    const show = async (db: { query: typeof t.db.query }) => (await db.query<{ jit: string }>('SHOW jit'))[0]!.jit;
    const reader = openDatabase(t.url, { wsProxy: t.proxy!.address, readonly: true, max: 2 });
    try {
      const both = await Promise.all([
        reader.query<{ jit: string }>('SELECT current_setting($1) AS jit, pg_sleep(0.2)', ['jit']),
        reader.query<{ jit: string }>('SELECT current_setting($1) AS jit, pg_sleep(0.2)', ['jit']),
      ]);
      expect(both.map((rows) => rows[0]!.jit)).toEqual(['off', 'off']);
      t.proxy!.interrupt();
      expect(await show(reader)).toBe('off');
    } finally {
      await reader.close();
    }
    // the server's default (PostgreSQL 15: on) on a connection that is not read-only
    if (name === 'postgres') expect(await show(t.db)).toBe('on');
  });

  // PGlite runs in this process: its pg_sleep blocks the event loop, so only the server can show it.
  it.skipIf(name !== 'postgres')('R2-5: the server ends a statement that runs past the cap (57014)', async () => {
    const capped = t.connect({ statementTimeoutMs: 300 });
    await expect(capped.query('SELECT pg_sleep(2)')).rejects.toMatchObject({ sqlstate: '57014', kind: 'system' });
    const longer = t.connect({ statementTimeoutMs: 5_000 });
    expect(await longer.query('SELECT pg_sleep(0.5), 1 AS n')).toMatchObject([{ n: 1 }]);
  });

  it('replaces a pooled connection that died while idle (a frozen Lambda) and runs the statement', async () => {
    await t.db.query('SELECT 1');
    t.proxy!.interrupt();
    expect(await t.db.query<{ n: number }>('SELECT 2 AS n')).toEqual([{ n: 2 }]);
  });

  it('opens a transaction on a fresh connection after the pooled one died', async () => {
    await t.db.transaction((tx) => tx.query('SELECT 1'));
    t.proxy!.interrupt();
    const rows = await t.db.transaction((tx) => tx.query<{ n: number }>('SELECT 3 AS n'));
    expect(rows).toEqual([{ n: 3 }]);
  });

  it('R2-4: reports an unreachable database as a system failure without SQLSTATE (kept on the queue), with a hint', async () => {
    await t.db.query('SELECT 1');
    t.proxy!.setAvailable(false);
    const error = await t.db.query('SELECT 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(DatabaseError);
    expect(error).toMatchObject({ kind: 'system', sqlstate: undefined });
    expect((error as DatabaseError).message).toMatch(/DATABASE_URL/);
  });

  it('works again once the database is reachable again', async () => {
    t.proxy!.setAvailable(false);
    await t.db.query('SELECT 1').catch(() => undefined);
    t.proxy!.setAvailable(true);
    expect(await t.db.query<{ n: number }>('SELECT 4 AS n')).toEqual([{ n: 4 }]);
  });

  it('R2-4: reports a connection lost inside a transaction as a system failure (never parked) and does not commit', async () => {
    await t.db.query('SELECT 1');
    const error = await t.db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('a', '1')");
        t.proxy!.interrupt();
        await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('b', '2')");
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toMatchObject({ kind: 'system' });
    expect(await t.db.query('SELECT key FROM kandev_meta')).toEqual([]);
  });
});
