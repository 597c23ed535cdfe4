import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { buildReport } from '../../../lib/report/build.js';
import type { Figures, Group, GroupBy } from '../../../lib/report/document.js';
import { insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/** The figures that add up over a partition of the rows (distinct counts, percentiles, sessions do not); null sums kept null. */
function additive(f: Figures) {
  const counts = new Map<string, number>();
  for (const m of f.models.counts) counts.set(m.model, m.subagents);
  const fan = new Map<number, number>();
  for (const b of f.fan_out) fan.set(b.top_level, b.turns);
  return {
    subagents: f.subagents,
    top_level: f.top_level,
    nested: f.nested,
    async: f.async,
    live: f.live,
    backfill: f.backfill,
    settled: f.settled,
    failed: f.failed,
    tokens: f.tokens.sum,
    tokens_reported: f.tokens.reported,
    tool_uses: f.tool_uses.sum,
    tool_uses_reported: f.tool_uses.reported,
    duration_reported: f.duration_ms.reported,
    unknown_execution: f.unknown_execution,
    turns: f.turns,
    models: counts,
    unreported: f.models.unreported,
    fan_out: fan,
  };
}
type Additive = ReturnType<typeof additive>;

function add(a: Additive, b: Additive): Additive {
  const merge = <K>(x: Map<K, number>, y: Map<K, number>) => {
    const out = new Map(x);
    for (const [k, v] of y) out.set(k, (out.get(k) ?? 0) + v);
    return out;
  };
  const out = { ...a };
  for (const key of Object.keys(a) as (keyof Additive)[]) {
    const x = a[key];
    const y = b[key];
    // R3-6: a sum nobody reported is null, never 0: null + null stays null, null + n is n
    (out as Record<string, unknown>)[key] =
      x instanceof Map
        ? merge(x as Map<unknown, number>, y as Map<unknown, number>)
        : x === null
          ? y
          : y === null
            ? x
            : (x as number) + (y as number);
  }
  return out;
}

const sumOf = (groups: readonly Group[]) => groups.map(additive).reduce(add);

/** Rows over 3 tasks, 2 sessions each, 3 turns a session (a turn is one session's), some without a turn. */
const rowArb = fc.record({
  task: fc.integer({ min: 0, max: 2 }),
  session: fc.integer({ min: 0, max: 1 }),
  turn: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
  parent: fc.option(fc.constantFrom('c0', 'c1', ''), { nil: null }),
  execution: fc.constantFrom('unknown', 'e1', 'e2'),
  model: fc.option(fc.constantFrom('m1', 'm2'), { nil: null }),
  tokens: fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: null }),
  tools: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
  duration: fc.option(fc.integer({ min: 0, max: 600_000 }), { nil: null }),
  async: fc.boolean(),
  backfill: fc.boolean(),
  status: fc.option(fc.constantFrom('completed', 'failed', 'cancelled', 'error', 'in_progress'), { nil: null }),
});

describe.each(TARGET_FIXTURES)('report groups add up on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  it('R3-5: for any rows, turn groups sum to session groups, sessions to tasks, tasks to the totals (additive figures)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { minLength: 1, maxLength: 25 }), async (specs) => {
        await t.db.query(`DELETE FROM ${TABLE}`);
        const rows: StoredRow[] = specs.map((s, i) => {
          const session = `t${s.task}-s${s.session}`;
          return {
            task_session_id: session,
            task_id: `t${s.task}`,
            turn_id: s.turn === null ? null : `${session}-u${s.turn}`,
            tool_call_id: `c${i}`,
            agent_execution_id: s.execution,
            parent_tool_call_id: s.parent,
            model: s.model,
            total_tokens: s.tokens,
            tool_use_count: s.tools,
            duration_ms: s.duration,
            is_async: s.async ? 1 : 0,
            source: s.backfill ? 'backfill' : 'live',
            tool_status: s.status,
            settled_at: s.status === null || s.status === 'in_progress' ? null : '2026-08-12T14:00:00Z',
            observed_at: `2026-08-12T13:00:${String(i).padStart(2, '0')}.5Z`,
          };
        });
        await insertRows(t.db, rows);
        const by = async (group: GroupBy) => (await buildReport(t.db, { by: group, graceSeconds: 0 })).groups;
        const [turns, sessions, tasks] = [await by('turn'), await by('session'), await by('task')];
        const totals = (await buildReport(t.db, { graceSeconds: 0 })).totals;
        const sessionOf = (turn: string) => turn.replace(/-u\d$/, '');
        for (const s of sessions.filter((g) => g.subagents > 0)) {
          const own = rows.filter((r) => r.task_session_id === s.key);
          // turn groups of this session, plus its rows without a turn (the NULL-key group spans sessions)
          const withTurn = turns.filter((g) => g.key !== null && sessionOf(g.key) === s.key);
          const withoutTurn = own.filter((r) => r.turn_id === null).length;
          expect(withTurn.reduce((n, g) => n + g.subagents, 0) + withoutTurn).toBe(s.subagents);
          if (withoutTurn === 0) expect(sumOf(withTurn)).toEqual(additive(s));
        }
        expect(sumOf(turns)).toEqual(additive(totals));
        for (const task of tasks) {
          const own = sessions.filter((s) => s.key!.startsWith(`${task.key}-`));
          expect(sumOf(own)).toEqual(additive(task));
          expect(own.reduce((n, s) => n + s.sessions!, 0)).toBe(task.sessions);
        }
        expect(sumOf(sessions)).toEqual(additive(totals));
        // R3-6: in every scope a sum is null exactly when no row reported the metric
        for (const f of [totals, ...turns, ...sessions, ...tasks]) {
          expect(f.tokens.sum === null).toBe(f.tokens.reported === 0);
          expect(f.tool_uses.sum === null).toBe(f.tool_uses.reported === 0);
        }
        expect(sumOf(tasks)).toEqual(additive(totals));
      }),
      { numRuns: target === 'sqlite' ? 25 : 10 },
    );
  }, 300_000);
});
