import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { CSV_COLUMNS } from '../../lib/report/render/csv.js';
import { runCliCaptured } from '../support/cli-run.js';
import { hostileText, MIB_OF_HOSTILE_TEXT } from '../support/hostile-text.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/** What a terminal would obey: C0 controls but the table's own newline, DEL, C1, bidi controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** A cell csv-stringify neutralised (a spreadsheet would run it as a formula): a leading `'`. */
/** R4-6 (docs/report.md#one-rule-for-host-text): a CSV cell of host text read back: drop one leading `'`. */
const readBack = (cell: string) => (cell.startsWith("'") ? cell.slice(1) : cell);

describe.each(TARGETS)('R4-1: report prints the host’s text exactly on %s', (name) => {
  const t = useTestDatabase(name, { fixture: 'host', subagentTable: false });
  const env = () => (t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {});
  const report = (flags: string[]) => runCliCaptured(['report', '--database-url', t.url, ...flags], env());

  /** The host's strings as its store gives them back: the oracle (PostgreSQL keeps no NUL, no lone surrogate). */
  async function store(title: string, model: string, description: string) {
    await t.db.query('UPDATE tasks SET title = $1', [title]);
    await t.db.query('UPDATE task_session_subagents SET model = $1, description = $2', [model, description]);
    const [task] = await t.db.query<{ title: string }>('SELECT title FROM tasks');
    const [row] = await t.db.query<{ model: string; description: string }>(
      'SELECT model, description FROM task_session_subagents',
    );
    return { title: task!.title, model: row!.model, description: row!.description };
  }

  /** Every output, each read back with its medium's reader, holds the stored strings exactly. */
  async function expectExact(stored: { title: string; model: string; description: string }) {
    const json = await report(['--json', '--by', 'task', '--trees', '1']);
    expect(json.code).toBe(EXIT.ok);
    const doc = JSON.parse(json.stdout);
    expect(doc.groups[0].title).toBe(stored.title);
    expect(doc.totals.models.counts).toEqual([{ model: stored.model, subagents: 1 }]);
    expect(doc.trees[0].subagents[0]).toMatchObject({ model: stored.model, description: stored.description });

    const csv = await report(['--csv', '--by', 'task']);
    expect(csv.code).toBe(EXIT.ok);
    const records = parse(csv.stdout, { relax_column_count: true }) as string[][];
    const header = records.findIndex((r) => r.length > 1);
    expect(records[header]).toEqual([...CSV_COLUMNS]);
    expect(records.slice(header + 1)).toHaveLength(1);
    const row = Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, records[header + 1]![i]]));
    expect(readBack(row.title!)).toBe(stored.title);
    // no cell a spreadsheet runs as a formula
    expect(row.title).not.toMatch(/^[=+\-@\t\r＝＋－＠]/);
    expect(JSON.parse(row.models!)).toEqual([{ model: stored.model, subagents: 1 }]);

    const table = await report(['--by', 'task']);
    expect(table.code).toBe(EXIT.ok);
    expect(table.stdout).not.toMatch(TERMINAL_CONTROL);
    // R4-2: the group is one line, whatever its title holds
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines.slice(lines.findIndex((l) => l.startsWith('== by task'))).length).toBe(4);
    return { json, csv, table };
  }

  async function seed() {
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: '2026-08-12T13:00:00.000001Z' },
    ]);
  }

  it('R4-1: a title, model and description that look like secrets or break JSON and CSV are printed as they are', async () => {
    await seed();
    const stored = await store('token="abc see http://wiki:', 'ops@corp', 'Rotate password: hunter2 in prod');
    expect(stored).toEqual({
      title: 'token="abc see http://wiki:',
      model: 'ops@corp',
      description: 'Rotate password: hunter2 in prod',
    });
    const { csv, table } = await expectExact(stored);
    expect(table.stdout).toContain('token="abc see http://wiki:');
    const row = parse(csv.stdout, { relax_column_count: true }).at(-1) as string[];
    expect(row).toHaveLength(CSV_COLUMNS.length);
  });

  it('R4-1: any string (markup, quotes, controls, U+2028/2029, lone surrogates) survives --json, CSV and the table', async () => {
    await seed();
    await fc.assert(
      fc.asyncProperty(hostileText(name), hostileText(name), hostileText(name), async (title, model, description) => {
        await expectExact(await store(title, model, description));
      }),
      { numRuns: 12 },
    );
  }, 180_000);

  it('R4-1: a 1 MiB title survives --json byte-exact', async () => {
    await seed();
    const title = MIB_OF_HOSTILE_TEXT.replaceAll('\u0000', '');
    const stored = await store(title, 'm', 'd');
    expect(stored.title.length).toBeGreaterThan(1_000_000);
    const json = await report(['--json', '--by', 'task']);
    expect(JSON.parse(json.stdout).groups[0].title).toBe(stored.title);
  }, 120_000);

  it.runIf(name === 'sqlite')(
    'R4-1: through the installed command (its own process), a 1 MiB hostile title survives --json byte-exact',
    async () => {
      await seed();
      const stored = await store(MIB_OF_HOSTILE_TEXT, 'token="abc', 'postgres://u:p@h/d');
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['bin/subagent-context.mjs', 'report', '--json', '--by', 'task', '--trees', '1', '--database-url', t.url],
        { maxBuffer: 64 * 1024 * 1024, env: { PATH: process.env.PATH } },
      );
      const doc = JSON.parse(stdout);
      expect(doc.groups[0].title).toBe(stored.title);
      expect(doc.trees[0].subagents[0]).toMatchObject({ model: 'token="abc', description: 'postgres://u:p@h/d' });
    },
    180_000,
  );
});
