import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowKey, type SubagentWrite } from '../../../lib/row.js';
import { readSession } from '../../../lib/store/read.js';
import { foldBatch, writeBatch } from '../../../lib/store/write.js';
import { writes as arbitraryWrites } from '../../support/arbitraries.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

describe('batch fold', () => {
  it('folds any batch into one row per conflict key, in conflict-key order whatever the arrival order (so concurrent batches lock keys in one order)', () => {
    fc.assert(
      fc.property(arbitraryWrites(['s1', 's2'], 30), (writes) => {
        const keys = foldBatch(writes).map((fold) => rowKey(fold.row));
        expect(keys).toEqual([...new Set(writes.map(rowKey))].sort());
      }),
    );
  });
});

/** Keys and rounds of the deadlock test: enough that two statements in opposite orders meet. */
const DEADLOCK_KEYS = 1000;
const DEADLOCK_ROUNDS = 5;

describe.each(TARGETS)('batch write on %s', (name) => {
  const t = useTestDatabase(name);

  it.each([1, 50, 2000])('writes a batch of %i frames of distinct subagents in one round trip', async (size) => {
    await seedSession(t.db);
    const writes = Array.from({ length: size }, (_, i) =>
      write({ tool_call_id: `c${i}`, subagent_task: { total_tokens: i + 1 } }),
    );
    const before = t.db.stats.roundTrips;
    await writeBatch(t.db, writes);
    expect(t.db.stats.roundTrips - before).toBe(1);
    expect(await readSession(t.db, 's1')).toHaveLength(size);
  });

  it('issue 24: writes a batch with up to 3 frames per subagent as one statement, one row per subagent, in one round trip', async () => {
    await seedSession(t.db);
    const writes = Array.from({ length: 2000 }, (_, i) =>
      write({ tool_call_id: `c${i % 997}`, subagent_task: { total_tokens: i + 1 } }),
    );
    const before = t.db.stats.roundTrips;
    await writeBatch(t.db, writes);
    expect(t.db.stats.roundTrips - before).toBe(1);
    const rows = await readSession(t.db, 's1');
    expect(rows).toHaveLength(997);
    expect(rows.find((r) => r.tool_call_id === 'c5')?.total_tokens).toBe(2000); // the last frame of c5 (i = 1999)
  });

  // SQLite caches every statement already (lib/db/sqlite.ts).
  it.skipIf(name === 'sqlite')(
    'issue 24: the batch upsert is parsed once per connection and reused by every later batch',
    async () => {
      await seedSession(t.db);
      const one = t.connect({ max: 1 });
      for (let i = 0; i < 3; i++) await writeBatch(one, [write({ tool_call_id: `p${i}` })]);
      const prepared = await one.query<{ name: string; runs: number }>(
        "SELECT name, generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE name LIKE 'subagent_upsert_%'",
      );
      // PGlite's socket server shares one session between connections: other tests' names show too.
      expect(prepared.map((p) => Number(p.runs)).reduce((a, b) => Math.max(a, b), 0)).toBe(3);
      expect(await readSession(one, 's1')).toHaveLength(3);
    },
  );

  it('a failing row fails the whole batch statement: nothing of it lands', async () => {
    await seedSession(t.db);
    // A row that breaks NOT NULL (no valid frame can), beside healthy ones of other keys.
    const broken = { ...write({ tool_call_id: 'b' }), task_id: null } as unknown as SubagentWrite;
    const writes = [write({ tool_call_id: 'a' }), write({ tool_call_id: 'a', subagent_task: { model: 'm1' } }), broken];
    await expect(writeBatch(t.db, writes)).rejects.toThrow();
    expect(await readSession(t.db, 's1')).toEqual([]);
  });

  it("a batch that fails reports the failing row's class, and its connection serves the next batch", async () => {
    await seedSession(t.db);
    // One connection: the next batch must find it usable.
    const db = t.connect({ max: 1 });
    const frames = [write({ tool_call_id: 'a' }), write({ tool_call_id: 'a', subagent_task: { model: 'm1' } })];
    await expect(writeBatch(db, [...frames, write({ task_session_id: 'missing' })])).rejects.toMatchObject({
      kind: 'foreign_key',
    });
    expect(await readSession(db, 's1')).toEqual([]);
    await writeBatch(db, frames);
    expect(await readSession(db, 's1')).toMatchObject([{ tool_call_id: 'a', model: 'm1' }]);
  });

  it('sends nothing for an empty batch', async () => {
    const before = t.db.stats.roundTrips;
    await writeBatch(t.db, []);
    expect(t.db.stats.roundTrips - before).toBe(0);
  });

  it('AC-7: stores an async_launched frame with NULL, never 0, in all three metrics', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [
      write({ subagent_task: { status: 'async_launched', is_async: true, total_tokens: 0, duration_ms: 0 } }),
    ]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toMatchObject({
      total_tokens: null,
      duration_ms: null,
      tool_use_count: null,
      is_async: 1,
      settled_at: null,
    });
  });

  it("R3-1: stamps updated_at and last_observed_at with the frame's observed_at, not the writer's clock", async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ observed_at: '2026-08-12T13:24:58.000001Z' })]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toMatchObject({
      observed_at: '2026-08-12T13:24:58.000001Z',
      updated_at: '2026-08-12T13:24:58.000001Z',
      last_observed_at: '2026-08-12T13:24:58.000001Z',
    });
  });

  it('R3-1: updated_at moves to the newest observation applied and an older frame leaves it', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ observed_at: '2026-08-12T13:25:03Z' })]);
    await writeBatch(t.db, [write({ observed_at: '2026-08-12T13:26:00.000001Z' })]);
    await writeBatch(t.db, [write({ observed_at: '2026-08-12T13:26:00Z' })]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toMatchObject({
      updated_at: '2026-08-12T13:26:00.000001Z',
      last_observed_at: '2026-08-12T13:26:00.000001Z',
    });
  });

  it('keeps text with quotes, backslashes, JSON and non-ASCII intact', async () => {
    await seedSession(t.db);
    const description = `it's "quoted" \\ {"a":[1]} ✓ 日本語 \u0000end`.replace('\u0000', '');
    await writeBatch(t.db, [write({ subagent_task: { description, model: '123' } })]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toMatchObject({ description, model: '123' });
  });

  it('writes nothing when one row of the batch is rejected (the statement is atomic)', async () => {
    await seedSession(t.db);
    await expect(
      writeBatch(t.db, [write({ tool_call_id: 'ok' }), write({ task_session_id: 'missing' })]),
    ).rejects.toMatchObject({ kind: 'foreign_key' });
    expect(await readSession(t.db, 's1')).toEqual([]);
  });

  it(`AC-14: concurrent batches of the same ${DEADLOCK_KEYS} keys in opposite arrival order, on separate connections, never deadlock (40P01), round after round`, async () => {
    await seedSession(t.db);
    const keys = Array.from({ length: DEADLOCK_KEYS }, (_, i) => `c${String(i).padStart(5, '0')}`);
    const batch = (order: readonly string[], round: number) =>
      order.map((k) =>
        write({
          tool_call_id: k,
          observed_at: `2026-08-12T13:25:0${round}.000000Z`,
          subagent_task: { total_tokens: round + 1 },
        }),
      );
    const [ascending, descending] = [t.connect({ max: 1 }), t.connect({ max: 1 })];
    const failures: string[] = [];
    for (let round = 0; round < DEADLOCK_ROUNDS; round += 1) {
      const results = await Promise.allSettled([
        writeBatch(ascending, batch(keys, round)),
        writeBatch(descending, batch([...keys].reverse(), round)),
      ]);
      for (const result of results) {
        if (result.status === 'rejected') {
          const { sqlstate, message } = result.reason as { sqlstate?: string; message?: string };
          failures.push(`round ${round}: ${sqlstate ?? message}`);
        }
      }
    }
    expect(failures).toEqual([]);
    const rows = await readSession(t.db, 's1');
    expect(rows).toHaveLength(DEADLOCK_KEYS);
    expect(new Set(rows.map((r) => r.total_tokens))).toEqual(new Set([DEADLOCK_ROUNDS]));
  });
});
