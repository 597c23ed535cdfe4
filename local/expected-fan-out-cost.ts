import { FAN_OUT_COST_BUCKETS, type FanOutCost, type FanOutCostBucket } from '../lib/report/document.js';
import { type CostSummary, generatedTurnId } from './generate-host-store.js';

/**
 * R5-3's fan_out_cost of a whole generated store, worked out from what the generator wrote (its
 * turn ledger), never from the report: what `npm start` and the tests hold the report to. Every
 * generated turn is in scope (no filter, no window). `extraTopLevel`: top-level rows added later on
 * a turn, by its id (the local stack's live stream).
 */
export function expectedFanOutCost(
  costs: CostSummary,
  extraTopLevel: Readonly<Record<string, number>> = {},
  usage = true,
): FanOutCost {
  const { idPrefix, topLevel, cost, unpriced } = costs.turnLedger;
  const perBucket = FAN_OUT_COST_BUCKETS.map(() => ({
    turns: 0,
    unpriced: 0,
    none: 0,
    costs: [] as number[],
    uncosted: null as number | null,
  }));
  for (let t = 0; t < topLevel.length; t++) {
    const fanOut = topLevel[t]! + (extraTopLevel[generatedTurnId(idPrefix, t)] ?? 0);
    const b = perBucket[bucketOf(fanOut)]!;
    b.turns += 1;
    const c = cost[t];
    if (c === null || c === undefined) b.none += 1;
    else if (unpriced[t] === 1) {
      b.unpriced += 1;
      // R6-10: its priced events' cost, where it has one: the generator prices every priced event
      // above 0 (its tokens are never 0), so a turn whose sum is 0 had unpriced events only
      if (c > 0) b.uncosted = (b.uncosted ?? 0) + c;
    } else b.costs.push(c);
  }
  return {
    buckets: perBucket.map((b, i): FanOutCostBucket => {
      const sorted = b.costs.sort((x, y) => x - y);
      const sum = sorted.reduce((a, c) => a + c, 0);
      const n = sorted.length;
      return {
        fan_out: FAN_OUT_COST_BUCKETS[i]!,
        turns: b.turns,
        costed_turns: n,
        unpriced_turns: b.unpriced,
        turns_without_cost: b.none,
        unreadable_cost_turns: 0,
        cost_subcents: n === 0 ? null : sum,
        // the generator's costs are never negative: half away from zero is half up
        mean_subcents: n === 0 ? null : Math.floor((2 * sum + n) / (2 * n)),
        median_subcents: n === 0 ? null : sorted[Math.ceil(0.5 * n) - 1]!,
        p95_subcents: n === 0 ? null : sorted[Math.ceil(0.95 * n) - 1]!,
        // R6-5: without usage rows, only a turn with no top-level subagent has every one priced
        // (it spent nothing on them); `usage` false: a store without the usage table
        spend_known_turns: !usage ? null : i === 0 ? b.turns : 0,
        subagent_cost_subcents: usage && i === 0 && b.turns > 0 ? 0 : null,
        subagent_share: usage && i === 0 && sorted.some((c) => c > 0) ? 0 : null,
        uncosted_turns_priced_cost_subcents: b.uncosted,
      };
    }),
    // the generator writes no turn id on its legacy rows only, and no id of a turn it did not make
    unattributed_events: costs.legacyEvents,
    unattributed_cost_subcents: costs.legacyEvents === 0 ? null : costs.legacySubcents,
    unattributed_unpriced_events: 0,
    unreadable_started_at: null,
  };
}

/** The index in FAN_OUT_COST_BUCKETS of a fan-out: 0, 1, 2, 3, 4–5, 6–8, 9 or more. */
function bucketOf(fanOut: number): number {
  if (fanOut <= 3) return fanOut;
  if (fanOut <= 5) return 4;
  return fanOut <= 8 ? 5 : 6;
}
