import { describe, expect, it } from 'vitest';
import { mergeWrite } from '../../../lib/merge.js';
import type { SubagentWrite } from '../../../lib/row.js';
import { readSession, readTurn } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { seedSession, write } from '../../support/frames.js';
import { type RowView, viewOfRow, viewOfWrite } from '../../support/row-view.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

const WRITERS = 8;

/** One frame per writer, all for the same key, disagreeing on purpose. */
const at = (i: number) => `2026-08-12T13:24:5${i}.00000${i}Z`;
const CONTENDERS: SubagentWrite[] = [
  write({
    observed_at: at(0),
    tool_status: 'in_progress',
    subagent_task: { status: 'async_launched', is_async: true },
  }),
  write({ observed_at: at(1), turn_id: 'u1', subagent_task: { model: 'm1' } }),
  write({ observed_at: at(2), tool_status: 'completed', subagent_task: { total_tokens: 100, status: 'completed' } }),
  write({ observed_at: at(3), tool_status: 'failed', subagent_task: { model: 'm3' } }),
  write({ observed_at: at(4), turn_id: 'u2', subagent_task: { total_tokens: 0, tool_use_count: 0 } }),
  write({ observed_at: at(5), subagent_task: { total_tokens: -5, status: 'completed' } }),
  write({ observed_at: at(6), tool_status: 'pending', subagent_task: { description: 'd6' } }),
  write({ observed_at: at(7), subagent_task: { duration_ms: 70, model: 'm7', is_async: false } }),
];

function* permutations<T>(items: readonly T[]): Generator<T[]> {
  if (items.length <= 1) return yield [...items];
  for (const [i, item] of items.entries()) {
    for (const rest of permutations([...items.slice(0, i), ...items.slice(i + 1)])) yield [item, ...rest];
  }
}

/** Every row some serial order of the writes would leave: what an atomic upsert must produce. */
const SERIAL_OUTCOMES: RowView[] = (() => {
  const seen = new Map<string, RowView>();
  for (const order of permutations(CONTENDERS)) {
    const view = viewOfWrite(order.reduce((row, w) => mergeWrite(row, w)));
    seen.set(JSON.stringify(view), view);
  }
  return [...seen.values()];
})();

const withKey = (w: SubagentWrite, toolCallId: string): SubagentWrite => ({ ...w, tool_call_id: toolCallId });

describe.each(TARGETS)('concurrent writers on %s', (name) => {
  const t = useTestDatabase(name);

  it(`AC-14: ${WRITERS} writers on ${WRITERS} connections, one key: one row that some serial order gives`, async () => {
    await seedSession(t.db);
    const connections = CONTENDERS.map(() => t.connect({ max: 1 }));
    await Promise.all(connections.map((db, i) => writeBatch(db, [CONTENDERS[i]!])));
    const rows = await readSession(t.db, 's1');
    expect(rows).toHaveLength(1);
    expect(SERIAL_OUTCOMES).toContainEqual(viewOfRow(rows[0]!));
  });

  it("AC-14: invariants hold: is_async sticky, settled by a terminal frame with its own status, observed_at a frame's", async () => {
    await seedSession(t.db);
    const connections = CONTENDERS.map(() => t.connect({ max: 1 }));
    await Promise.all(connections.map((db, i) => writeBatch(db, [CONTENDERS[i]!])));
    const [row] = await readSession(t.db, 's1');
    const settling = CONTENDERS.map(viewOfWrite).filter((w) => w.settled_at !== null);
    expect(row!.is_async).toBe(1);
    expect(settling.map((w) => [w.settled_at, w.tool_status])).toContainEqual([row!.settled_at, row!.tool_status]);
    expect(CONTENDERS.map((w) => viewOfWrite(w).observed_at)).toContain(row!.observed_at);
    expect(row!.source).toBe('live');
  });

  it(`AC-14: ${WRITERS} concurrent batches over the same keys in different orders all land`, async () => {
    await seedSession(t.db);
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
    const connections = CONTENDERS.map(() => t.connect({ max: 1 }));
    await Promise.all(
      connections.map((db, i) => {
        const order = i % 2 === 0 ? keys : [...keys].reverse();
        return writeBatch(
          db,
          order.map((k) => withKey(CONTENDERS[i]!, k)),
        );
      }),
    );
    const rows = await readSession(t.db, 's1');
    expect(rows.map((r) => r.tool_call_id).sort()).toEqual(keys);
    for (const row of rows) expect(SERIAL_OUTCOMES).toContainEqual({ ...viewOfRow(row), tool_call_id: 'c1' });
  });

  it(`AC-15: an ${WRITERS}-way fan-out written concurrently gives ${WRITERS} rows, each its own frames' merge`, async () => {
    await seedSession(t.db);
    const calls = Array.from({ length: WRITERS }, (_, i) => `toolu_${i}`);
    const framesOf = (toolCallId: string, i: number) => [
      write({
        tool_call_id: toolCallId,
        turn_id: 'turn-1',
        observed_at: at(i),
        subagent_task: { status: 'async_launched', is_async: true, description: `task ${i}` },
      }),
      write({
        tool_call_id: toolCallId,
        turn_id: 'turn-1',
        observed_at: at(i),
        tool_status: 'completed',
        subagent_task: { status: 'completed', total_tokens: 1000 + i, model: `m${i}` },
      }),
    ];
    const connections = calls.map(() => t.connect({ max: 1 }));
    await Promise.all(
      connections.map(async (db, i) => {
        for (const w of framesOf(calls[i]!, i)) await writeBatch(db, [w]);
      }),
    );
    const rows = await readTurn(t.db, 'turn-1');
    expect(rows.map((r) => r.tool_call_id)).toEqual(calls);
    for (const [i, row] of rows.entries()) {
      const [first, second] = framesOf(calls[i]!, i) as [SubagentWrite, SubagentWrite];
      expect(viewOfRow(row)).toEqual(viewOfWrite(mergeWrite(first, second)));
    }
  });
});
