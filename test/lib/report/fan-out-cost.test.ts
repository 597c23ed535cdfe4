import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { buildReport } from '../../../lib/report/build.js';
import { FAN_OUT_COST_BUCKETS, type FanOutCost, reportDocument } from '../../../lib/report/document.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession, seedTurn } from '../../support/frames.js';
import { insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R5-3: what a fan-out costs. The report's fan_out_cost section against a model written here,
 * independently of lib/report/fan-out-cost-sql.ts, for random stores (fan-outs across the bucket
 * edges, nested rows, priced, unpriced, legacy and unknown-source events, events on no turn,
 * unreadable turn starts, --task/--session filters and windows), and a few cases by hand.
 */

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;
const NOW = parseRfc3339('2026-08-13T00:00:00Z')!;
const SESSIONS = { s1: 't1', s2: 't2' } as const;
type SessionId = keyof typeof SESSIONS;
const ODD_STARTED = { sqlite: "'garbage'", postgres: "'infinity'" };

interface TurnCase {
  session: SessionId;
  /** started_at's second, or undefined: a value that is not an instant */
  started: number | undefined;
  top: number;
  nested: number;
}
interface EventCase {
  /** a turn's index, or an event on no turn of task_session_turns */
  turn: number | 'null' | 'empty' | 'ghost';
  session: SessionId;
  /** the event's task_id: its session's, or '' (attributed through the session) */
  taskGiven: boolean;
  source: 'provider_reported' | 'models_dev_list' | 'unpriced' | null | 'not_yet_written';
  subcents: number;
  second: number;
}
interface Scope {
  task?: string;
  session?: string;
  window?: [since: number, until: number];
}
interface StoreCase {
  turns: TurnCase[];
  events: EventCase[];
  scope: Scope;
}

const rank = (sorted: readonly number[], p: number) => sorted[Math.ceil((p * sorted.length) / 100) - 1]!;
const bucketOf = (k: number) => (k <= 3 ? k : k <= 5 ? 4 : k <= 8 ? 5 : 6);
const meanOf = (sum: number, n: number) => Math.sign(sum) * Math.floor((2 * Math.abs(sum) + n) / (2 * n));

/** The section as R5-3 states it, from the case itself. */
function model(c: StoreCase): FanOutCost {
  const inFilter = (session: SessionId) =>
    (c.scope.task === undefined || SESSIONS[session] === c.scope.task) &&
    (c.scope.session === undefined || session === c.scope.session);
  const inWindow = (second: number | undefined) =>
    c.scope.window === undefined || (second !== undefined && second >= c.scope.window[0] && second < c.scope.window[1]);
  const perBucket = FAN_OUT_COST_BUCKETS.map(() => ({
    turns: 0,
    costed: [] as number[],
    unpriced: 0,
    none: 0,
    // R6-10: the priced events of the turns that are not costed (an unpriced one adds nothing)
    uncosted: null as number | null,
  }));
  c.turns.forEach((turn, i) => {
    if (!inFilter(turn.session) || !inWindow(turn.started)) return;
    const b = perBucket[bucketOf(turn.top)]!;
    b.turns++;
    const events = c.events.filter((e) => e.turn === i);
    if (events.length === 0) b.none++;
    else if (events.some((e) => e.source === 'unpriced')) {
      b.unpriced++;
      const priced = events.filter((e) => e.source !== 'unpriced');
      if (priced.length > 0) b.uncosted = (b.uncosted ?? 0) + priced.reduce((sum, e) => sum + e.subcents, 0);
    } else b.costed.push(events.reduce((sum, e) => sum + e.subcents, 0));
  });
  const unattributed = c.events.filter((e) => typeof e.turn !== 'number' && inFilter(e.session) && inWindow(e.second));
  return {
    buckets: perBucket.map((b, i) => {
      const sorted = [...b.costed].sort((x, y) => x - y);
      const sum = sorted.reduce((a, v) => a + v, 0);
      const none = sorted.length === 0;
      return {
        fan_out: FAN_OUT_COST_BUCKETS[i]!,
        turns: b.turns,
        costed_turns: sorted.length,
        unpriced_turns: b.unpriced,
        turns_without_cost: b.none,
        unreadable_cost_turns: 0,
        cost_subcents: none ? null : sum,
        mean_subcents: none ? null : meanOf(sum, sorted.length),
        median_subcents: none ? null : rank(sorted, 50),
        p95_subcents: none ? null : rank(sorted, 95),
        // R6-5: no usage rows here: only a turn with no top-level subagent has every one priced
        spend_known_turns: i === 0 ? b.turns : 0,
        subagent_cost_subcents: i === 0 && b.turns > 0 ? 0 : null,
        subagent_share: i === 0 && sorted.some((c) => c > 0) ? 0 : null,
        uncosted_turns_priced_cost_subcents: b.uncosted,
      };
    }),
    unattributed_events: unattributed.length,
    unattributed_cost_subcents:
      unattributed.length === 0
        ? null
        : unattributed.reduce((sum, e) => sum + (e.source === 'unpriced' ? 0 : e.subcents), 0),
    unattributed_unpriced_events: unattributed.filter((e) => e.source === 'unpriced').length,
    // the starts are read only where a window selects by them
    unreadable_started_at:
      c.scope.window === undefined
        ? null
        : c.turns.filter((turn) => inFilter(turn.session) && turn.started === undefined).length,
  };
}

const sessionArb = fc.constantFrom<SessionId>('s1', 's2');
const sometimes = <V>(arb: fc.Arbitrary<V>) =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: arb, weight: 1 });
const turnArb: fc.Arbitrary<TurnCase> = fc.record({
  session: sessionArb,
  started: fc.option(fc.nat({ max: 59 }), { nil: undefined, freq: 6 }),
  // every bucket edge: 0, 1, 2, 3, 4, 5, 6, 8, 9, 11
  top: fc.constantFrom(0, 1, 2, 3, 4, 5, 6, 8, 9, 11),
  nested: fc.nat({ max: 2 }),
});
const caseArb: fc.Arbitrary<StoreCase> = fc.array(turnArb, { minLength: 1, maxLength: 8 }).chain((turns) =>
  fc.record({
    turns: fc.constant(turns),
    events: fc.array(
      fc
        .record({
          turn: fc.oneof(
            fc.nat({ max: turns.length - 1 }),
            fc.constantFrom<'null' | 'empty' | 'ghost'>('null', 'empty', 'ghost'),
          ),
          session: sessionArb,
          taskGiven: fc.boolean(),
          source: fc.constantFrom<EventCase['source']>(
            'provider_reported',
            'models_dev_list',
            'unpriced',
            null,
            'not_yet_written',
          ),
          subcents: fc.integer({ min: -1_000, max: 2_000_000 }),
          second: fc.nat({ max: 59 }),
        })
        // the host stores 0 for an unpriced event
        .map((e) => (e.source === 'unpriced' ? { ...e, subcents: 0 } : e)),
      { maxLength: 12 },
    ),
    // each of the scope's parts in about one case in three, so most cases keep turns in scope
    scope: fc.record({
      task: sometimes(fc.constantFrom('t1', 't2')),
      session: sometimes(sessionArb),
      window: sometimes(
        fc
          .tuple(fc.nat({ max: 59 }), fc.nat({ max: 59 }))
          .map(([a, b]): [number, number] => [Math.min(a, b), Math.max(a, b) + 1]),
      ),
    }),
  }),
);

