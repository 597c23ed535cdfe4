import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../lib/cli/exit-codes.js';
import type { Queryable } from '../../../lib/db/database.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { buildReport } from '../../../lib/report/build.js';
import type { FanOutCostBucket, ReportDocument } from '../../../lib/report/document.js';
import { CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { readAll } from '../../../lib/store/read.js';
import { parseRfc3339, parseStoredTimestamp } from '../../../lib/time.js';
import { expectedFanOutCost } from '../../../local/expected-fan-out-cost.js';
import { generateHostStore } from '../../../local/generate-host-store.js';
import { runCliJson } from '../../support/cli-run.js';
import { onlyRowFigures, rowFigures } from '../../support/report-oracle.js';
import { FIXTURES, TARGET_FIXTURES, TARGETS, type TestDatabase, useTestDatabase } from '../../support/targets.js';

const NOW = parseRfc3339('2027-01-01T00:00:00Z')!;

describe.each(TARGET_FIXTURES)('report on a generated store on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  it("R3-5, R3-6: the totals are the generator's truth (fan-out distribution, nested, backfill, sessions, cost) and every row figure the rows' own", async () => {
    const store = await generateHostStore(t.db, { messages: 4_000, fixture, costs: true });
    await runMigration(t.db);
    const doc = await buildReport(t.db, { now: NOW, graceSeconds: 0 });
    const { totals } = doc;
    expect(totals).toMatchObject({
      subagents: store.qualifyingKeys,
      backfill: store.qualifyingKeys,
      live: 0,
      nested: store.nested,
      unknown_execution: store.qualifyingKeys,
      executions: 0,
      sessions: store.sessions,
      contexts: store.sessions + store.qualifyingKeys,
      cost_subcents: store.costs!.subcents,
      estimated_cost_subcents: store.costs!.estimatedSubcents,
      // R6-11: half away from zero, a lower bound (an unpriced event left out) rounded down
      cost_per_context_subcents: (store.costs!.unpricedEvents > 0 ? Math.floor : Math.round)(
        store.costs!.subcents / (store.sessions + store.qualifyingKeys),
      ),
    });
    expect(totals.fan_out).toEqual(
      Object.entries(store.topLevelFanOut).map(([k, turns]) => ({ top_level: Number(k), turns })),
    );
    expect(totals.turns).toBe(Object.values(store.fanOut).reduce((a, b) => a + b, 0));
    expect(onlyRowFigures(totals)).toEqual(rowFigures(await readAll(t.db)));
    // capture_since is after every generated message: every session is a lower bound (AC-25).
    expect(doc.completeness.lower_bound_sessions).toBe(store.sessions);
    // R4-12: no health checkpoint yet, so the report leaves the shortfall to `health` (no full audit).
    expect(doc.completeness.shortfall).toEqual({ open: false, count: 0, checked: false });
  });

  it('R3-5: each task group is its rows’ own figures, and its sessions the generator’s two per task', async () => {
    const store = await generateHostStore(t.db, { messages: 2_000, fixture, costs: true });
    await runMigration(t.db);
    const doc = await buildReport(t.db, { now: NOW, by: 'task', graceSeconds: 0 });
    const rows = await readAll(t.db);
    expect(doc.groups).toHaveLength(Math.ceil(store.sessions / 2));
    for (const g of doc.groups) {
      const own = rows.filter((r) => r.task_id === g.key);
      expect(onlyRowFigures(g), g.key!).toEqual(rowFigures(own));
      expect(g.lower_bound).toBe(true);
    }
    expect(doc.groups.reduce((n, g) => n + g.sessions!, 0)).toBe(store.sessions);
    expect(doc.groups.reduce((n, g) => n + g.cost_subcents!, 0)).toBe(store.costs!.subcents);
  });
});

