import type { StoreCatalog } from './catalog.js';
import type { Completeness, Figures, GroupBy } from './document.js';
import { fanOutCostGap } from './fan-out-cost-sql.js';
import type { ReportScope } from './sql.js';

/**
 * The notes of completeness.notes that say why a figure is null or partial (docs/report.md#notes),
 * each from figures buildReport has read: no database here.
 */

/** Per figure, how many scopes' sums are null because they lie beyond 2^53 − 1 (R4-3). */
export interface Overflow {
  tokens: number;
  tool_uses: number;
  cost: number;
  /** R6-5: any of the scope's spend sums (spend.tokens_*, spend.*cost_subcents) */
  spend: number;
}

/** One scope's figures as statement 1 gives them: the totals (`by` null) or a group of level `by`. */
export interface ScopeFigures {
  by: GroupBy | null;
  figures: Figures;
  /** the cost events counted in the scope, readable or not (a null cost with none is no overflow) */
  costEvents: number;
  /** R6-5: how many of the scope's spend sums are null for lying beyond 2^53 − 1 (sql.ts spendColumns) */
  spendOverflow?: number;
}

/**
 * R4-3: a sum is null with values reported only when it lies beyond 2^53 − 1 (sql.ts boundedSum).
 * Counted over the scopes the document shows: the totals and the groups of the report's own --by
 * (`main`), not the page's series.
 */
export function overflowOf(scopes: readonly ScopeFigures[], main: GroupBy | null): Overflow {
  const overflow: Overflow = { tokens: 0, tool_uses: 0, cost: 0, spend: 0 };
  for (const { by, figures: f, costEvents, spendOverflow } of scopes) {
    if (by !== null && by !== main) continue;
    if (f.tokens.sum === null && f.tokens.reported > 0) overflow.tokens++;
    if (f.tool_uses.sum === null && f.tool_uses.reported > 0) overflow.tool_uses++;
    if (f.cost_subcents === null && costEvents > 0) overflow.cost++;
    if ((spendOverflow ?? 0) > 0) overflow.spend++;
  }
  return overflow;
}

/** R4-3 and R4-7: the values the figures leave out, one sentence each (docs/report.md#unreadable-values). */
export function valueNotes(totals: Figures, unreadable: Completeness['unreadable'], overflow: Overflow): string[] {
  const notes: string[] = [];
  const counted = Object.entries(unreadable).filter(([column, n]) => n > 0 && !column.startsWith('usage_'));
  const usage = Object.entries(unreadable).filter(([column, n]) => n > 0 && column.startsWith('usage_'));
  if (counted.length > 0) {
    notes.push(
      `${counted.map(([column, n]) => `${n} ${column}`).join(', ')} value(s) in scope could not be read (not an integer in range, or not an instant): each is not reported for its figure (completeness.unreadable); every other figure is exact.`,
    );
  }
  if (usage.length > 0) {
    notes.push(
      `${usage.map(([column, n]) => `${n} ${column}`).join(', ')} value(s) of task_session_subagent_usage in scope could not be read (a count or cost not an integer in 0 … 2^53 − 1, a cost_source none of provider_reported, models_dev_list, unpriced, a complete neither 0 nor 1): each costs its one figure (a token sum leaves the count out; the run is unpriced, or not final), counted in completeness.unreadable; every other figure is exact.`,
    );
  }
  for (const [figure, n] of Object.entries(overflow)) {
    if (n > 0)
      notes.push(
        `the ${figure} sum of ${n} scope(s) is null: it exceeds 2^53 − 1, beyond what a JSON reader keeps exactly.`,
      );
  }
  if (totals.unpriced_events !== null && totals.unpriced_events > 0) {
    notes.push(
      `${totals.unpriced_events} cost event(s) in scope are unpriced (the host found no price and stored 0): they add nothing to any cost, so every cost figure that omits one is a lower bound (cost_lower_bound; R5-1).`,
    );
  }
  if (totals.orphan_rows > 0) {
    notes.push(
      `${totals.orphan_rows} row(s) in scope belong to a session that is no longer in task_sessions: they count as subagents (orphan_rows), never as a session.`,
    );
  }
  return notes;
}

/** R6-5: why every spend figure is null (R6-2: a store without our usage table reads as not collected, never 0). */
export const SPEND_NOT_COLLECTED_NOTE =
  'spend not collected: the store has no task_session_subagent_usage table, so every spend figure is null (run `subagent-context migrate` to create it, then `subagent-context spend` or ingest to fill it).';

/**
 * R4-3 (issue 57 #3): trees whose host turn times are not instants (`infinity`, `garbage`) keep
 * their tree, dated by their rows instead; one figure each, counted here, never the report.
 */
export function treeTimeNotes(unreadable: number): string[] {
  return unreadable === 0
    ? []
    : [
        `${unreadable} fan-out tree(s) are dated by their subagents' observations: their task_session_turns.started_at or completed_at is not an instant.`,
      ];
}

/** Why a figure is null or partial in this scope (docs/report.md#notes). */
export function scopeNotes(scope: ReportScope, catalog: StoreCatalog, lowerBoundSessions: number): string[] {
  const notes: string[] = [];
  if (lowerBoundSessions > 0) {
    notes.push(
      `${lowerBoundSessions} session(s) in scope have activity before capture_since: their fan-out is a lower bound (groups marked lower_bound; AC-25).`,
    );
  }
  const fanOutGap = fanOutCostGap(scope, catalog);
  if (fanOutGap !== undefined && catalog.costEvents !== undefined) notes.push(fanOutGap);
  if (catalog.costEvents === undefined) {
    notes.push(
      'cost figures are null: the store has no office_cost_events table (the host office cost ledger) with session_id, task_id, cost_subcents, estimated and occurred_at.',
    );
  } else if (scope.by === 'turn' && !catalog.costEvents.turnId) {
    notes.push('cost per turn is null: office_cost_events has no turn_id column (a host before its turn attribution).');
  }
  if (!catalog.usage) notes.push(SPEND_NOT_COLLECTED_NOTE);
  if (scope.by === 'type' || scope.by === 'model' || scope.by === 'day') {
    notes.push(
      `groups by ${scope.by} have no sessions of their own: their sessions, contexts and cost are null (R3-7).`,
    );
  }
  if ((scope.since !== undefined || scope.until !== undefined) && !catalog.sessionStartedAt) {
    notes.push(
      'with --since/--until, sessions counts only the sessions with a subagent in the window: task_sessions has no started_at.',
    );
  }
  return notes;
}
