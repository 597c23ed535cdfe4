import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { runCliCaptured } from '../support/cli-run.js';
import { buildReportStore, buildWideReportStore, LONG_TASK } from '../support/report-store.js';
import { drawnIn, isLeftOut, leftOut, linesWiderThan, lostFigures } from '../support/table-figures.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * Issue 51, item 5: the terminal table fits the terminal's width (COLUMNS, or the TTY's): columns
 * with nothing in them are left out, then the rightmost ones, and a line says which and how to see them.
 */

describe.each(TARGETS)('issue 51: report tables fit the terminal on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  const env = (extra: NodeJS.ProcessEnv) => ({ ...(t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {}), ...extra });
  const groupLines = (stdout: string) => stdout.slice(stdout.indexOf('== by ')).split('\n').slice(1);

  it.each(['task', 'type', 'day'])(
    'issue 51: report --by %s in COLUMNS=80 is no wider than 80 and names the columns it left out',
    async (by) => {
      await buildReportStore(t.db, 'minimal');
      const run = await runCliCaptured(['report', '--database-url', t.url, '--by', by], env({ COLUMNS: '80' }));
      expect(run.code).toBe(EXIT.ok);
      const lines = groupLines(run.stdout).filter((l) => l !== '');
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
      expect(lines[0]).toMatch(/^key\s+subagents/);
      const note = lines.slice(lines.findIndex((l) => l.startsWith('(left out: '))).join(' ');
      expect(note).toMatch(
        /^\(left out: .+; --json or --csv has every column; a wider terminal \(or COLUMNS=200\) shows more\)$/,
      );
    },
  );

  it('issue 51: on a terminal, columns with nothing in them are left out and named', async () => {
    await buildReportStore(t.db, 'minimal');
    const run = await runCliCaptured(['report', '--database-url', t.url, '--by', 'type'], env({ COLUMNS: '400' }));
    const [header] = groupLines(run.stdout);
    expect(header).toMatch(/^key\s+subagents/);
    // a type's groups have no sessions, so no contexts or cost either
    expect(header).not.toMatch(/sessions|cost/);
    expect(run.stdout).toMatch(
      /\(left out: sessions, contexts, cost \(subcents\), per context \(subcents\) \(nothing in them\); /,
    );
  });

  it('issue 51: a pipe (no COLUMNS, not a terminal) keeps every column', async () => {
    await buildReportStore(t.db, 'minimal');
    const run = await runCliCaptured(['report', '--database-url', t.url, '--by', 'type'], env({}));
    expect(groupLines(run.stdout)[0]).toMatch(/lower bound$/);
    expect(run.stdout).not.toMatch(/left out/);
  });
});

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe.each(TARGETS)('issue 58 #17: report through the installed bin in a 60-column terminal on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  /** `subagent-context report` as a person runs it, its stdout a pipe, `COLUMNS` as the shell sets it. */
  const bin = (args: string[], columns?: string) =>
    promisify(execFile)(process.execPath, [join(ROOT, 'bin/subagent-context.mjs'), 'report', ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...(columns === undefined ? {} : { COLUMNS: columns }),
        ...(t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {}),
      },
      maxBuffer: 64 * 1024 * 1024,
    });

  it('issue 58 #17: COLUMNS=60 report --by task: no line wider than 60, cost kept, every figure whole or its column named', async () => {
    await buildWideReportStore(t.db);
    const args = ['--database-url', t.url, '--by', 'task'];
    const [narrow, full, json] = await Promise.all([bin(args, '60'), bin(args), bin([...args, '--json'])]);
    expect(linesWiderThan(narrow.stdout, 60)).toEqual([]);
    const doc = JSON.parse(json.stdout);
    expect(lostFigures(full.stdout, narrow.stdout, [doc.fan_out_cost.buckets.length, doc.groups.length])).toEqual([]);
    const groups = narrow.stdout.slice(narrow.stdout.indexOf('== by task'));
    expect(isLeftOut(leftOut(groups), 'cost (subcents)')).toBe(false);
    expect(groups.split('\n').slice(1, 3).join(' ')).toMatch(/^key .*cost.*\(subcents\)/);
    // the long task id is printed whole, broken only where its column ends, continued below
    const lines = groups.split('\n');
    const rule = lines.findIndex((l) => l.startsWith('---'));
    const keyWidth = lines[rule]!.indexOf(' ');
    const keys = lines.slice(rule + 1).map((l) => drawnIn(l, 0, keyWidth));
    expect(keys.some((k) => k.length === keyWidth && LONG_TASK.startsWith(k))).toBe(true);
    expect(keys.map((k) => k.trimEnd()).join('')).toContain(LONG_TASK);
  }, 120_000);
});
