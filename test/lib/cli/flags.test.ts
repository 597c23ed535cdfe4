import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../lib/cli/exit-codes.js';
import { FLAG_VALUES } from '../../../lib/cli/flags.js';
import { CLI_OPTIONS } from '../../../lib/cli/main.js';
import { runCliCaptured, runCliJson } from '../../support/cli-run.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * A flag's value, read by the real CLI (issue 30, items 18-19; docs/report.md#bad-input): a count is
 * a whole number ≥ 1 written in decimal digits only; an instant is RFC 3339 with an offset; the
 * window [since, until) may be empty but not reversed. A refused value exits 2 naming the flag,
 * before any database is opened; an accepted one reaches the store.
 */

// `--flag=value`, so a value starting with '-' is the flag's value, not another option
const refused = (flags: string[]) => runCliCaptured(['report', '--database-url', 'sqlite::memory:', ...flags]);

describe('flag values the CLI refuses (exit 2, the flag named)', () => {
  it.each([['1e3'], ['0x10'], [' 5'], ['5 '], ['5.0'], ['+5'], ['-1'], ['0'], [''], ['٥'], ['9007199254740993']])(
    'R3-5: --limit %j is not a count',
    async (value) => {
      const run = await refused(['--by', 'task', `--limit=${value}`]);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toMatch(/^--limit needs a positive count of groups, a whole number of at least 1/m);
      expect(run.stderr).toContain(`(got ${JSON.stringify(value)})`);
    },
  );

  it.each([['1e3'], ['0x10'], [' 5'], ['5.0'], ['0']])('R3-9: --trees %j is not a count', async (value) => {
    const run = await refused(['--json', `--trees=${value}`]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/^--trees needs a positive count of turns, a whole number of at least 1/m);
  });

  it.each([['-1'], [''], [' '], ['abc'], ['Infinity'], ['NaN']])(
    'R3-8: --grace-seconds %j is not a number of seconds',
    async (value) => {
      const run = await refused([`--grace-seconds=${value}`]);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toMatch(/^--grace-seconds needs a non-negative number of seconds/m);
    },
  );

  it.each([['yesterday'], ['2026-08-12T13:00:00'], ['2026-8-12'], ['']])(
    'R3-5: --since %j is not an RFC 3339 instant with an offset',
    async (value) => {
      const run = await refused([`--since=${value}`]);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toMatch(/^--since needs an RFC 3339 instant with an offset or a date \(UTC midnight\)/m);
    },
  );

  it('R3-5: --since a microsecond after --until is refused (the window would be reversed)', async () => {
    const run = await refused(['--since', '2026-08-12T13:00:00.000001Z', '--until', '2026-08-12T13:00:00Z']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/^--since 2026-08-12T13:00:00\.000001Z is after --until 2026-08-12T13:00:00\.000000Z/m);
  });
});

describe.each(TARGETS)('flag values the CLI accepts, on %s', (name) => {
  const t = useTestDatabase(name);
  const report = (...flags: string[]) =>
    runCliJson(
      ['report', '--database-url', t.url, '--json', ...flags],
      t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {},
    );

  it('R3-5: equal --since and --until are accepted: an empty window, not an error', async () => {
    const run = await report('--since', '2026-08-12T13:00:00Z', '--until', '2026-08-12T15:00:00+02:00');
    // stderr may carry a note on how the store was read (R4-5), never a usage error
    expect(run.stderr).not.toMatch(/^--/m);
    expect(run.code).toBe(EXIT.ok);
    expect(run.json.filters).toMatchObject({
      since: '2026-08-12T13:00:00.000000Z',
      until: '2026-08-12T13:00:00.000000Z',
    });
    expect(run.json.totals.subagents).toBe(0);
  });

  it.each([
    [['--by', 'task', '--limit', '1'], { limit: 1 }],
    [['--by', 'task', '--limit', '9007199254740991'], { limit: 9007199254740991 }],
    [['--by', 'task', '--limit', '10', '--trees', '3'], { limit: 10 }],
  ])('R3-5: %j is accepted', async (flags, filters) => {
    const run = await report(...flags);
    // stderr may carry a note on how the store was read (R4-5), never a usage error
    expect(run.stderr).not.toMatch(/^--/m);
    expect(run.code).toBe(EXIT.ok);
    expect(run.json.filters).toMatchObject(filters);
  });

  it.each([['0'], ['0.5'], ['900']])('R3-8: --grace-seconds %j is accepted', async (value) => {
    const run = await report('--grace-seconds', value);
    // stderr may carry a note on how the store was read (R4-5), never a usage error
    expect(run.stderr).not.toMatch(/^--/m);
    expect(run.code).toBe(EXIT.ok);
  });
});

describe('issue 58 #19: a flag given without its value says what kind of value it takes', () => {
  const valued = Object.entries(CLI_OPTIONS)
    .filter(([, option]) => option.type === 'string')
    .map(([name]) => name);

  it.each(valued)(
    'issue 58 #19: --%s at the end of the line names its kind of value (a file path, a number of seconds, a URL …)',
    async (name) => {
      const run = await runCliCaptured(['report', `--${name}`]);
      expect(run.code).toBe(EXIT.usage);
      expect(FLAG_VALUES[name], `FLAG_VALUES has no entry for --${name}`).toBeDefined();
      expect(run.stderr.split('\n')[0]).toBe(`--${name} needs ${FLAG_VALUES[name]}`);
    },
  );

  it('issue 58 #19: --html needs a file path', async () => {
    const run = await runCliCaptured(['report', '--json', '--html', '--csv']);
    expect(run.stderr.split('\n')[0]).toBe(
      '--html needs a file path (where the page is written) (got the option --csv instead)',
    );
  });
});
