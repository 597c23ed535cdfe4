import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import type { SubagentRow, SubagentWrite } from '../../../lib/row.js';
import { readAll, readSession } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { writes as writeSequences } from '../../support/arbitraries.js';
import { seedSession } from '../../support/frames.js';
import { hostUpsert } from '../../support/host-writer.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { insertHostMessage, subagentDoc } from '../migrate/host-messages.js';

/**
 * What both writers keep: everything but the writer-chosen `id` and our own `last_observed_at`
 * (`updated_at` is the instant the row's values are as of on both, R3-1).
 */
const shared = (row: SubagentRow) =>
  Object.fromEntries(Object.entries(row).filter(([k]) => !['id', 'last_observed_at'].includes(k)));

const inObservationOrder = (ws: SubagentWrite[]) =>
  ws
    .map((w, i) => ({ w, i }))
    .sort((a, b) => (a.w.observed_at < b.w.observed_at ? -1 : a.w.observed_at > b.w.observed_at ? 1 : a.i - b.i))
    .map(({ w }) => w);

describe.each(TARGETS)("our migrate and writes on the host's real store on %s (R2-10)", (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });

  it("R2-10: after our migrate, an insert in the host's own style (no agent_execution_id, no last_observed_at) succeeds", async () => {
    await runMigration(t.db);
    await seedSession(t.db);
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, observed_at, updated_at)
       VALUES ('h1', 's1', 't1', 'c1', '2026-08-12 13:24:58', '2026-08-12 13:24:58')`,
    );
    expect((await readAll(t.db))[0]).toMatchObject({
      id: 'h1',
      agent_execution_id: 'unknown',
      source: 'live',
      is_async: 0,
      total_tokens: null,
    });
  });

  it("R2-10: frames in observation order, each written by the host's upsert or ours, leave the row our writes alone leave", async () => {
    let run = 0;
    const property = fc.asyncProperty(
      writeSequences(['A'], 10),
      fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
      async (generated, byHost) => {
        run += 1;
        const mixed = `mixed-${run}`;
        const ours = `ours-${run}`;
        for (const session of [mixed, ours]) await seedSession(t.db, session, 't1');
        const ordered = inObservationOrder(generated);
        for (const [i, w] of ordered.entries()) {
          const write = { ...w, task_session_id: mixed };
          if (byHost[i]) await hostUpsert(t.db, write);
          else await writeBatch(t.db, [write]);
        }
        for (const w of ordered) await writeBatch(t.db, [{ ...w, task_session_id: ours }]);
        const strip = (rows: SubagentRow[]) => rows.map((r) => ({ ...shared(r), task_session_id: 'A' }));
        expect(strip(await readSession(t.db, mixed))).toEqual(strip(await readSession(t.db, ours)));
      },
    );
    await fc.assert(property, { numRuns: 25 });
  }, 180_000);

  it("R2-10: a row the host's own backfill wrote (id = the message's id) is left alone by ours, whichever key it holds", async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc({ top: { tool_call_id: 'c1' } }) });
    await insertHostMessage(t.db, { id: 'm2', metadata: subagentDoc({ top: { tool_call_id: 'c2' } }) });
    // The host's backfill rows: the same key as ours for m1; for m2 the same id under another key
    // (say, its tool_call_id changed later), which only a target-less ON CONFLICT DO NOTHING skips.
    for (const [id, call] of [
      ['m1', 'c1'],
      ['m2', 'c2-renamed'],
    ] as const) {
      await t.db.query(
        `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, source, observed_at, updated_at)
         VALUES ($1, 's1', 't1', $2, 'backfill', '2026-08-12 13:24:58', '2026-08-12 13:24:58')`,
        [id, call],
      );
    }
    const before = await readAll(t.db);
    const report = await runMigration(t.db);
    expect(report).toMatchObject({ backfill: 'completed', inserted: 0, matched: 2 });
    expect(await readAll(t.db)).toEqual(before);
  });

  it("R2-10: both backfills name a row the same way: the host's backfill after ours inserts nothing new", async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc(), updatedAt: '2026-08-12T13:30:00.5Z' });
    await runMigration(t.db);
    const [row] = await readAll(t.db);
    expect(row).toMatchObject({ id: 'm1', updated_at: '2026-08-12T13:30:00.500000Z', source: 'backfill' });
    // The host's backfill inserts (m.id, …, 'unknown', …) ON CONFLICT (key) DO NOTHING: its row is ours.
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, source, observed_at, updated_at)
       SELECT m.id, m.task_session_id, m.task_id, 'c1', 'unknown', 'backfill', m.created_at, m.updated_at
       FROM task_session_messages m WHERE m.id = 'm1'
       ON CONFLICT (task_session_id, agent_execution_id, tool_call_id) DO NOTHING`,
    );
    expect(await readAll(t.db)).toEqual([row]);
  });
});
