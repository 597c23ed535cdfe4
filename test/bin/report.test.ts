import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { runCliCaptured } from '../support/cli-run.js';
import { buildReportStore } from '../support/report-store.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/** The escape that starts every ANSI colour sequence. */
const ESC = '\u001b';

describe('subagent-context report: bad input is a usage error naming the flag (exit 2)', () => {
  it.each([
    [['--by', 'week'], /^--by must be one of task, session, turn, type, model, day \(got "week"\)$/m],
    [
      ['--since', 'yesterday'],
      /^--since needs an RFC 3339 instant with an offset or a date \(UTC midnight\), e\.g\. .* \(got "yesterday"\)$/m,
    ],
    [['--until', '2026-08-12 13:00'], /^--until needs an RFC 3339 instant/m],
    [
      ['--since', '2026-08-13T00:00:00Z', '--until', '2026-08-12T00:00:00+02:00'],
      /^--since 2026-08-13T00:00:00\.000000Z is after --until 2026-08-11T22:00:00\.000000Z: .*swap them$/m,
    ],
    [
      ['--by', 'task', '--limit', '0'],
      /^--limit needs a positive count of groups, a whole number of at least 1 \(got "0"\)$/m,
    ],
    [['--limit', '5'], /^--limit limits the groups: give --by/m],
    [
      ['--by', 'task', '--sort', 'size'],
      /^--sort must be one of subagents, contexts, tokens, cost, key, last_observed_at/m,
    ],
    [['--json', '--csv'], /^--json and --csv exclude each other/m],
    [['--trees', 'all', '--json'], /^--trees needs a positive count of turns/m],
    [['extra'], /^report takes no arguments/m],
  ])('R3-5: report %j', async (flags, message) => {
    const run = await runCliCaptured(['report', '--database-url', 'sqlite::memory:', ...flags]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});

describe.each(TARGETS)('subagent-context report on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  const env = () => (t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {});
  const report = (flags: string[], extraEnv: NodeJS.ProcessEnv = {}, isTTY = false) =>
    runCliCaptured(['report', '--database-url', t.url, ...flags], { ...env(), ...extraEnv }, { isTTY });

  it('R3-3: a store without our table exits 1 and names the command that adds it', async () => {
    const run = await report([]);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toMatch(
      /^subagent-context: the store has no task_session_subagents table: run `subagent-context migrate`/m,
    );
  });

  it('a store without task_sessions exits 1 and says it is not a host store', async () => {
    for (const table of ['task_session_messages', 'task_session_turns', 'task_sessions'])
      await t.db.query(`DROP TABLE ${table}`);
    const run = await report(['--json']);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toMatch(
      /no task_sessions or task_session_messages table: this is not the host's store: point --database-url/,
    );
    expect(JSON.parse(run.stdout)).toMatchObject({ name: 'CliFailure' });
  });

  it('R3-5, R3-8, R6-9: the table states completeness first, then totals with thousands separators (the estimated part with its own unpriced events), then the groups', async () => {
    await buildReportStore(t.db, 'minimal');
    const run = await report(['--by', 'task', '--limit', '3']);
    expect(run.code).toBe(EXIT.ok);
    const text = run.stdout;
    expect(text.indexOf('== completeness')).toBeLessThan(text.indexOf('== totals =='));
    expect(text).toMatch(/^capture_since\s+2026-07-20T00:00:00\.000000Z$/m);
    expect(text).toMatch(/^verified_through\s+2026-07-25T00:00:00\.000000Z$/m);
    expect(text).toMatch(
      /^context at finish\s+\d{1,3}(,\d{3})+ tokens, as reported \(\d+ reported; p50 [\d,]+, p95 [\d,]+, max [\d,]+\)$/m,
    );
    expect(text).toMatch(
      /^cost\s+(≥ )?\d{1,3}(,\d{3})+ subcents \((≥ )?\$[\d,]+\.(\d\d|\d{4})(, [\d,]+ events? unpriced)?\)$/m,
    );
    // R6-9: the estimated part with its own unpriced events, the count --json gives
    const { totals } = JSON.parse((await report(['--json'])).stdout);
    const estimated =
      /^estimated part\s+(≥ )?[\d,]+ subcents \((≥ )?\$[\d,]+\.(\d\d|\d{4})(?:, ([\d,]+) events? unpriced)?\)$/m.exec(
        text,
      );
    expect(estimated).not.toBeNull();
    expect(estimated![4] === undefined ? 0 : Number(estimated![4].replaceAll(',', ''))).toBe(
      totals.estimated_cost_lower_bound ? totals.estimated_unpriced_events : 0,
    );
    expect(text).toMatch(/== by task, sorted by subagents, first 3 ==/);
    expect(text.split('\n').filter((l) => /^g1-task-/.test(l))).toHaveLength(3);
    expect(text).not.toContain(ESC);
  });

  it('R6-10, R6-11: without filters the fan-out cost closes its sum with the total cost, in the table and in the CSV alike', async () => {
    await buildReportStore(t.db, 'minimal');
    const closing = /^with the total\s+(.+ = \$[\d,]+\.\d{4}, the total cost)$/m.exec((await report([])).stdout);
    expect(closing).not.toBeNull();
    const records = parse((await report(['--csv'])).stdout, { relax_column_count: true }) as string[][];
    expect(records.map((r) => r[0])).toContain(`# fan_out_cost with the total: ${closing![1]}`);
  });

  it.each([
    ['an unknown task', ['--task', 'no-such-task']],
    ['an empty session', ['--session', 'no-such-session']],
  ])(
    'issue 58: in a scope with no cost event (%s) the ledger with cost_source says none in scope, never "not known"',
    async (_, scope) => {
      await buildReportStore(t.db, 'minimal');
      const text = (await report(scope)).stdout;
      expect(text).toMatch(/^unpriced events\s+none in scope$/m);
      expect(text).not.toContain('does not record which events were priced');
      const csv = parse((await report(['--csv', ...scope])).stdout, { relax_column_count: true }) as string[][];
      expect(csv.map((r) => r[0])).toContain('# unpriced_events: 0');
    },
  );

  it('colour only on a TTY, and never with NO_COLOR', async () => {
    await buildReportStore(t.db, 'minimal');
    expect((await report([], {}, true)).stdout).toContain(`${ESC}[1m== totals ==${ESC}[0m`);
    expect((await report([], { NO_COLOR: '1' }, true)).stdout).not.toContain(ESC);
  });

  it('R3-5, R3-8, R4-6: --csv has completeness as # cells, a header and one row per group; --json is the document', async () => {
    await buildReportStore(t.db, 'minimal');
    const csv = await report(['--csv', '--by', 'session']);
    expect(csv.code).toBe(EXIT.ok);
    const records = parse(csv.stdout, { relax_column_count: true }) as string[][];
    const comments = records.filter((r) => r.length === 1).map((r) => r[0]);
    expect(comments).toContain('# capture_since: 2026-07-20T00:00:00.000000Z');
    expect(comments.some((l) => l!.startsWith('# shortfall: none (0)'))).toBe(true);
    const [header, ...rows] = records.slice(comments.length);
    expect(header!.slice(0, 6)).toEqual(['by', 'key', 'title', 'lower_bound', 'started_at', 'subagents']);
    const json = JSON.parse((await report(['--json', '--by', 'session'])).stdout);
    expect(rows).toHaveLength(json.groups.length);
    expect(json).toMatchObject({ version: 1, filters: { by: 'session' } });
  });
});
