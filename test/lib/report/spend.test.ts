import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { jsonDocument } from '../../../lib/json-document.js';
import { buildReport } from '../../../lib/report/build.js';
import { reportDocument, SPEND_NOT_COLLECTED, type Spend } from '../../../lib/report/document.js';
import { SPEND_NOT_COLLECTED_NOTE } from '../../../lib/report/notes.js';
import { USAGE_TABLE } from '../../../lib/store/usage-table.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession, seedTurn } from '../../support/frames.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, type TargetName, useTestDatabase } from '../../support/targets.js';
import { fiveSubagents, insertUsage, type UsageFields } from '../../support/usage-rows.js';

/*
 * R6-5 (docs/report.md#what-subagents-spent): the report's spend, from task_session_subagent_usage
 * joined to each row on its key. Every expectation below is worked out by hand from the rows
 * written here.
 */

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;
const NOW = parseRfc3339('2026-08-13T00:00:00Z')!;

const spend = (figures: Partial<Spend>): Spend => ({
  subagents_with_usage: 0,
  complete: 0,
  tokens_in: null,
  tokens_out: null,
  tokens_cached_read: null,
  tokens_cached_write: null,
  tokens_reasoning: null,
  cost_subcents: null,
  measured_cost_subcents: null,
  list_priced_cost_subcents: null,
  unpriced: 0,
  cost_lower_bound: false,
  cost_p50_subcents: null,
  cost_p95_subcents: null,
  cost_max_subcents: null,
  ...figures,
});

/** The totals of fiveSubagents, worked by hand: priced a 100, b 300, c 50; d unpriced and not final. */
const FIVE: Spend = spend({
  subagents_with_usage: 4,
  complete: 3,
  tokens_in: 35,
  tokens_out: 5,
  tokens_cached_read: 7,
  cost_subcents: 450,
  measured_cost_subcents: 150,
  list_priced_cost_subcents: 300,
  unpriced: 1,
  cost_lower_bound: true,
  // sorted 50 100 300: rank ⌈0.5·3⌉ = 2 → 100, ⌈0.95·3⌉ = 3 → 300
  cost_p50_subcents: 100,
  cost_p95_subcents: 300,
  cost_max_subcents: 300,
});

