import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldByKey, foldFrames, framesByKey, mergeFold, mergeWrite, newestObservation } from '../../lib/merge.js';
import { rowKey, type StoredWrite, type SubagentWrite } from '../../lib/row.js';
import { inObservationOrder, withReplays, writes } from '../support/arbitraries.js';
import { write } from '../support/frames.js';
import { hostMerge } from '../support/host-writer.js';
import { MERGE_CASES } from '../support/merge-cases.js';
import { viewOfWrite } from '../support/row-view.js';

const sequential = (stored: StoredWrite | undefined, list: readonly SubagentWrite[]): SubagentWrite | undefined =>
  list.reduce<SubagentWrite | undefined>((row, w) => (row ? mergeWrite(row, w) : w), stored as SubagentWrite);

/** Sequential application per key, as one upsert per write in arrival order would leave the table. */
function byKeySequentially(list: readonly SubagentWrite[]): Map<string, SubagentWrite> {
  const rows = new Map<string, SubagentWrite>();
  for (const w of list) rows.set(rowKey(w), sequential(rows.get(rowKey(w)), [w])!);
  return rows;
}

describe('mergeWrite: docs/merge.md#merging-onto-an-existing-row merge rules in memory', () => {
  it.each(MERGE_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const merged = sequential(undefined, c.writes)!;
    expect(viewOfWrite(merged)).toMatchObject(c.expected);
  });

  it("changes only what the rules allow: keep columns are the stored row's", () => {
    const property = fc.property(writes(['s1']), (list) => {
      const [first, ...rest] = list as [SubagentWrite, ...SubagentWrite[]];
      const merged = sequential(first, rest)!;
      expect(merged).toMatchObject({
        task_session_id: first.task_session_id,
        task_id: first.task_id,
        source: first.source,
        observed_at: first.observed_at,
        agent_execution_id: first.agent_execution_id,
      });
    });
    fc.assert(property);
  });
});

describe('foldByKey', () => {
  it('gives one write per conflict key, in first-seen key order', () => {
    fc.assert(
      fc.property(writes(['s1', 's2'], 20), (list) => {
        const folded = foldByKey(list, rowKey);
        expect(folded.map(rowKey)).toEqual([...new Set(list.map(rowKey))]);
      }),
    );
  });

  it('equals sequential merging, key by key', () => {
    fc.assert(
      fc.property(writes(['s1', 's2'], 20), (list) => {
        expect(foldByKey(list, rowKey)).toEqual([...byKeySequentially(list).values()]);
      }),
    );
  });
});

describe('framesByKey', () => {
  it("groups a batch's frames per conflict key, each key's in arrival order, keys in first-seen order", () => {
    fc.assert(
      fc.property(writes(['s1', 's2'], 20), (list) => {
        const grouped = framesByKey(list, rowKey);
        expect([...grouped.keys()]).toEqual([...new Set(list.map(rowKey))]);
        for (const [key, frames] of grouped) expect(frames).toEqual(list.filter((w) => rowKey(w) === key));
      }),
    );
  });
});

describe('R2-7: replay-safe merge in memory', () => {
  it('R2-7: any in-order sequence followed by re-deliveries of any of its frames, in any order, equals the in-order sequence alone', () => {
    fc.assert(
      fc.property(writes(['s1', 's2'], 16).map(inObservationOrder).chain(withReplays), ({ inOrder, replayed }) => {
        expect(foldByKey([...inOrder, ...replayed], rowKey)).toEqual(foldByKey(inOrder, rowKey));
      }),
      { numRuns: 500 },
    );
  });

  it('R2-7: frames in observation order merge as the in-order rules alone would (the older-frame rule never fires)', () => {
    fc.assert(
      fc.property(writes(['s1'], 16).map(inObservationOrder), (list) => {
        for (const row of foldByKey(list, rowKey)) {
          const own = list.filter((w) => rowKey(w) === rowKey(row));
          expect(row.last_observed_at).toBe(own[own.length - 1]!.observed_at);
        }
      }),
    );
  });

  it('R2-7: an older frame changes nothing that is not NULL, except settling an unsettled row and is_async', () => {
    fc.assert(
      fc.property(writes(['s1'], 2), writes(['s1'], 1), (stored, [older]) => {
        const row = sequential(
          undefined,
          stored.map((w) => ({ ...w, tool_call_id: 'c1', agent_execution_id: 'e1' })),
        )!;
        const next = {
          ...older!,
          tool_call_id: 'c1',
          agent_execution_id: 'e1',
          observed_at: row.last_observed_at - 1n,
        };
        next.settled_at = next.settled_at === null ? null : next.observed_at;
        const merged = mergeWrite(row, next);
        for (const [name, value] of Object.entries(row)) {
          const after = merged[name as keyof SubagentWrite];
          if (value === null) continue;
          if (name === 'is_async') expect(after).toBe(value === 1 || next.is_async === 1 ? 1 : 0);
          else if (name === 'tool_status' && row.settled_at === null && next.settled_at !== null)
            expect(after).toBe(next.tool_status);
          else expect(after).toBe(value);
        }
        expect(merged.last_observed_at).toBe(row.last_observed_at);
      }),
    );
  });
});

