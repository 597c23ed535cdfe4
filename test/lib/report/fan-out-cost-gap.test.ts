import { describe, expect, it } from 'vitest';
import { postgresDialect } from '../../../lib/db/dialect/postgres.js';
import { sqliteDialect } from '../../../lib/db/dialect/sqlite.js';
import type { StoreCatalog } from '../../../lib/report/catalog.js';
import { fanOutCostGap, fanOutCostStatement } from '../../../lib/report/fan-out-cost-sql.js';
import type { ReportScope } from '../../../lib/report/sql.js';

/*
 * R5-3: when fan_out_cost is null, and the note saying why, for each store the catalog can
 * describe (written by hand: the stores themselves are in fan-out-cost.test.ts and
 * figures-edges.test.ts); and the statement's join of task_sessions only where --task needs it.
 */

const HOST: StoreCatalog = {
  taskTitle: true,
  sessionStartedAt: true,
  costEvents: { turnId: true, costSource: true, fractions: false },
  turns: { startedAt: true },
  sessionCreatedIndex: true,
  usage: true,
};
const ALL: ReportScope = { by: null };
const WINDOWED: ReportScope = { by: null, since: 1n };
const UNTIL: ReportScope = { by: null, until: 2n };

const NO_LEDGER =
  'fan_out_cost is null: the store has no office_cost_events table (the host office cost ledger) to cost its turns.';
const NO_TURN_ID =
  'fan_out_cost is null: office_cost_events has no turn_id column (a host before its turn attribution).';
const NO_TURNS = 'fan_out_cost is null: the store has no task_session_turns table.';
const NO_STARTED_AT =
  'fan_out_cost is null: --since/--until select turns by started_at, and task_session_turns has no started_at column.';

describe('fanOutCostGap', () => {
  it.each([
    ['the host as it is', HOST, WINDOWED, undefined],
    ['no cost ledger', { ...HOST, costEvents: undefined }, ALL, NO_LEDGER],
    [
      'no ledger and no turns (the ledger is named first)',
      { ...HOST, costEvents: undefined, turns: undefined },
      ALL,
      NO_LEDGER,
    ],
    [
      'a ledger without turn_id',
      { ...HOST, costEvents: { turnId: false, costSource: true, fractions: false } },
      ALL,
      NO_TURN_ID,
    ],
    ['no task_session_turns', { ...HOST, turns: undefined }, ALL, NO_TURNS],
    ['turns without started_at and --since', { ...HOST, turns: { startedAt: false } }, WINDOWED, NO_STARTED_AT],
    ['turns without started_at and --until', { ...HOST, turns: { startedAt: false } }, UNTIL, NO_STARTED_AT],
    ['turns without started_at and no window', { ...HOST, turns: { startedAt: false } }, ALL, undefined],
  ] as const)('R5-3: %s', (_store, catalog, scope, note) => {
    expect(fanOutCostGap(scope, catalog)).toBe(note);
    // no statement exactly where there is a note
    expect(fanOutCostStatement(sqliteDialect, scope, catalog) === undefined).toBe(note !== undefined);
  });
});

describe.each([sqliteDialect, postgresDialect])('the fan-out cost statement on $name', (dialect) => {
  it('R4-12: task_sessions is joined only with --task (the turns and events are filtered by its task_id)', () => {
    const join = /JOIN task_sessions/;
    expect(fanOutCostStatement(dialect, ALL, HOST)!.sql).not.toMatch(join);
    expect(fanOutCostStatement(dialect, { by: null, session: 's1' }, HOST)!.sql).not.toMatch(join);
    expect(fanOutCostStatement(dialect, { by: null, task: 't1' }, HOST)!.sql).toMatch(join);
  });
});
