import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { EMPTY_KEY_LABEL, NOT_REPORTED_LABEL } from '../../lib/report/render/labels.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * R4-6 (docs/report.md#one-rule-for-host-text): no two keys print alike in the CSV or the table.
 * A NULL model and a model named `(not reported)`, '' and `(empty)`, `=1+1` and `'=1+1` were two
 * identical rows each (issue 48 item 11).
 */

const MODELS = [null, NOT_REPORTED_LABEL, '', EMPTY_KEY_LABEL, '=1+1', "'=1+1", "''x", '-2', '@me'];

/** The documented reading: a cell that is exactly a label is the label's key; else drop one leading `'`. */
function readKey(cell: string): string | null {
  if (cell === NOT_REPORTED_LABEL) return null;
  if (cell === EMPTY_KEY_LABEL) return '';
  return cell.startsWith("'") ? cell.slice(1) : cell;
}

describe.each(TARGETS)('R4-6 on %s: one rule for host keys in the CSV and the table', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });
  const cli = (...argv: string[]) => runCliCaptured(['report', '--database-url', t.url, ...argv], testProxyEnv());

  it("R4-6: NULL vs (not reported), empty vs (empty), =1+1 vs '=1+1: every key prints distinctly and reads back exactly", async () => {
    await insertRows(
      t.db,
      MODELS.map((model, i) => ({
        tool_call_id: `c${i}`,
        model,
        observed_at: `2026-08-12T10:00:0${i}.000001Z`,
      })),
    );
    const csv = await cli('--by', 'model', '--csv');
    expect(csv.code, csv.stderr).toBe(EXIT.ok);
    const records = parse(csv.stdout, { relax_column_count: true }) as string[][];
    const header = records.findIndex((r) => r.length > 1);
    const keyAt = records[header]!.indexOf('key');
    const keys = records.slice(header + 1).map((r) => r[keyAt]!);
    expect(new Set(keys).size).toBe(MODELS.length);
    expect(keys.map(readKey).sort()).toEqual([...MODELS].sort());
    // no cell a spreadsheet runs as a formula
    for (const key of keys) expect(key).not.toMatch(/^[=+\-@]/);

    const table = await cli('--by', 'model', '--no-color');
    expect(table.code, table.stderr).toBe(EXIT.ok);
    for (const model of MODELS) {
      const shown = model === null ? NOT_REPORTED_LABEL : model === '' ? EMPTY_KEY_LABEL : model;
      const cell = model === null || model === '' || !/^['=+\-@(]/.test(model) ? shown : `'${model}`;
      expect(table.stdout.split('\n').filter((line) => line.startsWith(`${cell} `))).toHaveLength(1);
    }
  });
});
