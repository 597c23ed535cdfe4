import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../lib/report/build.js';
import { reportDocument } from '../../../lib/report/document.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession } from '../../support/frames.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R5-1, R5-2, R5-4 on the host's real DDL (its cost ledger under cost contract v3): an unpriced
 * event is unknown, never 0; where each cost came from; tokens ranked like the durations.
 */

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;
const NOW = parseRfc3339('2026-08-13T00:00:00Z')!;

describe.each(TARGETS)('R5 cost sources on %s, host schema', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const report = (options: Parameters<typeof buildReport>[1] = {}) => buildReport(t.db, { now: NOW, ...options });

  /** Session s1 (task t1) and s2 (task t2), one subagent each; events of the three sources, a legacy one and an odd one. */
  async function ledger() {
    await insertRows(t.db, [
      { tool_call_id: 'a', task_session_id: 's1', task_id: 't1', turn_id: 'u1', observed_at: T(1) },
      { tool_call_id: 'b', task_session_id: 's2', task_id: 't2', turn_id: 'u2', observed_at: T(2) },
    ]);
    const event = (id: string, session: string, subcents: number, source: string | null, estimated: 0 | 1 = 0) =>
      addCostEvent(t.db, { id, session, task: session === 's1' ? 't1' : 't2', subcents, source, estimated, at: T(3) });
    await event('e1', 's1', 400, 'provider_reported');
    await event('e2', 's1', 250, 'models_dev_list', 1);
    // the host stores 0 for an unpriced event; a hostile one stores a price all the same: neither is a cost
    await event('e3', 's1', 0, 'unpriced', 1);
    await event('e4', 's1', 999, 'unpriced');
    await event('e5', 's2', 70, null);
    await event('e6', 's2', 30, 'a_source_not_yet_written');
  }

  it('R5-1: an unpriced event adds nothing to any cost, is counted, and marks every cost figure a lower bound', async () => {
    await ledger();
    const doc = await report({ by: 'task' });
    expect(reportDocument.safeParse(doc).success).toBe(true);
    const { totals } = doc;
    expect(totals.cost_subcents).toBe(400 + 250 + 70 + 30);
    expect(totals.estimated_cost_subcents).toBe(250);
    expect(totals.unpriced_events).toBe(2);
    expect(totals.cost_lower_bound).toBe(true);
    expect(doc.completeness.unpriced_events).toBe(2);
    expect(doc.completeness.notes.join(' ')).toMatch(/2 cost event\(s\) in scope are unpriced .* lower bound/);
    // the contexts: 2 sessions + 2 subagents
    // R6-11: a lower bound's quotient is rounded down (187.5 → 187), never up
    expect(totals.cost_per_context_subcents).toBe(Math.floor(750 / 4));
    const byKey = Object.fromEntries(doc.groups.map((g) => [g.key, g]));
    expect([byKey.t1!.cost_subcents, byKey.t1!.unpriced_events, byKey.t1!.cost_lower_bound]).toEqual([650, 2, true]);
    expect([byKey.t2!.cost_subcents, byKey.t2!.unpriced_events, byKey.t2!.cost_lower_bound]).toEqual([100, 0, false]);
  });

  it('R6-9: the estimated part counts its own unpriced events (estimated = 1) and is a lower bound by them only', async () => {
    await ledger();
    const doc = await report({ by: 'task' });
    expect(reportDocument.safeParse(doc).success).toBe(true);
    const figures = (f: (typeof doc)['totals']) => [
      f.unpriced_events,
      f.cost_lower_bound,
      f.estimated_unpriced_events,
      f.estimated_cost_lower_bound,
    ];
    // e3 (unpriced, estimated) is the estimated part's own; e4 (unpriced, not estimated) is not
    expect(figures(doc.totals)).toEqual([2, true, 1, true]);
    const byKey = Object.fromEntries(doc.groups.map((g) => [g.key, g]));
    expect(figures(byKey.t1!)).toEqual([2, true, 1, true]);
    expect(figures(byKey.t2!)).toEqual([0, false, 0, false]);
  });

  it('R6-9: an unpriced event that is not estimated leaves the estimated part exact', async () => {
    await seedSession(t.db, 's1', 't1');
    await addCostEvent(t.db, {
      id: 'e1',
      session: 's1',
      task: 't1',
      subcents: 40,
      source: 'provider_reported',
      estimated: 1,
      at: T(1),
    });
    await addCostEvent(t.db, { id: 'e2', session: 's1', task: 't1', source: 'unpriced', at: T(1) });
    const { totals } = await report();
    expect([totals.cost_subcents, totals.cost_lower_bound]).toEqual([40, true]);
    expect([
      totals.estimated_cost_subcents,
      totals.estimated_unpriced_events,
      totals.estimated_cost_lower_bound,
    ]).toEqual([40, 0, false]);
  });

  it('R5-1: an unpriced event stores no readable cost, so an odd cost_subcents on it is not counted unreadable', async () => {
    await seedSession(t.db, 's1', 't1');
    // an odd value where the column type allows one (text on SQLite; a negative on PostgreSQL is read)
    const odd = target === 'sqlite' ? "'n/a'" : '0';
    await t.db.query(
      `INSERT INTO office_cost_events (id, session_id, task_id, cost_subcents, estimated, cost_source, occurred_at, created_at)
       VALUES ('e1', 's1', 't1', ${odd}, 0, 'unpriced', '2026-08-12 13:00:00', '2026-08-12 13:00:00')`,
    );
    const doc = await report();
    expect(doc.completeness.unreadable.cost_subcents).toBe(0);
    expect([doc.totals.cost_subcents, doc.totals.unpriced_events, doc.totals.cost_lower_bound]).toEqual([0, 1, true]);
  });

  // PostgreSQL's INTEGER holds only readable costs: an unreadable one exists on SQLite alone
  it.runIf(target === 'sqlite')(
    'issue 58 (R3-6, R4-3): a scope whose only cost event is unreadable has its cost and every part of it null; its counts stay counts',
    async () => {
      await seedSession(t.db, 's1', 't1');
      await t.db.query(
        `INSERT INTO office_cost_events (id, session_id, task_id, cost_subcents, estimated, cost_source, occurred_at, created_at)
         VALUES ('e1', 's1', 't1', 'n/a', 0, 'provider_reported', '2026-08-12 13:00:00', '2026-08-12 13:00:00')`,
      );
      const { totals, completeness } = await report();
      expect(completeness.unreadable.cost_subcents).toBe(1);
      expect([
        totals.cost_subcents,
        totals.estimated_cost_subcents,
        totals.measured_cost_subcents,
        totals.list_priced_cost_subcents,
        totals.cost_per_context_subcents,
      ]).toEqual([null, null, null, null, null]);
      expect([totals.unpriced_events, totals.estimated_unpriced_events, totals.cost_lower_bound]).toEqual([
        0,
        0,
        false,
      ]);
    },
  );

  it.runIf(target === 'sqlite')(
    'issue 58: beside a readable event, an unreadable one of another source adds nothing to its part (0, never null)',
    async () => {
      await seedSession(t.db, 's1', 't1');
      await addCostEvent(t.db, {
        id: 'e1',
        session: 's1',
        task: 't1',
        subcents: 5,
        source: 'models_dev_list',
        at: T(1),
      });
      await t.db.query(
        `INSERT INTO office_cost_events (id, session_id, task_id, cost_subcents, estimated, cost_source, occurred_at, created_at)
         VALUES ('e2', 's1', 't1', 'n/a', 1, 'provider_reported', '2026-08-12 13:00:00', '2026-08-12 13:00:00')`,
      );
      const { totals } = await report();
      expect([
        totals.cost_subcents,
        totals.estimated_cost_subcents,
        totals.measured_cost_subcents,
        totals.list_priced_cost_subcents,
      ]).toEqual([5, 0, 0, 5]);
    },
  );

  it.each([
    ['an empty session', { session: 's-empty' }],
    ['an unknown task', { task: 'no-such-task' }],
  ])(
    'issue 58: a scope with no cost event (%s) counts 0 unpriced events, known, and its cost is null',
    async (_, scope) => {
      await ledger();
      await seedSession(t.db, 's-empty', 't1');
      const { totals, completeness } = await report(scope);
      expect([totals.cost_subcents, totals.unpriced_events, totals.estimated_unpriced_events]).toEqual([null, 0, 0]);
      expect(completeness.unpriced_events).toBe(0);
    },
  );

  it('issue 58: a task group with no cost event counts 0 unpriced events, its cost null', async () => {
    await ledger();
    await seedSession(t.db, 's3', 't3');
    const byTask = await report({ by: 'task' });
    const t3 = byTask.groups.find((g) => g.key === 't3')!;
    expect([t3.cost_subcents, t3.unpriced_events, t3.estimated_unpriced_events]).toEqual([null, 0, 0]);
  });

  it.each(['UNPRICED', 'Unpriced', ' unpriced', 'unpriced ', 'Provider_Reported'])(
    'issue 58: a cost_source is compared exactly as the host writes it: %j is neither measured, list-priced nor unpriced, its cost summed as other',
    async (spelling) => {
      await seedSession(t.db, 's1', 't1');
      await addCostEvent(t.db, { id: 'e1', session: 's1', task: 't1', subcents: 7, source: spelling, at: T(1) });
      const { totals } = await report();
      expect([
        totals.cost_subcents,
        totals.unpriced_events,
        totals.cost_lower_bound,
        totals.measured_cost_subcents,
        totals.list_priced_cost_subcents,
      ]).toEqual([7, 0, false, 0, 0]);
    },
  );

  it('R5-1: a scope whose events are all priced is no lower bound (unpriced_events 0, not null)', async () => {
    await seedSession(t.db, 's1', 't1');
    await addCostEvent(t.db, {
      id: 'e1',
      session: 's1',
      task: 't1',
      subcents: 5,
      source: 'provider_reported',
      at: T(1),
    });
    const { totals, completeness } = await report();
    expect([totals.cost_subcents, totals.unpriced_events, totals.cost_lower_bound]).toEqual([5, 0, false]);
    expect(completeness.unpriced_events).toBe(0);
    // no unpriced event, no note of them (a note saying 0 are unpriced would be noise)
    expect(completeness.notes.join(' ')).not.toMatch(/unpriced/);
  });

  it('R5-1: --since/--until count only the unpriced events in the window', async () => {
    await seedSession(t.db, 's1', 't1');
    await addCostEvent(t.db, { id: 'in', session: 's1', task: 't1', subcents: 0, source: 'unpriced', at: T(10) });
    await addCostEvent(t.db, { id: 'out', session: 's1', task: 't1', subcents: 0, source: 'unpriced', at: T(30) });
    await addCostEvent(t.db, { id: 'p', session: 's1', task: 't1', subcents: 8, source: 'models_dev_list', at: T(11) });
    const { totals } = await report({ since: parseRfc3339(T(5)), until: parseRfc3339(T(20)) });
    expect([totals.cost_subcents, totals.unpriced_events, totals.list_priced_cost_subcents]).toEqual([8, 1, 8]);
  });

  it('R5-2: measured and list-priced parts beside the cost; legacy and unknown sources are neither', async () => {
    await ledger();
    const doc = await report({ by: 'session' });
    expect(doc.totals.measured_cost_subcents).toBe(400);
    expect(doc.totals.list_priced_cost_subcents).toBe(250);
    const s2 = doc.groups.find((g) => g.key === 's2')!;
    expect([s2.cost_subcents, s2.measured_cost_subcents, s2.list_priced_cost_subcents]).toEqual([100, 0, 0]);
  });

  it('R5-1, R5-2: a group with no cost of its own (by type) has every cost figure null and no lower bound', async () => {
    await ledger();
    const doc = await report({ by: 'type' });
    for (const g of doc.groups) {
      expect([g.cost_subcents, g.unpriced_events, g.measured_cost_subcents, g.list_priced_cost_subcents]).toEqual([
        null,
        null,
        null,
        null,
      ]);
      expect(g.cost_lower_bound).toBe(false);
    }
  });

  it('R5-4: tokens carry nearest-rank p50 and p95 and the max over the reported values only', async () => {
    const tokens = [10, null, 40, 20, 30, null];
    await insertRows(
      t.db,
      tokens.map((total_tokens, i) => ({ tool_call_id: `c${i}`, total_tokens, observed_at: T(i) })),
    );
    const doc = await report({ by: 'task' });
    // sorted 10 20 30 40: rank ⌈0.5·4⌉ = 2 → 20, ⌈0.95·4⌉ = 4 → 40
    expect(doc.totals.tokens).toEqual({ sum: 100, reported: 4, p50: 20, p95: 40, max: 40 });
    expect(doc.groups[0]!.tokens).toEqual(doc.totals.tokens);
  });

  it("R5-4: the page's series keep a group's token sum and count only", async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', total_tokens: 7, observed_at: T(1) }]);
    const doc = await report({ pageData: true });
    expect(doc.series!.day![0]!.tokens).toEqual({ sum: 7, reported: 1 });
  });
});

