import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byGroup, failedUnderFifo, GroupGate, groupOf } from '../../../lib/ingest/fifo.js';

// Pure unit tests, Powertools style (prepare / act / assess), no SQS and no database.
interface Item {
  id: string;
  group: string;
  fails: boolean;
}
const item = (id: string, group: string, fails = false): Item => ({ id, group, fails });
const ids = (items: Iterable<Item>) => [...items].map((i) => i.id);

describe('fifo.ts: the FIFO group rule (docs/ingest.md)', () => {
  it('docs/ingest.md FIFO rule: a failed record fails every later record of its group, and no earlier one', () => {
    // Prepare
    const items = [item('a1', 'a'), item('a2', 'a', true), item('b1', 'b'), item('a3', 'a'), item('b2', 'b')];
    // Act
    const failed = failedUnderFifo(
      items,
      (i) => i.group,
      (i) => i.fails,
    );
    // Assess
    expect(ids(failed)).toEqual(['a2', 'a3']);
  });

  it('docs/ingest.md FIFO rule: a failure in one group never fails another group', () => {
    const items = [item('a1', 'a', true), item('b1', 'b'), item('c1', 'c', true), item('b2', 'b')];
    const failed = failedUnderFifo(
      items,
      (i) => i.group,
      (i) => i.fails,
    );
    expect(ids(failed)).toEqual(['a1', 'c1']);
  });

  it('docs/ingest.md FIFO rule: for any batch, the failed records of a group are exactly a suffix starting at its first own failure', () => {
    const batch = fc.array(fc.record({ group: fc.constantFrom('a', 'b', 'c'), fails: fc.boolean() }), {
      maxLength: 20,
    });
    fc.assert(
      fc.property(batch, (raw) => {
        const items = raw.map((r, n) => item(`m${n}`, r.group, r.fails));
        const failed = failedUnderFifo(
          items,
          (i) => i.group,
          (i) => i.fails,
        );
        for (const members of byGroup(items, (i) => i.group)) {
          const first = members.findIndex((m) => m.fails);
          const expected = first === -1 ? [] : members.slice(first);
          expect(members.filter((m) => failed.has(m))).toEqual(expected);
        }
      }),
    );
  });

  it('GroupGate: blocks a group only after it failed', () => {
    const gate = new GroupGate();
    expect(gate.blocks('a')).toBe(false);
    gate.fail('a');
    expect([gate.blocks('a'), gate.blocks('b')]).toEqual([true, false]);
  });

  it('byGroup keeps arrival order within each group and orders groups by first appearance', () => {
    const items = [item('b1', 'b'), item('a1', 'a'), item('b2', 'b')];
    expect(byGroup(items, (i) => i.group).map(ids)).toEqual([['b1', 'b2'], ['a1']]);
  });

  it('R2-3: a record without attributes is a group of its own, named validly for SQS', () => {
    // Prepare
    const lone = { messageId: 'm-1' };
    const empty = { messageId: 'm-2', attributes: {} };
    const grouped = { messageId: 'm-3', attributes: { MessageGroupId: 's1' } };
    // Act
    const groups = [lone, empty, grouped].map(groupOf);
    // Assess
    expect(groups).toEqual(['ungrouped:m-1', 'ungrouped:m-2', 's1']);
    expect(groups[0]).toMatch(/^[\x21-\x7e]{1,128}$/); // SQS MessageGroupId: printable ASCII, ≤ 128
  });

  it('R2-3: records without a group never block each other', () => {
    const records = [{ messageId: 'x' }, { messageId: 'y' }];
    const failed = failedUnderFifo(records, groupOf, (r) => r.messageId === 'x');
    expect([...failed].map((r) => r.messageId)).toEqual(['x']);
  });
});
