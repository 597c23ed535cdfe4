import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/database.js';
import { foldByKey } from '../../../lib/merge.js';
import { rowKey, type SubagentWrite } from '../../../lib/row.js';
import { readSession } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { inObservationOrder, withReplays, writes as writeSequences } from '../../support/arbitraries.js';
import { seedSession } from '../../support/frames.js';
import { hostUpsert } from '../../support/host-writer.js';
import { type RowView, viewOfRow, viewOfWrite } from '../../support/row-view.js';
import { TARGET_FIXTURES, TARGETS, useTestDatabase } from '../../support/targets.js';

const LOGICAL_SESSIONS = ['A', 'B'] as const;
const NUM_RUNS = 30;

/** The rows a set of sessions holds, keyed by conflict key, with the logical session name back. */
async function rowsOf(db: Database, sessions: Record<string, string>): Promise<RowView[]> {
  const views: RowView[] = [];
  for (const [logical, real] of Object.entries(sessions)) {
    for (const row of await readSession(db, real)) views.push({ ...viewOfRow(row), task_session_id: logical });
  }
  return views.sort((a, b) => (rowKey(a) < rowKey(b) ? -1 : 1));
}

const expectedRows = (writes: readonly SubagentWrite[]): RowView[] =>
  foldByKey(writes, rowKey)
    .map(viewOfWrite)
    .sort((a, b) => (rowKey(a) < rowKey(b) ? -1 : 1));

describe.each(TARGETS)(
  'batched ingest equals one-at-a-time ingest on %s (docs/ingest.md, docs/dialects.md)',
  (name) => {
    const t = useTestDatabase(name);

    it(`gives identical rows whether a frame sequence is written as one batch, in chunks or one write at a time (${NUM_RUNS} random runs)`, async () => {
      let run = 0;
      const property = fc.asyncProperty(
        writeSequences(LOGICAL_SESSIONS, 16),
        fc.integer({ min: 1, max: 5 }),
        async (writes, chunkSize) => {
          run += 1;
          // Fresh real sessions per run and per way of writing, so runs never see each other's rows.
          const ways = ['batch', 'chunks', 'single'] as const;
          const sessions = Object.fromEntries(
            ways.map((way) => [way, Object.fromEntries(LOGICAL_SESSIONS.map((s) => [s, `${way}-${run}-${s}`]))]),
          ) as Record<(typeof ways)[number], Record<string, string>>;
          for (const way of ways) for (const real of Object.values(sessions[way])) await seedSession(t.db, real, 't1');
          const as = (way: (typeof ways)[number]) =>
            writes.map((w) => ({ ...w, task_session_id: sessions[way][w.task_session_id]! }));

          await writeBatch(t.db, as('batch'));
          const chunked = as('chunks');
          for (let i = 0; i < chunked.length; i += chunkSize) await writeBatch(t.db, chunked.slice(i, i + chunkSize));
          for (const w of as('single')) await writeBatch(t.db, [w]);

          const single = await rowsOf(t.db, sessions.single);
          expect(single).toEqual(expectedRows(writes));
          expect(await rowsOf(t.db, sessions.batch)).toEqual(single);
          expect(await rowsOf(t.db, sessions.chunks)).toEqual(single);
        },
      );
      await fc.assert(property, { numRuns: NUM_RUNS });
    }, 120_000);

    it(`R2-7: an in-order sequence followed by re-deliveries of any of its frames, in any order and any batching, leaves the in-order rows (${NUM_RUNS} random runs)`, async () => {
      let run = 0;
      const property = fc.asyncProperty(
        writeSequences(LOGICAL_SESSIONS, 12).map(inObservationOrder).chain(withReplays),
        fc.integer({ min: 1, max: 6 }),
        async ({ inOrder, replayed }, chunkSize) => {
          run += 1;
          const sessions = Object.fromEntries(LOGICAL_SESSIONS.map((s) => [s, `replay-${run}-${s}`]));
          for (const real of Object.values(sessions)) await seedSession(t.db, real, 't1');
          const all = [...inOrder, ...replayed].map((w) => ({ ...w, task_session_id: sessions[w.task_session_id]! }));
          for (let i = 0; i < all.length; i += chunkSize) await writeBatch(t.db, all.slice(i, i + chunkSize));
          expect(await rowsOf(t.db, sessions)).toEqual(expectedRows(inOrder));
        },
      );
      await fc.assert(property, { numRuns: NUM_RUNS });
    }, 120_000);
  },
);

describe.each(TARGET_FIXTURES)(
  "issue 24: a batch's fold onto any stored row equals its frames one at a time on %s with the %s host schema",
  (name, fixture) => {
    const t = useTestDatabase(name, { fixture });
    /** Coarse instants (whole seconds of one minute): ties, older and newer frames all occur. */
    const coarse = (w: SubagentWrite, slot: number): SubagentWrite => {
      const at = 1_786_541_098_000_000n + BigInt(slot) * 1_000_000n;
      return { ...w, observed_at: at, last_observed_at: at, settled_at: w.settled_at === null ? null : at };
    };
    const slotted = (max: number) =>
      fc
        .tuple(writeSequences(['A'], max), fc.array(fc.integer({ min: 0, max: 5 }), { minLength: max, maxLength: max }))
        .map(([list, slots]) => list.map((w, i) => coarse(w, slots[i]!)));

    it(`R2-7, R3-1: stored rows the host's writer or ours left, then one batch with ties (${NUM_RUNS} random runs)`, async () => {
      let run = 0;
      const property = fc.asyncProperty(
        slotted(4),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        slotted(12),
        async (before, byHost, batch) => {
          run += 1;
          const sessions = { folded: `fold-${run}`, single: `single-${run}` };
          for (const real of Object.values(sessions)) await seedSession(t.db, real, 't1');
          const as = (list: SubagentWrite[], session: string) => list.map((w) => ({ ...w, task_session_id: session }));
          for (const session of Object.values(sessions)) {
            for (const [i, w] of as(before, session).entries()) {
              if (byHost[i]) await hostUpsert(t.db, w);
              else await writeBatch(t.db, [w]);
            }
          }
          await writeBatch(t.db, as(batch, sessions.folded));
          for (const w of as(batch, sessions.single)) await writeBatch(t.db, [w]);
          const rows = async (session: string) =>
            (await readSession(t.db, session)).map(({ id: _id, ...row }) => ({ ...row, task_session_id: 'A' }));
          expect(await rows(sessions.folded)).toEqual(await rows(sessions.single));
        },
      );
      await fc.assert(property, { numRuns: NUM_RUNS });
    }, 180_000);
  },
);