describe.each(TARGETS)('R5-3 fan_out_cost on %s, host schema', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const odd = ODD_STARTED[target === 'sqlite' ? 'sqlite' : 'postgres'];

  async function clear(db: Queryable) {
    for (const table of ['task_session_subagents', 'office_cost_events', 'task_session_turns', 'task_sessions'])
      await db.query(`DELETE FROM ${table}`);
  }

  async function write(db: Queryable, c: StoreCase) {
    for (const [session, task] of Object.entries(SESSIONS)) await seedSession(db, session, task);
    const rows: StoredRow[] = [];
    for (const [i, turn] of c.turns.entries()) {
      await seedTurn(db, `u${i}`, turn.session);
      const started =
        turn.started === undefined ? odd : `'${db.dialect.encodeTimestamp(parseRfc3339(T(turn.started))!)}'`;
      await db.query(`UPDATE task_session_turns SET started_at = ${started} WHERE id = $1`, [`u${i}`]);
      const base = { task_session_id: turn.session, task_id: SESSIONS[turn.session], turn_id: `u${i}` };
      // rows observed at any time: the window selects turns, not rows
      for (let k = 0; k < turn.top; k++) rows.push({ ...base, tool_call_id: `u${i}-top${k}`, observed_at: T(59 - k) });
      for (let k = 0; k < turn.nested; k++)
        rows.push({
          ...base,
          tool_call_id: `u${i}-nested${k}`,
          parent_tool_call_id: turn.top > 0 ? `u${i}-top0` : 'a-parent-never-seen',
          observed_at: T(k),
        });
    }
    await insertRows(db, rows);
    for (const [j, e] of c.events.entries()) {
      const turn = typeof e.turn === 'number' ? `u${e.turn}` : { null: null, empty: '', ghost: 'u-ghost' }[e.turn];
      await addCostEvent(db, {
        id: `e${j}`,
        session: e.session,
        task: e.taskGiven ? SESSIONS[e.session] : '',
        turn,
        subcents: e.subcents,
        source: e.source,
        at: T(e.second),
      });
    }
  }

  const report = (c: StoreCase) =>
    buildReport(t.db, {
      now: NOW,
      task: c.scope.task,
      session: c.scope.session,
      since: c.scope.window === undefined ? undefined : parseRfc3339(T(c.scope.window[0])),
      until: c.scope.window === undefined ? undefined : parseRfc3339(T(c.scope.window[1])),
    });

  it('R5-3: for any store, filter and window, the buckets equal the model (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        await clear(t.db);
        await write(t.db, c);
        const doc = await report(c);
        expect(doc.fan_out_cost).toEqual(model(c));
      }),
      { numRuns: target === 'sqlite' ? 40 : 12 },
    );
  });

  it("R6-10: without filters, the buckets' cost, their uncosted turns' priced cost and the events on no turn add up to the totals' cost, each event once (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(
        caseArb.map((c) => ({ ...c, scope: {} })),
        async (c) => {
          await clear(t.db);
          await write(t.db, c);
          const doc = await report(c);
          const fo = doc.fan_out_cost!;
          const parts = [
            ...fo.buckets.map((b) => b.cost_subcents),
            ...fo.buckets.map((b) => b.uncosted_turns_priced_cost_subcents),
            fo.unattributed_cost_subcents,
          ].reduce<number>((sum, v) => sum + (v ?? 0), 0);
          // the events as written, each once: an unpriced one adds nothing
          const truth = c.events.reduce((sum, e) => sum + (e.source === 'unpriced' ? 0 : e.subcents), 0);
          expect([parts, doc.totals.cost_subcents ?? 0]).toEqual([truth, truth]);
        },
      ),
      { numRuns: target === 'sqlite' ? 30 : 10 },
    );
  });

  it.each<[string, StoreCase, [costed: number | null, uncosted: number | null, unattributed: number | null]]>([
    [
      'a turn with a priced and an unpriced event: its priced cost closes the sum, never in a costed bucket',
      {
        turns: [{ session: 's1', started: 1, top: 1, nested: 0 }],
        events: [
          { turn: 0, session: 's1', taskGiven: true, source: 'provider_reported', subcents: 350, second: 1 },
          { turn: 0, session: 's1', taskGiven: true, source: 'unpriced', subcents: 0, second: 2 },
        ],
        scope: {},
      },
      [null, 350, null],
    ],
    [
      'a costed turn, an uncosted one and an event on no turn: each in its own part',
      {
        turns: [
          { session: 's1', started: 1, top: 1, nested: 0 },
          { session: 's2', started: 2, top: 1, nested: 0 },
        ],
        events: [
          { turn: 0, session: 's1', taskGiven: true, source: 'models_dev_list', subcents: 6_103, second: 1 },
          { turn: 1, session: 's2', taskGiven: true, source: null, subcents: 350, second: 1 },
          { turn: 1, session: 's2', taskGiven: false, source: 'unpriced', subcents: 0, second: 1 },
          { turn: 'null', session: 's2', taskGiven: true, source: 'provider_reported', subcents: 1_895, second: 3 },
        ],
        scope: {},
      },
      [6_103, 350, 1_895],
    ],
    [
      'a turn with unpriced events only has no priced part: null, never $0',
      {
        turns: [{ session: 's1', started: 1, top: 1, nested: 0 }],
        events: [{ turn: 0, session: 's1', taskGiven: true, source: 'unpriced', subcents: 0, second: 1 }],
        scope: {},
      },
      [null, null, null],
    ],
    [
      'a negative event is summed like any other',
      {
        turns: [{ session: 's1', started: 1, top: 2, nested: 0 }],
        events: [
          { turn: 0, session: 's1', taskGiven: true, source: 'provider_reported', subcents: -410, second: 1 },
          { turn: 0, session: 's1', taskGiven: true, source: 'unpriced', subcents: 0, second: 1 },
        ],
        scope: {},
      },
      [null, -410, null],
    ],
  ])('R6-10: %s', async (_, c, [costed, uncosted, unattributed]) => {
    await write(t.db, c);
    const doc = await report(c);
    const fo = doc.fan_out_cost!;
    const sum = (f: (b: FanOutCost['buckets'][number]) => number | null) =>
      fo.buckets.reduce<number | null>((a, b) => (f(b) === null ? a : (a ?? 0) + f(b)!), null);
    expect([
      sum((b) => b.cost_subcents),
      sum((b) => b.uncosted_turns_priced_cost_subcents),
      fo.unattributed_cost_subcents,
    ]).toEqual([costed, uncosted, unattributed]);
    expect((costed ?? 0) + (uncosted ?? 0) + (unattributed ?? 0)).toBe(doc.totals.cost_subcents);
  });

  it.each(target === 'sqlite' ? ['REAL values in its INTEGER column'] : ['numeric', 'double precision', 'real'])(
    "issue 57 #19, R6-10: a cost column holding fractions (%s): each event is rounded once, half away from zero, before any sum, so the fan-out parts add up to the totals' cost",
    async (type) => {
      // SQLite keeps 1.5 as REAL in the host's INTEGER column; PostgreSQL needs another column type
      if (target !== 'sqlite')
        await t.db.query(`ALTER TABLE office_cost_events ALTER COLUMN cost_subcents TYPE ${type}`);
      const e = (turn: EventCase['turn'], source: EventCase['source'], subcents: number): EventCase => ({
        turn,
        session: 's1',
        taskGiven: true,
        source,
        subcents,
        second: 1,
      });
      await write(t.db, {
        turns: [
          { session: 's1', started: 1, top: 1, nested: 0 },
          { session: 's1', started: 1, top: 2, nested: 0 },
          { session: 's1', started: 1, top: 1, nested: 0 },
        ],
        events: [
          // u0: 1.5 → 2 and 1.5 → 2: 4 (the turn's sum 3.0 read as 3 was the bucket's, beside totals of 4)
          e(0, 'provider_reported', 1.5),
          e(0, 'models_dev_list', 1.5),
          // u1: −2.5 → −3 and 0.25 → 0: −3
          e(1, 'provider_reported', -2.5),
          e(1, null, 0.25),
          // u2, uncosted (an unpriced event): its priced 2.5 → 3
          e(2, 'provider_reported', 2.5),
          e(2, 'unpriced', 0),
          // on no turn: 0.5 → 1
          e('null', 'models_dev_list', 0.5),
        ],
        scope: {},
      });
      const doc = await buildReport(t.db, { now: NOW });
      const fo = doc.fan_out_cost!;
      const [one, two] = [fo.buckets[1]!, fo.buckets[2]!];
      expect([
        one.costed_turns,
        one.cost_subcents,
        one.median_subcents,
        one.uncosted_turns_priced_cost_subcents,
      ]).toEqual([1, 4, 4, 3]);
      expect([two.costed_turns, two.cost_subcents, two.mean_subcents, two.uncosted_turns_priced_cost_subcents]).toEqual(
        [1, -3, -3, null],
      );
      expect([fo.unattributed_events, fo.unattributed_cost_subcents]).toEqual([1, 1]);
      // measured: 2 − 3 + 3; list-priced: 2 + 1; nothing unreadable
      expect([
        doc.totals.cost_subcents,
        doc.totals.measured_cost_subcents,
        doc.totals.list_priced_cost_subcents,
        doc.completeness.unreadable.cost_subcents,
      ]).toEqual([5, 2, 3, 0]);
      const parts = [
        ...fo.buckets.map((b) => b.cost_subcents),
        ...fo.buckets.map((b) => b.uncosted_turns_priced_cost_subcents),
        fo.unattributed_cost_subcents,
      ].reduce<number>((sum, v) => sum + (v ?? 0), 0);
      expect(parts).toBe(doc.totals.cost_subcents);
    },
  );

  it('R5-3: all seven buckets in order, an empty store giving empty buckets with null cost figures', async () => {
    const doc = await buildReport(t.db, { now: NOW });
    expect(reportDocument.safeParse(doc).success).toBe(true);
    expect(doc.fan_out_cost!.buckets.map((b) => b.fan_out)).toEqual(['0', '1', '2', '3', '4-5', '6-8', '9+']);
    for (const b of doc.fan_out_cost!.buckets)
      expect([b.turns, b.costed_turns, b.cost_subcents, b.mean_subcents, b.median_subcents, b.p95_subcents]).toEqual([
        0,
        0,
        null,
        null,
        null,
        null,
      ]);
    expect([doc.fan_out_cost!.unattributed_events, doc.fan_out_cost!.unattributed_cost_subcents]).toEqual([0, null]);
  });

  it('R5-3: a turn with an event whose cost cannot be read is counted apart, never costed (R4-3)', async () => {
    await write(t.db, { turns: [{ session: 's1', started: 1, top: 2, nested: 0 }], events: [], scope: {} });
    const oddCost = target === 'sqlite' ? "'x'" : '0';
    if (target !== 'sqlite') return; // PostgreSQL's INTEGER holds only readable costs
    await t.db.query(
      `INSERT INTO office_cost_events (id, session_id, task_id, turn_id, cost_subcents, estimated, cost_source, occurred_at, created_at)
       VALUES ('odd', 's1', 't1', 'u0', ${oddCost}, 0, 'provider_reported', '2026-08-12 13:00:00', '2026-08-12 13:00:00')`,
    );
    const b = (await buildReport(t.db, { now: NOW })).fan_out_cost!.buckets[2]!;
    expect([b.turns, b.costed_turns, b.unreadable_cost_turns, b.cost_subcents]).toEqual([1, 0, 1, null]);
  });

  it('R5-3: a turn id as long as the host can index (1 MiB on SQLite) and a cost_source the host has not written yet cost nothing but their own figure', async () => {
    // PostgreSQL's btree keys (the turn's primary key) hold at most a third of a page
    const long = 'u'.repeat(target === 'sqlite' ? 1024 * 1024 : 2_000);
    await seedSession(t.db, 's1', 't1');
    await seedTurn(t.db, long, 's1');
    await insertRows(t.db, [{ tool_call_id: 'a', turn_id: long, observed_at: T(1) }]);
    await addCostEvent(t.db, {
      id: 'e1',
      session: 's1',
      task: 't1',
      turn: long,
      subcents: 42,
      source: 'a_future_source',
      at: T(1),
    });
    const b = (await buildReport(t.db, { now: NOW })).fan_out_cost!.buckets[1]!;
    expect([b.turns, b.costed_turns, b.cost_subcents, b.median_subcents]).toEqual([1, 1, 42, 42]);
  });

  it("R5-3: events all on turns of task_session_turns leave nothing unattributed: 0 events and a null cost, not a bucket's", async () => {
    await seedSession(t.db, 's1', 't1');
    await seedTurn(t.db, 'u1', 's1');
    await insertRows(t.db, [{ tool_call_id: 'a', turn_id: 'u1', observed_at: T(1) }]);
    await addCostEvent(t.db, {
      id: 'e1',
      session: 's1',
      task: 't1',
      turn: 'u1',
      subcents: 42,
      source: 'provider_reported',
      at: T(1),
    });
    const section = (await buildReport(t.db, { now: NOW })).fan_out_cost!;
    expect([
      section.unattributed_events,
      section.unattributed_cost_subcents,
      section.unattributed_unpriced_events,
    ]).toEqual([0, null, 0]);
    expect([section.buckets[1]!.turns, section.buckets[1]!.cost_subcents]).toEqual([1, 42]);
  });
});

