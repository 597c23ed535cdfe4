import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { CSV_COLUMNS } from '../../lib/report/render/csv.js';
import { USAGE_TABLE } from '../../lib/store/usage-table.js';
import { runCliCaptured } from '../support/cli-run.js';
import { addCostEvent } from '../support/cost-events.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';
import { fiveSubagents } from '../support/usage-rows.js';

/*
 * R6-5 through the real CLI, where a person reads it: the table's spend facts, group columns and
 * fan-out columns, and the CSV's spend_* columns, from the store test/support/usage-rows.ts
 * fiveSubagents writes (a 100 measured, b 300 list-priced, c 50 measured, d unpriced and not final,
 * e without usage).
 */

describe.each(TARGETS)('R6-5: report prints spend on %s', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });
  const env = () => (t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {});
  const report = (flags: string[]) => runCliCaptured(['report', '--database-url', t.url, ...flags], env());

  it('R6-5: the table states coverage, tokens, the priced cost (≥: a lower bound) and what one subagent spent, per type too', async () => {
    await fiveSubagents(t.db);
    const run = await report(['--by', 'type']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('usage known for 4 of 5 subagents (3 final, 1 not final)');
    expect(run.stdout).toContain('in 35, out 5, cache read 7, cache write -, reasoning -');
    expect(run.stdout).toContain('≥ $0.0450 (measured ≥ $0.0150, list-priced ≥ $0.0300; 1 run(s) unpriced)');
    expect(run.stdout).toContain('p50 $0.0100, p95 $0.0300, max $0.0300 (over the 3 priced runs)');
    const lines = run.stdout.split('\n');
    const header = lines.find((l) => l.startsWith('key'))!;
    for (const column of ['with usage', 'spend', 'unpriced runs', 'spend p50', 'spend p95'])
      expect(header).toContain(column);
    // Explore: a and b, both priced and final (no ≥); p50 $0.0100, p95 $0.0300
    expect(lines.find((l) => l.startsWith('Explore'))).toMatch(/ 2 +\$0\.0400 +0 +\$0\.0100 +\$0\.0300$/);
    expect(lines.find((l) => l.startsWith('Plan'))).toMatch(/ 2 +≥ \$0\.0050 +1 +\$0\.0050 +\$0\.0050$/);
  });

  it('R6-5: the fan-out table gains spend known, what the subagents spent and their share of the turn', async () => {
    await fiveSubagents(t.db);
    await addCostEvent(t.db, {
      id: 'e1',
      session: 's1',
      task: 't1',
      turn: 'u1',
      subcents: 1_000,
      source: 'provider_reported',
      at: '2026-08-12T13:00:09.000001Z',
    });
    const run = await report([]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/spend known +subagents spent +subagent share/);
    // one turn (u1) of five top-level subagents, d unpriced and e without usage: not known
    expect(run.stdout).toMatch(/4-5 subagents +1 +1 .* 0 +- +-/);
  });

  it('R6-5: the CSV carries every spend figure as spend_<figure>, empty where null', async () => {
    await fiveSubagents(t.db);
    const run = await report(['--csv', '--by', 'type']);
    expect(run.code).toBe(EXIT.ok);
    const records = parse(run.stdout, { relax_column_count: true }) as string[][];
    const header = records.findIndex((r) => r.length > 1);
    expect(records[header]).toEqual([...CSV_COLUMNS]);
    const rows = records.slice(header + 1).map((r) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]])));
    const plan = rows.find((r) => r.key === 'Plan')!;
    expect([
      plan.spend_subagents_with_usage,
      plan.spend_complete,
      plan.spend_tokens_in,
      plan.spend_tokens_out,
      plan.spend_cost_subcents,
      plan.spend_unpriced,
      plan.spend_cost_lower_bound,
      plan.spend_cost_p50_subcents,
    ]).toEqual(['2', '1', '5', '', '50', '1', 'true', '50']);
  });

  it('R6-5: with the table but no usage row, the table says usage is known for 0 and adds no spend columns of zeros', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', turn_id: 'u1', observed_at: '2026-08-12T13:00:01.000001Z' }]);
    const run = await report(['--by', 'type']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('usage known for 0 of 1 subagents (0 final)');
    expect(run.stdout.split('\n').find((l) => l.startsWith('key'))).not.toContain('with usage');
    expect(run.stdout).not.toContain('spend known');
  });

  it('R6-5: without the usage table the table says spend is not collected and the CSV leaves every spend cell empty', async () => {
    await fiveSubagents(t.db);
    await t.db.query(`DROP TABLE ${USAGE_TABLE}`);
    const table = await report(['--by', 'type']);
    expect(table.code).toBe(EXIT.ok);
    expect(table.stdout).toContain('not collected (no task_session_subagent_usage: see notes)');
    expect(table.stdout).toContain('note: spend not collected');
    expect(table.stdout.split('\n').find((l) => l.startsWith('key'))).not.toContain('with usage');
    const csv = await report(['--csv']);
    const records = parse(csv.stdout, { relax_column_count: true }) as string[][];
    const header = records.findIndex((r) => r.length > 1);
    const totals = records[header + 1]!;
    const spendCells = CSV_COLUMNS.flatMap((c, i) => (c.startsWith('spend_') ? [totals[i]] : []));
    expect(spendCells).toHaveLength(15);
    expect(spendCells.every((cell) => cell === '')).toBe(true);
  });
});
