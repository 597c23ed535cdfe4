import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { runCliCaptured } from '../support/cli-run.js';
import { buildReportStore } from '../support/report-store.js';
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