describe.each(TARGETS)('R6-5 the report spend on %s', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const report = (options: Parameters<typeof buildReport>[1] = {}) => buildReport(t.db, { now: NOW, ...options });

  it('R6-5: a store without task_session_subagent_usage has every spend figure null, never 0, and a note says spend is not collected', async () => {
    await fiveSubagents(t.db);
    await t.db.query(`DROP TABLE ${USAGE_TABLE}`);
    const doc = await report({ by: 'type' });
    expect(reportDocument.safeParse(doc).success).toBe(true);
    expect(doc.totals.spend).toEqual(SPEND_NOT_COLLECTED);
    for (const g of doc.groups) expect(g.spend).toEqual(SPEND_NOT_COLLECTED);
    expect(doc.completeness.notes).toContain(SPEND_NOT_COLLECTED_NOTE);
    for (const b of doc.fan_out_cost!.buckets)
      expect([b.spend_known_turns, b.subagent_cost_subcents, b.subagent_share]).toEqual([null, null, null]);
  });

  it('R6-5: coverage, token sums, cost by source, unpriced and nearest-rank p50/p95/max over the priced runs', async () => {
    await fiveSubagents(t.db);
    const doc = await report();
    expect(reportDocument.safeParse(doc).success).toBe(true);
    expect(doc.totals.spend).toEqual(FIVE);
    expect(doc.completeness.notes).not.toContain(SPEND_NOT_COLLECTED_NOTE);
  });

  it('R6-5: --by type answers what one subagent of each type spent (p50, p95 per subagent in the group)', async () => {
    await fiveSubagents(t.db);
    const doc = await report({ by: 'type' });
    const byKey = Object.fromEntries(doc.groups.map((g) => [g.key, g.spend]));
    expect(byKey.Explore).toEqual(
      spend({
        subagents_with_usage: 2,
        complete: 2,
        tokens_in: 30,
        tokens_out: 5,
        tokens_cached_read: 7,
        cost_subcents: 400,
        measured_cost_subcents: 100,
        list_priced_cost_subcents: 300,
        cost_p50_subcents: 100,
        cost_p95_subcents: 300,
        cost_max_subcents: 300,
      }),
    );
    // c priced and final, d unpriced and not final, e without usage
    expect(byKey.Plan).toEqual(
      spend({
        subagents_with_usage: 2,
        complete: 1,
        tokens_in: 5,
        cost_subcents: 50,
        measured_cost_subcents: 50,
        list_priced_cost_subcents: 0,
        unpriced: 1,
        cost_lower_bound: true,
        cost_p50_subcents: 50,
        cost_p95_subcents: 50,
        cost_max_subcents: 50,
      }),
    );
  });

  it('R6-5: --by model and every other --by carry spend on each group, their groups adding up to the totals', async () => {
    await fiveSubagents(t.db);
    const byModel = await report({ by: 'model' });
    expect(Object.fromEntries(byModel.groups.map((g) => [g.key, g.spend.cost_p50_subcents]))).toEqual({
      sonnet: 100,
      haiku: 50,
    });
    for (const by of ['task', 'session', 'turn', 'day'] as const) {
      const doc = await report({ by });
      expect(
        doc.groups.map((g) => g.spend),
        by,
      ).toEqual([FIVE]);
    }
  });

  it("R6-5: the page's series groups carry spend but its per-subagent percentiles, rolled up like the other figures", async () => {
    await fiveSubagents(t.db);
    const doc = await report({ pageData: true });
    const { cost_p50_subcents: _p50, cost_p95_subcents: _p95, ...lean } = FIVE;
    expect(doc.series!.day!.map((g) => g.spend)).toEqual([lean]);
    expect(reportDocument.safeParse(doc).success).toBe(true);
  });

  it.each([
    ['every run priced and final', { complete: 1 }, false],
    ['a run not final (complete 0)', { complete: 0 }, true],
    ['a run whose completeness is not reported (NULL)', { complete: null }, true],
    ['a run unpriced', { complete: 1, cost_source: 'unpriced', cost_subcents: null }, true],
  ] as const)('R6-5: cost_lower_bound with %s', async (_name, fields, lowerBound) => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1) }]);
    await insertUsage(t.db, { tool_call_id: 'a' }, { cost_subcents: 7, cost_source: 'provider_reported', ...fields });
    const { totals } = await report();
    expect(totals.spend.cost_lower_bound).toBe(lowerBound);
  });

  it('R6-5: rows without usage are no lower bound: subagents_with_usage 0, every sum null, no cost known', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1) }]);
    expect((await report()).totals.spend).toEqual(spend({}));
  });

  it('R6-5, R6-1: a priced 0 with tokens above 0 is no price (unpriced); a 0 with no tokens is a measured 0', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1) },
      { tool_call_id: 'b', observed_at: T(2) },
    ]);
    await insertUsage(
      t.db,
      { tool_call_id: 'a' },
      { tokens_out: 3, cost_subcents: 0, cost_source: 'provider_reported', complete: 1 },
    );
    await insertUsage(
      t.db,
      { tool_call_id: 'b' },
      { tokens_out: 0, cost_subcents: 0, cost_source: 'provider_reported', complete: 1 },
    );
    const { totals } = await report();
    expect([totals.spend.cost_subcents, totals.spend.unpriced, totals.spend.cost_lower_bound]).toEqual([0, 1, true]);
  });

  it('R6-5, R4-3: a sum beyond 2^53 − 1 is null with a note; the other figures stay exact', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1) },
      { tool_call_id: 'b', observed_at: T(2) },
    ]);
    const max = { sql: String(Number.MAX_SAFE_INTEGER) };
    await insertUsage(t.db, { tool_call_id: 'a' }, { tokens_in: max, tokens_out: 2, complete: 1 });
    await insertUsage(t.db, { tool_call_id: 'b' }, { tokens_in: 1, tokens_out: 3, complete: 1 });
    const doc = await report();
    expect([doc.totals.spend.tokens_in, doc.totals.spend.tokens_out]).toEqual([null, 5]);
    expect(doc.completeness.notes).toContain(
      'the spend sum of 1 scope(s) is null: it exceeds 2^53 − 1, beyond what a JSON reader keeps exactly.',
    );
  });

  it('R6-5, R4-3: a sum past 2^63 over 1,100 runs costs its figure, never the statement (no integer overflow on either dialect)', async () => {
    await insertRows(t.db, [{ tool_call_id: 'seed', observed_at: T(1) }]);
    // 1,100 more rows of session s1, each with usage of 2^53 − 1 input tokens: 2^63 < 1,101 · (2^53 − 1)
    await t.db.query(
      `INSERT INTO task_session_subagents (id, task_session_id, task_id, turn_id, tool_call_id, agent_execution_id, is_async, source, observed_at, updated_at)
       SELECT 's1/e1/r' || n, 's1', 't1', 'u1', 'r' || n, 'e1', 0, 'live', observed_at, updated_at
       FROM task_session_subagents, (WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 1100) SELECT n FROM k) k
       WHERE tool_call_id = 'seed'`,
    );
    await t.db.query(
      `INSERT INTO ${USAGE_TABLE} (task_session_id, agent_execution_id, tool_call_id, tokens_in, cost_subcents, cost_source, complete, observed_at)
       SELECT task_session_id, agent_execution_id, tool_call_id, ${Number.MAX_SAFE_INTEGER}, ${Number.MAX_SAFE_INTEGER}, 'provider_reported', 1, observed_at
       FROM task_session_subagents`,
    );
    const doc = await report({ by: 'type', pageData: true });
    expect(doc.totals.spend.subagents_with_usage).toBe(1101);
    expect([doc.totals.spend.tokens_in, doc.totals.spend.cost_subcents]).toEqual([null, null]);
    expect(doc.totals.spend.cost_max_subcents).toBe(Number.MAX_SAFE_INTEGER);
    expect(doc.completeness.notes.join(' ')).toMatch(/the spend sum of 2 scope\(s\) is null/);
  });
});