describe.each(TARGETS)('R5-1, R5-2 on %s: a ledger before cost contract v3', (target) => {
  const t = useTestDatabase(target);

  it('R5-1: without cost_source every event is priced as before, and unpriced_events is null (not known), never 0', async () => {
    await t.db.query(`CREATE TABLE office_cost_events (
      id TEXT PRIMARY KEY, session_id TEXT, task_id TEXT, turn_id TEXT, cost_subcents INTEGER NOT NULL,
      estimated INTEGER NOT NULL DEFAULT 0, occurred_at TIMESTAMP NOT NULL, created_at TIMESTAMP NOT NULL)`);
    await seedSession(t.db, 's1', 't1');
    await addCostEvent(t.db, { id: 'e1', session: 's1', task: 't1', subcents: 0, at: T(1) });
    await addCostEvent(t.db, { id: 'e2', session: 's1', task: 't1', subcents: 12, at: T(1) });
    const doc = await report(t.db);
    expect(doc.totals.cost_subcents).toBe(12);
    expect(doc.totals.unpriced_events).toBeNull();
    expect(doc.totals.cost_lower_bound).toBe(false);
    // R6-9: the estimated part's own count is not known either
    expect([doc.totals.estimated_unpriced_events, doc.totals.estimated_cost_lower_bound]).toEqual([null, false]);
    expect([doc.totals.measured_cost_subcents, doc.totals.list_priced_cost_subcents]).toEqual([null, null]);
    expect(doc.completeness.unpriced_events).toBeNull();
    expect(doc.completeness.notes.join(' ')).not.toMatch(/unpriced/);
  });
});