/** What each cost_source of the ledger holds, as the host's contract defines its rows. */
async function ledgerBySource(db: Queryable) {
  const rows = await db.query<Record<string, string | number | null>>(
    `SELECT cost_source, COUNT(*) AS events,
       SUM(CASE WHEN turn_id IS NULL THEN 1 ELSE 0 END) AS without_turn,
       SUM(CASE WHEN cost_subcents = 0 THEN 1 ELSE 0 END) AS zero_cost,
       SUM(CASE WHEN tokens_out IS NULL THEN 1 ELSE 0 END) AS without_tokens_out,
       SUM(CASE WHEN tokens_cached_read IS NULL OR tokens_cached_write IS NULL THEN 1 ELSE 0 END) AS without_cached_split,
       SUM(CASE WHEN cost_contract_version = 3 THEN 1 ELSE 0 END) AS contract_v3,
       SUM(CASE WHEN rate_input_per_million IS NULL THEN 1 ELSE 0 END) AS without_rates
     FROM office_cost_events GROUP BY cost_source ORDER BY cost_source`,
  );
  return Object.fromEntries(
    rows.map(({ cost_source, ...counts }) => [
      cost_source ?? '(null)',
      Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, Number(v)])),
    ]),
  );
}

describe.each(TARGET_FIXTURES)('the generated ledger on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  it('R5-5: office_cost_events is written as the host writes it: the three cost_source values (about one event in ten unpriced, at 0, with no rates), legacy rows without cost_source, turn or contract version, NULL tokens_out on some rows, events on turns without subagents', async () => {
    const store = await generateHostStore(t.db, { messages: 4_000, fixture, costs: true });
    const costs = store.costs!;
    const by = await ledgerBySource(t.db);
    expect(Object.keys(by).sort()).toEqual(['(null)', 'models_dev_list', 'provider_reported', 'unpriced']);
    expect(by.unpriced).toMatchObject({
      events: costs.unpricedEvents,
      zero_cost: costs.unpricedEvents,
      without_turn: 0,
    });
    expect(by.unpriced!.without_rates).toBe(costs.unpricedEvents);
    expect(by['(null)']).toMatchObject({
      events: costs.legacyEvents,
      without_turn: costs.legacyEvents,
      contract_v3: 0,
      without_cached_split: costs.legacyEvents,
    });
    for (const source of ['models_dev_list', 'provider_reported', 'unpriced'])
      expect(by[source], source).toMatchObject({
        without_turn: 0,
        contract_v3: by[source]!.events,
        without_cached_split: 0,
      });
    expect(by.models_dev_list).toMatchObject({ without_rates: 0, without_tokens_out: 0, zero_cost: 0 });
    expect(by.provider_reported!.without_rates).toBe(by.provider_reported!.events);
    const total = Object.values(by).reduce((n, b) => n + b.events!, 0);
    expect(total).toBe(costs.events);
    expect(costs.unpricedEvents / costs.events).toBeGreaterThan(0.06);
    expect(costs.unpricedEvents / costs.events).toBeLessThan(0.14);
    expect(costs.legacyEvents).toBeGreaterThan(0);
    expect(Object.values(by).reduce((n, b) => n + b.without_tokens_out!, 0)).toBe(costs.nullTokensOut);
    expect(costs.nullTokensOut).toBeGreaterThan(0);
    // turns that launched no subagent are costed too (the host records every prompt's usage)
    const { topLevel, cost } = costs.turnLedger;
    expect(topLevel.filter((k, i) => k === 0 && cost[i] !== null).length).toBeGreaterThan(0);
    expect(topLevel).toHaveLength(store.turns);
  });

  it.runIf(fixture === 'host')(
    "R5-5: the host's turns start over the period, each at or before its first message, and their sessions and tasks with them",
    async () => {
      const startAt = parseRfc3339('2026-07-01T00:00:00Z')!;
      const endAt = parseRfc3339('2026-07-31T00:00:00Z')!;
      const store = await generateHostStore(t.db, { messages: 4_000, fixture, startAt, endAt });
      const turns = await t.db.query<{ started: string; first: string | null }>(
        `SELECT t.started_at AS started, (SELECT MIN(m.created_at) FROM task_session_messages m WHERE m.turn_id = t.id) AS first
         FROM task_session_turns t ORDER BY t.id`,
      );
      const at = (v: unknown) => parseStoredTimestamp(String(v))!;
      expect(turns).toHaveLength(store.turns);
      expect(new Set(turns.map((r) => at(r.started))).size).toBeGreaterThan(store.turns * 0.9);
      for (const r of turns) {
        expect(at(r.started) >= startAt && at(r.started) < endAt, String(r.started)).toBe(true);
        if (r.first !== null) expect(at(r.started) <= at(r.first), `${r.started} ≤ ${r.first}`).toBe(true);
      }
      // spread over the whole period: the first turn on its first day, the last one in its last
      expect(at(turns[0]!.started)).toBe(startAt);
      expect(at(turns.at(-1)!.started) > endAt - 86_400_000_000n).toBe(true);
      const [sessions] = await t.db.query<{ n: number | string }>(
        'SELECT COUNT(DISTINCT started_at) AS n FROM task_sessions',
      );
      expect(Number(sessions!.n)).toBe(store.sessions);
    },
  );
});