describe("R3-1: beside the host's writer, in memory", () => {
  const oneKey = (w: SubagentWrite): SubagentWrite => ({ ...w, tool_call_id: 'c1', agent_execution_id: 'e1' });

  it("R3-1: a frame observed before the host's latest write changes nothing that is not NULL (but settling and is_async) and writes down the host's instant", () => {
    fc.assert(
      fc.property(
        writes(['s1'], 4),
        writes(['s1'], 1),
        fc.bigInt({ min: 1n, max: 10_000_000n }),
        (host, [ours], gap) => {
          // The host's writes, each at its own clock (its observation instant), increasing.
          const stored = host
            .map(oneKey)
            .reduce<ReturnType<typeof hostMerge> | undefined>(
              (row, w, i) => hostMerge(row, { ...w, observed_at: BigInt(i) * 1_000_000n + host[0]!.observed_at }),
              undefined,
            )!;
          const observed = stored.updated_at! - gap;
          const next = { ...oneKey(ours!), observed_at: observed, last_observed_at: observed };
          next.settled_at = next.settled_at === null ? null : observed;
          const merged = mergeWrite(stored, next);
          for (const [name, value] of Object.entries(stored)) {
            if (value === null || name === 'updated_at' || name === 'last_observed_at') continue;
            const after = merged[name as keyof SubagentWrite];
            if (name === 'is_async') expect(after).toBe(value === 1 || next.is_async === 1 ? 1 : 0);
            else if (name === 'tool_status' && stored.settled_at === null && next.settled_at !== null)
              expect(after).toBe(next.tool_status);
            else expect(after).toBe(value);
          }
          expect(merged.last_observed_at).toBe(newestObservation(stored));
          expect(merged.last_observed_at).toBe(stored.updated_at);
          expect(merged.last_observed_at >= merged.observed_at).toBe(true);
        },
      ),
    );
  });
});

describe("the fold of one key's frames, in closed form (docs/merge.md#batches, issue 24)", () => {
  const oneKey = (w: SubagentWrite): SubagentWrite => ({ ...w, tool_call_id: 'c1', agent_execution_id: 'e1' });
  /** Coarse instants, so ties (equal observed_at), older and newer frames all occur. */
  const coarse = (w: SubagentWrite, slot: number): SubagentWrite => {
    const at = 1_786_541_098_000_000n + BigInt(slot) * 1_000_000n;
    return { ...oneKey(w), observed_at: at, last_observed_at: at, settled_at: w.settled_at === null ? null : at };
  };
  const frames = (max: number) =>
    fc
      .tuple(writes(['s1'], max), fc.array(fc.integer({ min: 0, max: 4 }), { minLength: max, maxLength: max }))
      .map(([list, slots]) => list.map((w, i) => coarse(w, slots[i]!)));
  /** Any stored row: none, one our frames left, or one the host's writer left (maybe with ours on top). */
  const storedRow = fc.oneof(
    fc.constant(undefined),
    frames(4).map((list) => sequential(undefined, list)),
    fc.tuple(frames(3), frames(2), fc.integer({ min: 0, max: 5 })).map(([host, ours, start]) => {
      const byHost = host.reduce<ReturnType<typeof hostMerge> | undefined>(
        (row, w, i) => hostMerge(row, coarse(w, start + i)),
        undefined,
      )!;
      return ours.reduce<StoredWrite>((row, w) => ({ ...mergeWrite(row, w), updated_at: undefined }), byHost);
    }),
  );

  it('issue 24: the fold onto no row is foldByKey', () => {
    fc.assert(
      fc.property(frames(8), (list) => {
        expect(foldFrames(list).row).toEqual(foldByKey(list, rowKey)[0]);
      }),
      { numRuns: 500 },
    );
  });

  it("issue 24, R2-7, R3-1: the fold merged onto any stored row (ours or the host's) equals its frames landing one at a time, ties included", () => {
    fc.assert(
      fc.property(storedRow, frames(8), (stored, list) => {
        const oneAtATime = sequential(stored, list)!;
        const folded = stored === undefined ? foldFrames(list).row : mergeFold(stored, foldFrames(list));
        expect(folded).toEqual(oneAtATime);
      }),
      { numRuns: 2000 },
    );
  });

  it('issue 24: onto a row observed before 1970 (negative microseconds), a batch with no value for a column keeps the stored one', () => {
    const stored = write({ observed_at: '1969-07-20T20:17:40Z', subagent_task: { model: 'm1' } });
    const list = [write({ observed_at: '1969-07-20T20:17:41Z' }), write({ observed_at: '1969-07-20T20:17:42Z' })];
    const folded = mergeFold(stored, foldFrames(list));
    expect(folded).toEqual(sequential(stored, list));
    expect(folded.model).toBe('m1');
  });

  it('issue 24: a single frame needs nothing beyond the folded row', () => {
    fc.assert(
      fc.property(frames(1), (list) => {
        expect(foldFrames(list).replace).toEqual({});
      }),
    );
  });
});
