import { describe, expect, it } from 'vitest';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { buildReport } from '../../../lib/report/build.js';
import { readAll } from '../../../lib/store/read.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { generateHostStore } from '../../../local/generate-host-store.js';
import { onlyRowFigures, rowFigures } from '../../support/report-oracle.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

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
      cost_per_context_subcents: Math.round(store.costs!.subcents / (store.sessions + store.qualifyingKeys)),
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