/** What an unpriced run leaves of the baseline: no cost, counted unpriced, a lower bound. */
const UNPRICED: Partial<Spend> = {
  cost_subcents: null,
  measured_cost_subcents: null,
  list_priced_cost_subcents: null,
  unpriced: 1,
  cost_lower_bound: true,
  cost_p50_subcents: null,
  cost_p95_subcents: null,
  cost_max_subcents: null,
};

/**
 * R6-5, R4-3: one hostile value each, beside a run otherwise priced and final (tokens_in 10, cost
 * 100 provider_reported): the figure it costs, the count that says so, every other figure exact.
 * `targets`: where the column's type can hold it (PostgreSQL's BIGINT holds no text nor 1e300).
 */
const HOSTILE: readonly {
  name: string;
  fields: UsageFields;
  targets: readonly TargetName[];
  spend: Partial<Spend>;
  unreadable: Partial<Record<'usage_tokens' | 'usage_cost_subcents' | 'usage_cost_source' | 'usage_complete', number>>;
}[] = [
  {
    name: 'a negative token count',
    fields: { tokens_in: -1 },
    targets: TARGETS,
    spend: { tokens_in: null },
    unreadable: { usage_tokens: 1 },
  },
  {
    name: 'a token count of 2^53 + 1',
    fields: { tokens_in: { sql: '9007199254740993' } },
    targets: TARGETS,
    spend: { tokens_in: null },
    unreadable: { usage_tokens: 1 },
  },
  {
    name: 'a token count in text',
    fields: { tokens_in: 'lots' },
    targets: ['sqlite'],
    spend: { tokens_in: null },
    unreadable: { usage_tokens: 1 },
  },
  {
    name: 'a token count of 1e300',
    fields: { tokens_in: { sql: '1e300' } },
    targets: ['sqlite'],
    spend: { tokens_in: null },
    unreadable: { usage_tokens: 1 },
  },
  {
    name: 'a negative cost',
    fields: { cost_subcents: -5 },
    targets: TARGETS,
    spend: UNPRICED,
    unreadable: { usage_cost_subcents: 1 },
  },
  {
    name: 'a cost of 2^53 + 1',
    fields: { cost_subcents: { sql: '9007199254740993' } },
    targets: TARGETS,
    spend: UNPRICED,
    unreadable: { usage_cost_subcents: 1 },
  },
  {
    name: 'a cost in text',
    fields: { cost_subcents: 'a dollar' },
    targets: ['sqlite'],
    spend: UNPRICED,
    unreadable: { usage_cost_subcents: 1 },
  },
  {
    name: 'a cost of 1e300',
    fields: { cost_subcents: { sql: '1e300' } },
    targets: ['sqlite'],
    spend: UNPRICED,
    unreadable: { usage_cost_subcents: 1 },
  },
  {
    name: 'a priced source with no cost (NULL)',
    fields: { cost_subcents: null },
    targets: TARGETS,
    spend: UNPRICED,
    unreadable: {},
  },
  {
    name: 'a cost with no source (NULL)',
    fields: { cost_source: null },
    targets: TARGETS,
    spend: UNPRICED,
    unreadable: {},
  },
  ...['Provider_Reported', 'provider_reported ', 'models.dev', ''].map((source) => ({
    name: `cost_source ${JSON.stringify(source)}`,
    fields: { cost_source: source },
    targets: TARGETS,
    spend: UNPRICED,
    unreadable: { usage_cost_source: 1 },
  })),
  {
    name: 'cost_source a number',
    fields: { cost_source: { sql: '42' } },
    targets: TARGETS,
    spend: UNPRICED,
    unreadable: { usage_cost_source: 1 },
  },
  {
    name: 'complete 2',
    fields: { complete: 2 },
    targets: TARGETS,
    spend: { complete: 0, cost_lower_bound: true },
    unreadable: { usage_complete: 1 },
  },
  {
    name: "complete 'yes'",
    fields: { complete: 'yes' },
    targets: ['sqlite'],
    spend: { complete: 0, cost_lower_bound: true },
    unreadable: { usage_complete: 1 },
  },
];

