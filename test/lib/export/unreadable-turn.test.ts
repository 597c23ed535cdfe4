import { describe, expect, it } from 'vitest';
import { unreadableTurn } from '../../../lib/export/unreadable.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/*
 * What the export says of a turn it skips (R4-3, docs/otlp.md#unreadable-values), written out:
 * each unreadable timestamp of the turn's rows and of its task_session_turns row (where the host
 * schema has those columns), as stored, terminal-safe and cut at 40 characters. The export runs
 * (otlp-conventions.test.ts) prove the turn is skipped and the run goes on.
 */

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

describe.each(TARGET_FIXTURES)('R4-3 naming an unreadable turn on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const sqlite = target === 'sqlite';
  const cast = sqlite ? '$1' : '$1::timestamp';
  /** What this dialect's table can hold that is not an instant, and how the reason shows it. */
  const odd = sqlite ? { value: 'garbage', shown: '"garbage"' } : { value: 'infinity', shown: '"infinity"' };
  const set = (table: string, column: string, value: unknown, where: string) =>
    t.db.query(`UPDATE ${table} SET ${column} = ${cast} WHERE ${where}`, [value]);

  it('R4-3: each unreadable time of each row is named with its column, its value and the tool call; a readable turn has no reason', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', turn_id: 'u1', observed_at: T(3), settled_at: null },
      { tool_call_id: 'c', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
    ]);
    const u1 = { changed: 0n, task_session_id: 's1', turn_key: 'u1' };
    expect(await unreadableTurn(t.db, u1)).toBeUndefined();
    await set('task_session_subagents', 'observed_at', odd.value, "tool_call_id = 'a'");
    await set('task_session_subagents', 'updated_at', odd.value, "tool_call_id = 'a'");
    await set('task_session_subagents', 'settled_at', odd.value, "tool_call_id = 'b'");
    await set('task_session_subagents', 'settled_at', odd.value, "tool_call_id = 'c'");
    const reason = await unreadableTurn(t.db, u1);
    expect(reason!.split('; ').sort()).toEqual(
      [
        `observed_at unreadable (${odd.shown}, tool call "a")`,
        `updated_at unreadable (${odd.shown}, tool call "a")`,
        `settled_at unreadable (${odd.shown}, tool call "b")`,
      ].sort(),
    );
    // the other session's turns, and another session, are not this turn
    expect(await unreadableTurn(t.db, { changed: 0n, task_session_id: 's2', turn_key: 'u1' })).toBeUndefined();
  });

  it('R4-3: the rows without a turn are read by the empty turn key', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', turn_id: null, observed_at: T(1), settled_at: T(2) }]);
    await set('task_session_subagents', 'settled_at', odd.value, "tool_call_id = 'a'");
    expect(await unreadableTurn(t.db, { changed: 0n, task_session_id: 's1', turn_key: '' })).toBe(
      `settled_at unreadable (${odd.shown}, tool call "a")`,
    );
  });

  if (fixture === 'host')
    it("R4-3: the host's task_session_turns.started_at and completed_at are named when unreadable", async () => {
      await insertRows(t.db, [{ tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2) }]);
      const u1 = { changed: 0n, task_session_id: 's1', turn_key: 'u1' };
      expect(await unreadableTurn(t.db, u1)).toBeUndefined();
      await set('task_session_turns', 'completed_at', odd.value, "id = 'u1'");
      expect(await unreadableTurn(t.db, u1)).toBe(`task_session_turns.completed_at unreadable (${odd.shown})`);
      await set('task_session_turns', 'started_at', odd.value, "id = 'u1'");
      expect(await unreadableTurn(t.db, u1)).toBe(
        `task_session_turns.started_at unreadable (${odd.shown}); task_session_turns.completed_at unreadable (${odd.shown})`,
      );
      // another session's turn of the same id is not read
      expect(await unreadableTurn(t.db, { changed: 0n, task_session_id: 's2', turn_key: 'u1' })).toBeUndefined();
    });

  if (sqlite)
    it('R4-2, R4-3: a value is shown terminal-safe and cut at 40 characters; a number as its digits', async () => {
      await insertRows(t.db, [
        { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
        { tool_call_id: 'b', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
        { tool_call_id: 'c', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
      ]);
      await set('task_session_subagents', 'observed_at', 'x'.repeat(41), "tool_call_id = 'a'");
      await set('task_session_subagents', 'observed_at', `\u001b[2J${'y'.repeat(33)}`, "tool_call_id = 'b'");
      await set('task_session_subagents', 'observed_at', 1_700_000_000, "tool_call_id = 'c'");
      const reasons = (await unreadableTurn(t.db, { changed: 0n, task_session_id: 's1', turn_key: 'u1' }))!.split('; ');
      expect(reasons.sort()).toEqual(
        [
          `observed_at unreadable ("${'x'.repeat(40)}…", tool call "a")`,
          // ESC shown as \x1B: 40 characters once escaped, so whole
          `observed_at unreadable ("\\\\x1B[2J${'y'.repeat(33)}", tool call "b")`,
          'observed_at unreadable ("1700000000", tool call "c")',
        ].sort(),
      );
    });
});
