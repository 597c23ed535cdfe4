import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../../../lib/report/document.js';
import { listChangedTurns, nestTurn, readChangedTurns, readTurnsAt, readTurnTrees } from '../../../lib/report/trees.js';
import { ensureSubagentTable } from '../../../lib/store/schema.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

const us = (text: string) => parseRfc3339(text)!;
const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.000001Z`;

/** Just the shape: tool_call_id with its children, recursively. */
const shape = (nodes: readonly TreeNode[]): unknown[] =>
  nodes.map((n) => (n.children.length ? { [n.tool_call_id]: shape(n.children) } : n.tool_call_id));

describe.each(TARGET_FIXTURES)('fan-out trees on %s, %s host schema', (target, fixture) => {
  // R3-3: on the host's real DDL the table is the host's own, with no object of ours on it.
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });

  it('R3-9: a row nests under its parent in the same session and execution; one from another execution is an orphan at the top', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1) },
      { tool_call_id: 'b', parent_tool_call_id: 'a', observed_at: T(2) },
      { tool_call_id: 'c', parent_tool_call_id: 'b', observed_at: T(3) },
      { tool_call_id: 'd', parent_tool_call_id: 'a', agent_execution_id: 'e2', observed_at: T(4) },
      { tool_call_id: 'e', parent_tool_call_id: '', observed_at: T(5) },
    ]);
    const [tree] = await readTurnTrees(t.db);
    expect(shape(tree!.subagents)).toEqual([{ a: [{ b: ['c'] }] }, 'd', 'e']);
    const top = tree!.subagents;
    expect(top.map((n) => n.orphan)).toEqual([undefined, true, undefined]);
    expect(top[1]!.parent_tool_call_id).toBe('a');
    // '' is how the host says "no parent"
    expect(top[2]!.parent_tool_call_id).toBeNull();
  });

  it('R3-6: a row reads with its own values, NULL metrics stay null', async () => {
    await insertRows(t.db, [
      {
        tool_call_id: 'a',
        subagent_type: 'security-reviewer',
        description: 'Review auth',
        model: 'claude-opus-5[1m]',
        agent_status: 'completed',
        tool_status: 'complete',
        total_tokens: 91234,
        tool_use_count: 0,
        duration_ms: 48211,
        observed_at: T(1),
        settled_at: '2026-08-12T13:00:49.123456Z',
      },
      { tool_call_id: 'b', is_async: 1, agent_status: 'async_launched', source: 'backfill', observed_at: T(2) },
    ]);
    const [tree] = await readTurnTrees(t.db);
    const [a, b] = tree!.subagents;
    expect(a).toEqual({
      task_session_id: 's1',
      tool_call_id: 'a',
      agent_execution_id: 'e1',
      parent_tool_call_id: null,
      subagent_type: 'security-reviewer',
      description: 'Review auth',
      agent_id: null,
      child_session_id: null,
      model: 'claude-opus-5[1m]',
      agent_status: 'completed',
      tool_status: 'complete',
      is_async: false,
      source: 'live',
      total_tokens: 91234,
      tool_use_count: 0,
      duration_ms: 48211,
      observed_at: T(1),
      settled_at: '2026-08-12T13:00:49.123456Z',
      children: [],
    });
    expect(b).toMatchObject({
      is_async: true,
      source: 'backfill',
      total_tokens: null,
      tool_use_count: null,
      duration_ms: null,
      settled_at: null,
    });
  });

  it('R4-3: a metric that is not a count in range reads as null and the node names it in unreadable; a NULL or readable one is not named', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', total_tokens: 5, tool_use_count: 2, duration_ms: 30, observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', total_tokens: 5, tool_use_count: 2, duration_ms: 30, observed_at: T(3), settled_at: T(4) },
      { tool_call_id: 'c', total_tokens: 7, observed_at: T(5), settled_at: T(6) },
    ]);
    // written as the host's writer could (its table has no CHECK): raw SQL
    const duration = target === 'sqlite' ? "'1 h'" : '-1';
    await t.db.query("UPDATE task_session_subagents SET total_tokens = -1 WHERE tool_call_id = 'a'");
    await t.db.query(
      `UPDATE task_session_subagents SET tool_use_count = -2147483648, duration_ms = ${duration} WHERE tool_call_id = 'b'`,
    );
    const metrics = (n: TreeNode) => [n.total_tokens, n.tool_use_count, n.duration_ms, n.unreadable];
    const expected = [
      [null, 2, 30, ['total_tokens']],
      [5, null, null, ['tool_use_count', 'duration_ms']],
      [7, null, null, undefined],
    ];
    // the same reading in both orders: the report's --trees and the export's
    const [recent] = await readTurnTrees(t.db);
    expect(recent!.subagents.map(metrics)).toEqual(expected);
    const [changed] = await readChangedTurns(t.db, {});
    expect(changed!.tree.subagents.map(metrics)).toEqual(expected);
    expect('unreadable' in changed!.tree.subagents[2]!).toBe(false);
  });

  it("R3-9: a turn's times are the host's task_session_turns times where it records them, else the span of its rows' observations", async () => {
    // the latest end is neither the first row's nor the last's: b's settled_at
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(10), settled_at: T(30) },
      { tool_call_id: 'b', observed_at: T(20), settled_at: T(45) },
      { tool_call_id: 'c', observed_at: T(25) },
    ]);
    if (fixture === 'host') {
      // The host's SQLite driver keeps nanoseconds and the writer's offset.
      const started =
        t.db.dialect.name === 'sqlite' ? '2026-08-12 15:00:05.000001999+02:00' : '2026-08-12 13:00:05.000001';
      await t.db.query('UPDATE task_session_turns SET started_at = $1, completed_at = NULL WHERE id = $2', [
        started,
        'u1',
      ]);
      // R3-2: digits beyond the microsecond round up, so the instant read is never earlier than the host's.
      const startedAt = t.db.dialect.name === 'sqlite' ? '2026-08-12T13:00:05.000002Z' : T(5);
      const [running] = await readTurnTrees(t.db);
      expect([running!.started_at, running!.completed_at]).toEqual([startedAt, null]);
      await t.db.query('UPDATE task_session_turns SET completed_at = $1 WHERE id = $2', [
        '2026-08-12 13:00:50.000001',
        'u1',
      ]);
      const [done] = await readTurnTrees(t.db);
      expect([done!.started_at, done!.completed_at]).toEqual([startedAt, T(50)]);
    } else {
      const [tree] = await readTurnTrees(t.db);
      expect([tree!.started_at, tree!.completed_at]).toEqual([T(10), T(45)]);
    }
  });

  it('R3-9, R4-10: rows without a turn form one turn of their session; the turn with the latest activity comes first, limit keeps the most recent', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(3) },
      { tool_call_id: 'c', turn_id: null, observed_at: T(2) },
      { tool_call_id: 'd', turn_id: null, observed_at: T(4) },
      { tool_call_id: 'e', turn_id: 'u1', task_session_id: 's2', task_id: 't2', observed_at: T(5) },
    ]);
    const trees = await readTurnTrees(t.db);
    // latest observation: s2/u1 at 5, s1's turnless rows at 4 (though they began at 2), s1/u2 at 3, s1/u1 at 1
    expect(trees.map((x) => [x.task_session_id, x.turn_id, shape(x.subagents)])).toEqual([
      ['s2', 'u1', ['e']],
      ['s1', null, ['c', 'd']],
      ['s1', 'u2', ['b']],
      ['s1', 'u1', ['a']],
    ]);
    expect(trees[0]!.task_id).toBe('t2');
    const recent = await readTurnTrees(t.db, { limit: 2 });
    expect(recent.map((x) => x.turn_id)).toEqual(['u1', null]);
    expect(recent[0]!.task_session_id).toBe('s2');
  });

  it('R4-10, R4-12: under a window a turn ranks by its newest row in the window, and only its rows in the window are read', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a1', turn_id: 'u1', observed_at: T(1) },
      { tool_call_id: 'a9', turn_id: 'u1', observed_at: T(9) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(5) },
      { tool_call_id: 'c', turn_id: 'u3', observed_at: T(8) },
    ]);
    const trees = await readTurnTrees(t.db, { until: us(T(6)) });
    // u1's newest row (9) is outside the window: it ranks by 1, after u2 (5); u3 has no row in it
    expect(trees.map((x) => [x.turn_id, shape(x.subagents)])).toEqual([
      ['u2', ['b']],
      ['u1', ['a1']],
    ]);
    const first = await readTurnTrees(t.db, { until: us(T(6)), limit: 1 });
    expect(first.map((x) => x.turn_id)).toEqual(['u2']);
    const unbounded = await readTurnTrees(t.db, { limit: 1 });
    expect(unbounded.map((x) => [x.turn_id, shape(x.subagents)])).toEqual([['u1', ['a1', 'a9']]]);
  });

  /** The tool call ids a reader gives for a filter, in either order the trees are read (R3-5, R3-10). */
  const READERS = {
    recent: async (filter: Parameters<typeof readTurnTrees>[1]) =>
      (await readTurnTrees(t.db, filter)).flatMap((x) => x.subagents.map((n) => n.tool_call_id)).sort(),
    changed: async (filter: Parameters<typeof readChangedTurns>[1]) =>
      (await readChangedTurns(t.db, filter)).flatMap((x) => x.tree.subagents.map((n) => n.tool_call_id)).sort(),
  };

  it.each(['recent', 'changed'] as const)(
    'R3-5: in %s order, since/until (observed_at), task and session filter the rows',
    async (order) => {
      await insertRows(t.db, [
        { tool_call_id: 'a', observed_at: T(1) },
        { tool_call_id: 'b', observed_at: T(2) },
        { tool_call_id: 'c', observed_at: T(3) },
        { tool_call_id: 'x', task_session_id: 's2', task_id: 't2', observed_at: T(2) },
      ]);
      const ids = READERS[order];
      expect(await ids({ since: us(T(2)), until: us(T(3)) })).toEqual(['b', 'x']);
      expect(await ids({ task: 't2' })).toEqual(['x']);
      expect(await ids({ session: 's1', since: us(T(2)) })).toEqual(['b', 'c']);
    },
  );

  it('R3-10: in changed order, turns come after a position and up to a settle lag, each with its position', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), updated_at: T(30) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(2), updated_at: T(10) },
      { tool_call_id: 'c', turn_id: 'u3', observed_at: T(3), updated_at: T(20) },
      { tool_call_id: 'd', turn_id: 'u3', observed_at: T(4), updated_at: T(11) },
    ]);
    const all = await readChangedTurns(t.db, { order: 'changed' });
    expect(all.map((x) => x.tree.turn_id)).toEqual(['u2', 'u3', 'u1']);
    expect(all[1]!.position).toEqual({ changed: us(T(20)), task_session_id: 's1', turn_key: 'u3' });
    const first = await readChangedTurns(t.db, { order: 'changed', limit: 1 });
    expect(first.map((x) => x.tree.turn_id)).toEqual(['u2']);
    const next = await readChangedTurns(t.db, { order: 'changed', after: first[0]!.position, changedUntil: us(T(25)) });
    expect(next.map((x) => [x.tree.turn_id, shape(x.tree.subagents)])).toEqual([['u3', ['c', 'd']]]);
  });

  it("AC-13: in changed order a turn's rows are in observation order (observed_at, tool_call_id, agent_execution_id), whatever order they were written in", async () => {
    // written in neither that order nor the key's (tool_call_id, agent_execution_id)
    await insertRows(t.db, [
      { tool_call_id: 'a', agent_execution_id: 'e1', observed_at: T(3) },
      { tool_call_id: 'e', agent_execution_id: 'e1', observed_at: T(2) },
      { tool_call_id: 'c', agent_execution_id: 'e0', observed_at: T(2) },
      { tool_call_id: 'b', agent_execution_id: 'e2', observed_at: T(2) },
      { tool_call_id: 'd', agent_execution_id: 'e3', observed_at: T(2) },
      { tool_call_id: 'b', agent_execution_id: 'e0', observed_at: T(2) },
      { tool_call_id: 'b', agent_execution_id: 'e1', observed_at: T(2) },
      { tool_call_id: 'm', agent_execution_id: 'e1', observed_at: T(1) },
    ]);
    const [turn] = await readChangedTurns(t.db, {});
    expect(turn!.tree.subagents.map((n) => `${n.tool_call_id}/${n.agent_execution_id}`)).toEqual([
      'm/e1',
      'b/e0',
      'b/e1',
      'b/e2',
      'c/e0',
      'd/e3',
      'e/e1',
      'a/e1',
    ]);
  });

  it('AC-13, R4-12: rows at one instant order their ids in code-point order (U+FFFD before an emoji), in either tree order', async () => {
    // UTF-16 code units put the emoji (a surrogate pair, D83D DE00) first; code points and bytes put U+FFFD first
    await insertRows(t.db, [
      { tool_call_id: '\u{1F600}', agent_execution_id: 'e1', observed_at: T(2) },
      { tool_call_id: '\uFFFD', agent_execution_id: 'e1', observed_at: T(2) },
      { tool_call_id: 'x', agent_execution_id: '\u{1F600}', observed_at: T(3) },
      { tool_call_id: 'x', agent_execution_id: '\uFFFD', observed_at: T(3) },
    ]);
    const order = ['\uFFFD/e1', '\u{1F600}/e1', 'x/\uFFFD', 'x/\u{1F600}'];
    const ids = (tree: { subagents: readonly TreeNode[] }) =>
      tree.subagents.map((n) => `${n.tool_call_id}/${n.agent_execution_id}`);
    expect(ids((await readChangedTurns(t.db, {}))[0]!.tree)).toEqual(order);
    expect(ids((await readTurnTrees(t.db))[0]!)).toEqual(order);
  });

  it("R4-8: changedAfter lists only the turns changed after it (the export's lookback), up to changedUntil", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), updated_at: T(10) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(2), updated_at: T(20) },
      { tool_call_id: 'c', turn_id: 'u3', observed_at: T(3), updated_at: T(30) },
    ]);
    const keys = async (filter: { changedAfter?: bigint; changedUntil?: bigint }) =>
      (await listChangedTurns(t.db, { order: 'changed', ...filter })).map((x) => x.turn_key);
    expect(await keys({ changedAfter: us(T(10)) })).toEqual(['u2', 'u3']);
    expect(await keys({ changedAfter: us(T(10)) - 1n })).toEqual(['u1', 'u2', 'u3']);
    expect(await keys({ changedAfter: us(T(10)), changedUntil: us(T(20)) })).toEqual(['u2']);
  });

  it('R3-10: readTurnsAt reads the given turns in the order given, leaves out a turn with no rows left, and reads nothing for no turns', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(2) },
    ]);
    const at = (turn_key: string) => ({ changed: us(T(9)), task_session_id: 's1', turn_key });
    const turns = await readTurnsAt(t.db, [at('u2'), at('gone'), at('u1')]);
    expect(turns.map((x) => [x.tree.turn_id, x.position.turn_key])).toEqual([
      ['u2', 'u2'],
      ['u1', 'u1'],
    ]);
    const before = t.db.stats.roundTrips;
    expect(await readTurnsAt(t.db, [])).toEqual([]);
    expect(t.db.stats.roundTrips).toBe(before);
  });

  it("R3-10: readTurnTrees in changed order gives readChangedTurns' trees", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(2), updated_at: T(30) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(1), updated_at: T(10) },
    ]);
    // the most recent activity first would be u1
    const trees = await readTurnTrees(t.db, { order: 'changed' });
    expect(trees.map((x) => x.turn_id)).toEqual(['u2', 'u1']);
    expect(trees).toEqual((await readChangedTurns(t.db, {})).map((x) => x.tree));
  });

  it('R3-5: one catalog read and one statement, however many rows', async () => {
    await insertRows(
      t.db,
      Array.from({ length: 30 }, (_, i) => ({ tool_call_id: `c${i}`, turn_id: `u${i % 4}`, observed_at: T(i) })),
    );
    const before = t.db.stats.roundTrips;
    const trees = await readTurnTrees(t.db);
    expect(trees.flatMap((x) => x.subagents)).toHaveLength(30);
    expect(t.db.stats.roundTrips - before).toBeLessThanOrEqual(2);
  });

  if (fixture === 'minimal') {
    it('R3-3: reads a table without our last_observed_at column and indexes (created by the host)', async () => {
      await t.db.query('DROP TABLE task_session_subagents');
      await t.db.query(`CREATE TABLE task_session_subagents (
  id TEXT PRIMARY KEY, task_session_id TEXT NOT NULL, task_id TEXT NOT NULL, turn_id TEXT, tool_call_id TEXT NOT NULL,
  agent_execution_id TEXT NOT NULL DEFAULT 'unknown', parent_tool_call_id TEXT, subagent_type TEXT, description TEXT,
  agent_id TEXT, child_session_id TEXT, model TEXT, agent_status TEXT, tool_status TEXT, is_async INTEGER NOT NULL DEFAULT 0,
  total_tokens INTEGER, tool_use_count INTEGER, duration_ms INTEGER, source TEXT NOT NULL DEFAULT 'live',
  observed_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL, settled_at TIMESTAMP,
  UNIQUE (task_session_id, agent_execution_id, tool_call_id))`);
      await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1) }]);
      expect((await readTurnTrees(t.db)).map((x) => shape(x.subagents))).toEqual([['a']]);
      await ensureSubagentTable(t.db); // and after migrate adds ours, the same
      expect((await readTurnTrees(t.db)).map((x) => shape(x.subagents))).toEqual([['a']]);
    });
  }
});

describe('nestTurn', () => {
  const node = (tool_call_id: string, parent: string | null, execution = 'e1'): TreeNode => ({
    task_session_id: 's1',
    tool_call_id,
    agent_execution_id: execution,
    parent_tool_call_id: parent,
    subagent_type: null,
    description: null,
    model: null,
    agent_status: null,
    tool_status: null,
    is_async: false,
    source: 'live',
    total_tokens: null,
    tool_use_count: null,
    duration_ms: null,
    observed_at: T(1),
    settled_at: null,
    children: [],
  });

  it("R3-9: a row without a parent is at the top even beside a row whose tool_call_id is 'null'", () => {
    expect(shape(nestTurn([node('null', null), node('a', null)]))).toEqual(['null', 'a']);
  });

  it('R3-9: a parent loop is broken at its earliest row, which is marked orphan', () => {
    const top = nestTurn([node('a', 'b'), node('b', 'a'), node('c', 'c')]);
    expect(shape(top)).toEqual([{ a: ['b'] }, 'c']);
    expect(top.map((n) => n.orphan)).toEqual([true, true]);
  });

  it('R3-9: for any parent links, every row appears exactly once in the tree and only orphans carry the mark', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.option(fc.integer({ min: 0, max: 12 }), { nil: null }), fc.constantFrom('e1', 'e2')), {
          maxLength: 12,
        }),
        (links) => {
          const nodes = links.map(([parent, execution], i) =>
            node(`c${i}`, parent === null ? null : `c${parent}`, execution),
          );
          const seen: string[] = [];
          const walk = (list: TreeNode[], depth: number) => {
            for (const n of list) {
              seen.push(`${n.agent_execution_id}/${n.tool_call_id}`);
              if (depth > 0) expect(n.orphan).toBeUndefined();
              walk(n.children, depth + 1);
            }
          };
          const top = nestTurn(nodes);
          walk(top, 0);
          expect(seen.sort()).toEqual(nodes.map((n) => `${n.agent_execution_id}/${n.tool_call_id}`).sort());
          for (const n of top) expect(n.orphan === true).toBe(n.parent_tool_call_id !== null);
        },
      ),
    );
  });
});