/** The demo store as `npm start` generates it, backfilled; its `report --json` through the CLI. */
async function demoReport(t: TestDatabase, fixture: (typeof FIXTURES)[number]) {
  const store = await generateHostStore(t.db, { messages: 4_000, fixture, costs: true });
  await runMigration(t.db);
  // activation's instant is the clock's: one fixed instant after the history on every target
  await t.db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [
    '2026-08-01T00:00:00.000000000Z',
    CAPTURE_SINCE_KEY,
  ]);
  const run = await runCliJson(
    ['report', '--database-url', t.url, '--grace-seconds', '0', '--json'],
    t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {},
  );
  expect(run.code, run.stderr).toBe(EXIT.ok);
  return { store, doc: run.json as ReportDocument };
}

describe.each(FIXTURES)('the demo store across dialects on the %s host schema', (fixture) => {
  const targets = TARGETS.map((name) => useTestDatabase(name, { fixture }));

  it(`R5-5, R5-1, R5-2, R5-3: ${TARGETS.join(', ')} print the same report --json of the demo store (apart from generated_at): about one event in ten unpriced, the cost a lower bound, measured and list-priced cost and every fan_out_cost bucket the generator's own record, the fan-out cost closing with the total (R6-10)`, async () => {
    const texts: string[] = [];
    for (const t of targets) {
      const { store, doc } = await demoReport(t, fixture);
      const costs = store.costs!;
      expect(doc.totals, t.name).toMatchObject({
        cost_subcents: costs.subcents,
        estimated_cost_subcents: costs.estimatedSubcents,
        unpriced_events: costs.unpricedEvents,
        cost_lower_bound: true,
        // R6-9: the estimated part's own unpriced events, and its bound by them only
        estimated_unpriced_events: costs.estimatedUnpricedEvents,
        estimated_cost_lower_bound: costs.estimatedUnpricedEvents > 0,
        measured_cost_subcents: costs.measuredSubcents,
        list_priced_cost_subcents: costs.listPricedSubcents,
      });
      expect(doc.completeness.unpriced_events).toBe(costs.unpricedEvents);
      expect(Math.round((10 * costs.unpricedEvents) / costs.events)).toBe(1);
      expect(doc.fan_out_cost, t.name).toEqual(expectedFanOutCost(costs));
      expect(doc.fan_out_cost!.buckets.reduce((n, b) => n + b.turns, 0)).toBe(store.turns);
      expect(doc.fan_out_cost!.buckets[0]!.turns).toBeGreaterThan(0);
      // R6-10: each event once: costed turns, the priced events of the others, the events on no turn
      const parts = (f: (b: FanOutCostBucket) => number | null) =>
        doc.fan_out_cost!.buckets.reduce((n, b) => n + (f(b) ?? 0), 0);
      expect(
        parts((b) => b.cost_subcents) +
          parts((b) => b.uncosted_turns_priced_cost_subcents) +
          (doc.fan_out_cost!.unattributed_cost_subcents ?? 0),
      ).toBe(doc.totals.cost_subcents);
      texts.push(JSON.stringify({ ...doc, generated_at: '' }));
    }
    const [first, ...others] = texts;
    // parsed first, for a readable difference; then byte for byte
    for (const other of others) expect(JSON.parse(other)).toEqual(JSON.parse(first!));
    for (const other of others) expect(other).toBe(first);
  }, 300_000);
});
