import { describe, expect, it } from 'vitest';
import { POSTGRES_TARGETS, useTestDatabase } from '../../support/targets.js';

// lib/db/pipeline.ts on the PostgreSQL targets: a batch is BEGIN, its statements and COMMIT sent as
// one pipeline (R2-7 rounds). Issue 20's surviving mutations, each killed by one test here.
describe.each(POSTGRES_TARGETS)('the PostgreSQL batch pipeline on %s', (name) => {
  const t = useTestDatabase(name);
  const keys = async () =>
    (await t.db.query<{ key: string }>("SELECT key FROM kandev_meta WHERE key LIKE 'p-%' ORDER BY key")).map(
      (r) => r.key,
    );
  const insert = (key: string, value: unknown) => ({
    sql: 'INSERT INTO kandev_meta (key, value) VALUES ($1, $2)',
    params: [key, value],
  });

  it('a value the driver cannot encode fails the batch: it does not resolve, and nothing of it commits (no later statement, no COMMIT is sent)', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular; // JSON.stringify, the driver's encoding of an object, throws
    const db = t.connect();
    await expect(db.batch([insert('p-a', '1'), insert('p-b', circular), insert('p-c', '3')])).rejects.toThrow();
    expect(await keys()).toEqual([]);
    // the connection is usable again for the next batch
    await db.batch([insert('p-d', '4')]);
    expect(await keys()).toEqual(['p-d']);
  });

  it('a failed statement fails the batch and commits nothing before or after it', async () => {
    await t.db.query("INSERT INTO kandev_meta (key, value) VALUES ('p-x', 'taken')");
    await expect(t.db.batch([insert('p-a', '1'), insert('p-x', 'again'), insert('p-c', '3')])).rejects.toMatchObject({
      sqlstate: '23505',
    });
    expect(await keys()).toEqual(['p-x']);
  });

  it('a multi-round batch on a pooled connection that died while idle is sent once more on a fresh one, and lands', async () => {
    const db = t.connect();
    await db.batch([insert('p-0', '0')]);
    t.proxy!.interrupt(); // the pooled connection dies (a frozen Lambda)
    await db.batch([insert('p-1', '1'), insert('p-2', '2'), insert('p-3', '3')]);
    expect(await keys()).toEqual(['p-0', 'p-1', 'p-2', 'p-3']);
  });
});