const report = (db: Parameters<typeof buildReport>[0]) => buildReport(db, { now: NOW });

describe.each(TARGETS)('R6-11 on %s: one rounding rule for a cost per context', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });

  it.each<[string, [number, string][], number]>([
    ['half away from zero: 3 ÷ 2 = 1.5 → 2', [[3, 'provider_reported']], 2],
    ['a negative cost mirrors it: −3 ÷ 2 = −1.5 → −2, never −1', [[-3, 'provider_reported']], -2],
    [
      '−5 ÷ 2 = −2.5 → −3',
      [
        [5, 'provider_reported'],
        [-10, 'models_dev_list'],
      ],
      -3,
    ],
    [
      'a lower bound is rounded down: ≥ 3 ÷ 2 → 1',
      [
        [3, 'provider_reported'],
        [0, 'unpriced'],
      ],
      1,
    ],
    [
      'a negative lower bound too: ≥ −3 ÷ 2 → −2',
      [
        [-3, 'provider_reported'],
        [0, 'unpriced'],
      ],
      -2,
    ],
  ])('R6-11: %s', async (_, events, perContext) => {
    // two sessions and no subagent: two contexts
    await seedSession(t.db, 's1', 't1');
    await seedSession(t.db, 's2', 't1');
    for (const [i, [subcents, source]] of events.entries())
      await addCostEvent(t.db, { id: `e${i}`, session: 's1', task: 't1', subcents, source, at: T(1) });
    const { totals } = await buildReport(t.db, { now: NOW });
    expect([totals.contexts, totals.cost_per_context_subcents]).toEqual([2, perContext]);
  });
});
