import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../lib/report/build.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { createKandevCostEvents } from '../../../local/kandev-schema.js';
import { addCostEvent } from '../../support/cost-events.js';
import { seedSession, seedTurn } from '../../support/frames.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

const NOW = parseRfc3339('2026-08-13T00:00:00Z')!;
const T = (minute: number) => `2026-08-12T13:${String(minute).padStart(2, '0')}:00.000001Z`;

/**
 * R5-5: the test fixtures write the ledger event by event as the host does under its cost contract
 * v3 (test/support/cost-events.ts), next to the legacy rows written before it, and the report
 * reads them so.
 */
describe.each(TARGET_FIXTURES)('a ledger written as the host writes it, on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  it('R5-5, R5-1, R5-2, R5-3: contract rows of each cost_source (one unpriced at 0, one without tokens_out) beside a legacy row without source or turn', async () => {
    await createKandevCostEvents(t.db); // the host's own DDL (the minimal schema has no ledger)
    // u1 fans out to two subagents; u2 to none; u3 to one
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'a', observed_at: T(1) },
      { task_session_id: 's1', task_id: 't1', turn_id: 'u1', tool_call_id: 'b', observed_at: T(2) },
      { task_session_id: 's1', task_id: 't1', turn_id: 'u3', tool_call_id: 'c', observed_at: T(3) },
    ]);
    await seedSession(t.db, 's1', 't1');
    await seedTurn(t.db, 'u2', 's1');
    const event = { session: 's1', task: 't1', at: T(5) };
    await addCostEvent(t.db, { ...event, id: 'e1', turn: 'u1', subcents: 700, source: 'provider_reported' });
    await addCostEvent(t.db, { ...event, id: 'e2', turn: 'u1', subcents: 40, source: 'models_dev_list', estimated: 1 });
    await addCostEvent(t.db, {
      ...event,
      id: 'e3',
      turn: 'u2',
      subcents: 25,
      source: 'provider_reported',
      tokensOut: null,
    });
    await addCostEvent(t.db, { ...event, id: 'e4', turn: 'u3', source: 'unpriced' });
    await addCostEvent(t.db, { ...event, id: 'e5', subcents: 9 });
    const [e3] = await t.db.query<{ tokens_out: unknown; v: unknown }>(
      "SELECT tokens_out, cost_contract_version AS v FROM office_cost_events WHERE id = 'e3'",
    );
    expect([e3!.tokens_out, Number(e3!.v)]).toEqual([null, 3]);
    const doc = await buildReport(t.db, { now: NOW });
    expect(doc.totals).toMatchObject({
      cost_subcents: 774,
      estimated_cost_subcents: 40,
      unpriced_events: 1,
      cost_lower_bound: true,
      measured_cost_subcents: 725,
      list_priced_cost_subcents: 40,
    });
    const buckets = Object.fromEntries(doc.fan_out_cost!.buckets.map((b) => [b.fan_out, b]));
    expect(buckets['0']).toMatchObject({ turns: 1, costed_turns: 1, cost_subcents: 25 });
    expect(buckets['1']).toMatchObject({ turns: 1, costed_turns: 0, unpriced_turns: 1, cost_subcents: null });
    expect(buckets['2']).toMatchObject({ turns: 1, costed_turns: 1, cost_subcents: 740, median_subcents: 740 });
    expect(doc.fan_out_cost).toMatchObject({ unattributed_events: 1, unattributed_cost_subcents: 9 });
  });
});