const BASELINE: Spend = spend({
  subagents_with_usage: 1,
  complete: 1,
  tokens_in: 10,
  cost_subcents: 100,
  measured_cost_subcents: 100,
  list_priced_cost_subcents: 0,
  cost_p50_subcents: 100,
  cost_p95_subcents: 100,
  cost_max_subcents: 100,
});

describe.each(TARGETS)('R6-5, R4-3 hostile usage values on %s', (target) => {
  const t = useTestDatabase(target);
  const cases = HOSTILE.filter((c) => c.targets.includes(target));

  it.each(cases)('R6-5, R4-3: $name costs one figure, counted, never the report', async (c) => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1) }]);
    await insertUsage(
      t.db,
      { tool_call_id: 'a' },
      {
        tokens_in: 10,
        cost_subcents: 100,
        cost_source: 'provider_reported',
        complete: 1,
        ...c.fields,
      },
    );
    const doc = await buildReport(t.db, { now: NOW, by: 'type' });
    expect(reportDocument.safeParse(doc).success).toBe(true);
    expect(doc.totals.spend).toEqual({ ...BASELINE, ...c.spend });
    expect(doc.groups[0]!.spend).toEqual(doc.totals.spend);
    const u = doc.completeness.unreadable;
    expect({
      usage_tokens: u.usage_tokens,
      usage_cost_subcents: u.usage_cost_subcents,
      usage_cost_source: u.usage_cost_source,
      usage_complete: u.usage_complete,
    }).toEqual({ usage_tokens: 0, usage_cost_subcents: 0, usage_cost_source: 0, usage_complete: 0, ...c.unreadable });
    const counted = Object.keys(c.unreadable);
    if (counted.length > 0)
      expect(doc.completeness.notes.join(' ')).toContain(`1 ${counted[0]} value(s) of task_session_subagent_usage`);
  });
});

/** A store with spend on every kind of row, the same on each target (identicalJson). */
async function spendStore(db: Queryable): Promise<void> {
  await fiveSubagents(db);
  await insertRows(db, [
    { tool_call_id: 'f', task_session_id: 's2', task_id: 't2', turn_id: 'u2', observed_at: T(6), subagent_type: null },
    {
      tool_call_id: 'g',
      task_session_id: 's2',
      task_id: 't2',
      turn_id: 'u2',
      observed_at: T(7),
      parent_tool_call_id: 'f',
    },
  ]);
  await insertUsage(
    db,
    { task_session_id: 's2', tool_call_id: 'f' },
    {
      tokens_in: 2_000_000_000_000,
      tokens_reasoning: 9,
      cost_subcents: 12_345_678_901,
      cost_source: 'models_dev_list',
      complete: 1,
    },
  );
  await insertUsage(db, { task_session_id: 's2', tool_call_id: 'g' }, { tokens_in: 3, cost_source: 'unpriced' });
  await addCostEvent(db, {
    id: 'e1',
    session: 's1',
    task: 't1',
    turn: 'u1',
    subcents: 900,
    source: 'provider_reported',
    at: T(8),
  });
  await addCostEvent(db, {
    id: 'e2',
    session: 's2',
    task: 't2',
    turn: 'u2',
    subcents: 3,
    source: 'provider_reported',
    at: T(9),
  });
}

describe('R6-5 report --json with spend across dialects', () => {
  const targets = TARGETS.map((name) => useTestDatabase(name, { fixture: 'host' }));

  it(`R6-5: ${TARGETS.join(', ')} print byte-identical spend for the same store, every --by and the page's data`, async () => {
    const outputs: string[][] = [];
    for (const t of targets) {
      await spendStore(t.db);
      const texts: string[] = [];
      for (const by of [undefined, 'task', 'session', 'turn', 'type', 'model', 'day'] as const) {
        const doc = await buildReport(t.db, { now: NOW, by, pageData: by === undefined });
        texts.push(jsonDocument({ ...doc, generated_at: '' }));
      }
      outputs.push(texts);
    }
    const [first, ...others] = outputs;
    expect(first![0]).toMatch(/"subagents_with_usage": 6/);
    expect(first![0]).toMatch(/"cost_subcents": 12345679351/);
    for (const other of others) expect(other).toEqual(first);
  }, 120_000);
});