describe.each(TARGETS)('R5-3 fan_out_cost on %s, minimal schema', (target) => {
  const t = useTestDatabase(target);

  it('R5-3: without a ledger, or with a window over turns without started_at, the section is null and a note says why', async () => {
    expect((await buildReport(t.db, { now: NOW })).fan_out_cost).toBeNull();
    await t.db.query(`CREATE TABLE office_cost_events (
      id TEXT PRIMARY KEY, session_id TEXT, task_id TEXT, turn_id TEXT, cost_subcents INTEGER NOT NULL,
      estimated INTEGER NOT NULL DEFAULT 0, occurred_at TIMESTAMP NOT NULL, created_at TIMESTAMP NOT NULL)`);
    const unwindowed = await buildReport(t.db, { now: NOW });
    expect(unwindowed.fan_out_cost).not.toBeNull();
    // a ledger without cost_source: no turn is known to be unpriced
    expect(unwindowed.fan_out_cost!.buckets[0]!.unpriced_turns).toBeNull();
    const windowed = await buildReport(t.db, { now: NOW, since: parseRfc3339(T(1)) });
    expect(windowed.fan_out_cost).toBeNull();
    expect(windowed.completeness.notes.join(' ')).toMatch(/fan_out_cost is null: .*started_at/);
  });
});
