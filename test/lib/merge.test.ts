import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldByKey, mergeWrite } from '../../lib/merge.js';
import { rowKey, type SubagentWrite } from '../../lib/row.js';
import { writes } from '../support/arbitraries.js';
import { MERGE_CASES } from '../support/merge-cases.js';
import { viewOfWrite } from '../support/row-view.js';

const sequential = (stored: SubagentWrite | undefined, list: readonly SubagentWrite[]): SubagentWrite | undefined =>
  list.reduce<SubagentWrite | undefined>((row, w) => (row ? mergeWrite(row, w) : w), stored);

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

  it('changes only what the rules allow: keep columns are the stored row\'s', () => {
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

  it('a fold landing on a stored row equals its writes landing one at a time (why batching is safe)', () => {
    fc.assert(
      fc.property(writes(['s1'], 1), writes(['s1'], 12), (storedList, list) => {
        const stored = storedList[0]!;
        const sameKey = list.map((w) => ({ ...w, tool_call_id: stored.tool_call_id, agent_execution_id: stored.agent_execution_id }));
        expect(mergeWrite(stored, foldByKey(sameKey, rowKey)[0]!)).toEqual(sequential(stored, sameKey));
      }),
    );
  });

  it('any split of a batch into consecutive folds gives the same rows', () => {
    fc.assert(
      fc.property(writes(['s1', 's2'], 20), fc.integer({ min: 0, max: 20 }), (list, cut) => {
        const rows = new Map<string, SubagentWrite>();
        for (const part of [list.slice(0, cut), list.slice(cut)]) {
          for (const w of foldByKey(part, rowKey)) rows.set(rowKey(w), sequential(rows.get(rowKey(w)), [w])!);
        }
        expect(rows).toEqual(byKeySequentially(list));
      }),
    );
  });
});
