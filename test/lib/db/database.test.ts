import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { DatabaseError } from '../../../lib/db/errors.js';
import { writeBatch } from '../../../lib/store/write.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

async function failure(promise: Promise<unknown>): Promise<DatabaseError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(DatabaseError);
    return err as DatabaseError;
  }
  throw new Error('expected the statement to fail');
}

describe.each(TARGETS)('the Database adapter on %s', (name) => {
  const t = useTestDatabase(name);

  it('issue 24: a named statement (prepareAs) answers each call with that call’s parameters', async () => {
    const answers: unknown[] = [];
    for (const value of ['one', 'two', 'three']) {
      answers.push(await t.db.query('SELECT $1 AS a, $2 AS b', [value, `${value}!`], { prepareAs: 'test_named_echo' }));
    }
    expect(answers).toEqual([[{ a: 'one', b: 'one!' }], [{ a: 'two', b: 'two!' }], [{ a: 'three', b: 'three!' }]]);
  });

  it('issue 24: a named statement whose first use failed is prepared again once its table exists', async () => {
    const count = () =>
      t.db.query<{ n: number }>('SELECT COUNT(*) AS n FROM named_later', [], { prepareAs: 'test_named_later' });
    await failure(count());
    await t.db.query('CREATE TABLE named_later (x INTEGER)');
    expect((await count()).map((r) => Number(r.n))).toEqual([0]);
  });

  it('binds $n placeholders by number, in any order and repeated', async () => {
    const rows = await t.db.query<{ a: string; b: string; c: string }>('SELECT $2 AS a, $1 AS b, $2 AS c', [
      'one',
      'two',
    ]);
    expect(rows).toEqual([{ a: 'two', b: 'one', c: 'two' }]);
  });

  it('classifies a write for a missing session as a foreign-key failure (SQLSTATE 23503)', async () => {
    const error = await failure(writeBatch(t.db, [write({ task_session_id: 'gone' })]));
    expect(error).toMatchObject({ kind: 'foreign_key', sqlstate: '23503' });
    expect(error.message).toMatch(/task session does not exist/);
  });

  it('classifies a unique violation as a row error (SQLSTATE 23505)', async () => {
    await seedSession(t.db);
    const insert = `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, observed_at, updated_at)
      VALUES ($1, 's1', 't1', 'c1', 'e1', '2026-08-12 13:24:58', '2026-08-12 13:24:58')`;
    await t.db.query(insert, ['row-1']);
    const error = await failure(t.db.query(insert, ['row-2']));
    expect(error).toMatchObject({ kind: 'row', sqlstate: '23505' });
  });

  it('R2-4: classifies a malformed statement as a system error', async () => {
    const error = await failure(t.db.query('SELEC 1'));
    expect(error.kind).toBe('system');
    // the dialect's own words: a SQLite store has no server to look at (issue 36, diagnostics)
    expect(error.message).toMatch(name === 'sqlite' ? /SQLite could not use the store/ : /not in a usable state/);
  });

  it('commits a transaction', async () => {
    await t.db.transaction(async (tx) => {
      await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('a', '1')");
      await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('b', '2')");
    });
    expect(await t.db.query('SELECT key FROM kandev_meta ORDER BY key')).toEqual([{ key: 'a' }, { key: 'b' }]);
  });

  it('rolls a transaction back when its function throws, and rethrows', async () => {
    const boom = new Error('boom');
    await expect(
      t.db.transaction(async (tx) => {
        await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('a', '1')");
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await t.db.query('SELECT key FROM kandev_meta')).toEqual([]);
  });

  it('rolls a transaction back when a statement fails, and the database stays usable', async () => {
    const error = await failure(
      t.db.transaction(async (tx) => {
        await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('a', '1')");
        await tx.query("INSERT INTO kandev_meta (key, value) VALUES ('a', '2')");
      }),
    );
    expect(error.sqlstate).toBe('23505');
    expect(await t.db.query('SELECT key FROM kandev_meta')).toEqual([]);
    await t.db.query("INSERT INTO kandev_meta (key, value) VALUES ('a', '3')");
  });

  it('counts every statement sent, BEGIN and COMMIT included', async () => {
    const before = t.db.stats.roundTrips;
    await t.db.query('SELECT 1');
    await t.db.transaction(async (tx) => {
      await tx.query('SELECT 1');
    });
    expect(t.db.stats.roundTrips - before).toBe(4);
  });

  it('returns timestamps as text, microsecond-true (never a millisecond Date)', async () => {
    await t.db.query("INSERT INTO task_sessions (id, task_id) VALUES ('s1', 't1')");
    await t.db.query("INSERT INTO task_session_turns (id, task_session_id) VALUES ('u1', 's1')");
    await t.db.query(
      `INSERT INTO task_session_messages (id, task_session_id, turn_id, content, created_at, updated_at)
       VALUES ('m1', 's1', 'u1', '', '2026-08-12 13:24:58.123457', '2026-08-12 13:24:58.000001')`,
    );
    const [row] = await t.db.query<{ created_at: unknown; updated_at: unknown }>(
      'SELECT created_at, updated_at FROM task_session_messages',
    );
    expect(typeof row!.created_at).toBe('string');
    expect(row!.created_at).toMatch(/^2026-08-12 13:24:58\.123457/);
    expect(row!.updated_at).toMatch(/^2026-08-12 13:24:58\.000001/);
  });

  it('returns a BIGINT up to 2^53-1 as an exact number', async () => {
    const [row] = await t.db.query<{ n: unknown }>(`SELECT CAST($1 AS BIGINT) AS n`, [String(Number.MAX_SAFE_INTEGER)]);
    expect(row!.n).toBe(Number.MAX_SAFE_INTEGER);
  });
});