describe.each(TARGETS)('R6-5 fan-out buckets with spend on %s', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });

  /**
   * Turns of session s1, each with its top-level subagents (one row per id; `priced` cost with
   * complete 1, `unpriced`, or `open`: priced, not final) and its ledger cost (none: no event).
   */
  async function turns(spec: Record<string, { top: Record<string, number | 'unpriced' | 'open'>; cost?: number }>) {
    let s = 0;
    for (const [turn, { top, cost }] of Object.entries(spec)) {
      if (Object.keys(top).length === 0) await seedTurn(t.db, turn, 's1');
      for (const [id, usage] of Object.entries(top)) {
        await insertRows(t.db, [{ tool_call_id: id, turn_id: turn, observed_at: T(++s) }]);
        await insertUsage(
          t.db,
          { tool_call_id: id },
          usage === 'unpriced'
            ? { tokens_in: 5, cost_source: 'unpriced', complete: 1 }
            : usage === 'open'
              ? { cost_subcents: 9, cost_source: 'provider_reported', complete: 0 }
              : { cost_subcents: usage, cost_source: 'models_dev_list', complete: 1 },
        );
      }
      if (cost !== undefined)
        await addCostEvent(t.db, {
          id: `ev-${turn}`,
          session: 's1',
          task: 't1',
          turn,
          subcents: cost,
          source: 'provider_reported',
          at: T(50),
        });
    }
  }

  it("R6-5: each bucket's spend-known turns, their subagents' cost and the median share of the turn's cost (ratio, 4 decimals)", async () => {
    await seedSession(t.db, 's1', 't1');
    await turns({
      u0: { top: {}, cost: 5 },
      u1: { top: { a: 100, b: 300 }, cost: 800 },
      u2: { top: { c: 50 }, cost: 1_000 },
      u3: { top: { d: 'unpriced' }, cost: 10 },
      u4: { top: { e: 30 } },
      u5: { top: { g: 1 }, cost: 3 },
      u6: { top: { h: 2 }, cost: 3 },
      u7: { top: { i: 'open' }, cost: 20 },
    });
    // a nested subagent of u4 without usage: not a top-level one, so u4's spend stays known
    await insertRows(t.db, [{ tool_call_id: 'f', turn_id: 'u4', parent_tool_call_id: 'e', observed_at: T(40) }]);
    const doc = await buildReport(t.db, { now: NOW });
    const spendOf = (label: string) => {
      const b = doc.fan_out_cost!.buckets.find((x) => x.fan_out === label)!;
      return [b.turns, b.spend_known_turns, b.subagent_cost_subcents, b.subagent_share];
    };
    // u0 has no subagent to miss: known, spent 0, 0 of its 5
    expect(spendOf('0')).toEqual([1, 1, 0, 0]);
    // u2, u4, u5, u6 known (u3 unpriced, u7 not final): 50 + 30 + 1 + 2; shares 0.05, 1/3, 2/3 (u4 not costed) → rank 2
    expect(spendOf('1')).toEqual([6, 4, 83, 0.3333]);
    expect(spendOf('2')).toEqual([1, 1, 400, 0.5]);
    for (const label of ['3', '4-5', '6-8', '9+']) expect(spendOf(label)).toEqual([0, 0, null, null]);
    expect(reportDocument.safeParse(doc).success).toBe(true);
  });

  it("R6-5: a share is null where the turn's cost is unknown or 0, and no turn with every subagent's spend known leaves the bucket's cost null", async () => {
    await seedSession(t.db, 's1', 't1');
    await turns({
      u1: { top: { a: 10 } },
      u2: { top: { b: 20 }, cost: 0 },
      u3: { top: { c: 'unpriced', d: 5 }, cost: 9 },
    });
    const doc = await buildReport(t.db, { now: NOW });
    const b1 = doc.fan_out_cost!.buckets.find((x) => x.fan_out === '1')!;
    expect([b1.spend_known_turns, b1.subagent_cost_subcents, b1.subagent_share]).toEqual([2, 30, null]);
    const b2 = doc.fan_out_cost!.buckets.find((x) => x.fan_out === '2')!;
    expect([b2.turns, b2.spend_known_turns, b2.subagent_cost_subcents, b2.subagent_share]).toEqual([1, 0, null, null]);
  });
});
