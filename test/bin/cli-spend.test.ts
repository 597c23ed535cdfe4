import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { readSessionUsage } from '../../lib/store/usage-read.js';
import { USAGE_TABLE } from '../../lib/store/usage-table.js';
import { writeBatch } from '../../lib/store/write.js';
import { writeClaudeTranscript } from '../../local/agent-records.js';
import { DEMO_PRICES } from '../../local/spend-demo.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { seedSession, write } from '../support/frames.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

const cli = (...argv: string[]) => runCliJson(argv, { ...testProxyEnv(), HOME: '/nonexistent-home' });

const transcript = (home: string, agentId: string, complete = true) =>
  writeClaudeTranscript(
    home,
    { project: '-work', session: 'sess', agentId },
    {
      complete,
      unreadableLines: 0,
      requests: [
        {
          model: 'claude-sonnet-4-5',
          input: 1000,
          output: 500,
          cacheRead: 20_000,
          cacheWrite: 3_000,
          reasoning: 0,
          costSubcents: 0,
        },
      ],
    },
  );

describe.each(TARGETS)('subagent-context spend on %s', (name) => {
  const t = useTestDatabase(name);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-spend-'));
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** `spend` on the test's store, with the test's Claude folder. */
  const spend = (...argv: string[]) =>
    cli('spend', '--database-url', t.url, '--claude-dir', join(dir, 'claude'), ...argv);

  const seed = async () => {
    await seedSession(t.db);
    transcript(join(dir, 'claude'), 'a1');
    await writeBatch(t.db, [
      write({ tool_call_id: 'c1', subagent_task: { agent_id: 'a1' } }),
      write({ tool_call_id: 'c2', subagent_task: { agent_id: 'gone' } }),
    ]);
    const prices = join(dir, 'prices.json');
    writeFileSync(prices, JSON.stringify(DEMO_PRICES));
    return prices;
  };

  it('R6-4: spend --json reads the records, prices them and says what it wrote and what it could not serve', async () => {
    const prices = await seed();
    const run = await spend('--prices', prices, '--json');
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({
      rows: 2,
      written: 1,
      priced: 1,
      unpriced: 0,
      unserved: { no_record: 1 },
      complete: true,
    });
    // 1,000 × $3 + 500 × $15 + 20,000 × $0.30 + 3,000 × $3.75 per million = $0.02775
    expect(await readSessionUsage(t.db, 's1')).toMatchObject([
      { tool_call_id: 'c1', tokens_in: 1000, cost_subcents: 278, cost_source: 'models_dev_list', complete: 1 },
    ]);
  });

  it('R6-4: spend prints a table a person reads, each reason on its own line', async () => {
    const prices = await seed();
    const run = await spend('--prices', prices, '-q');
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/usage written\s+1/);
    expect(run.stdout).toMatch(/not served: no record\s+1/);
  });

  it('R6-4: spend --dry-run lists what it would write and writes nothing', async () => {
    await seed();
    const run = await spend('--dry-run', '--json');
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({
      dry_run: true,
      written: 1,
      would_write: [{ tool_call_id: 'c1', kind: 'claude' }],
    });
    expect(await readSessionUsage(t.db, 's1')).toEqual([]);
  });

  it('R6-4: without --prices a run the agent did not price is stored unpriced, and a note says so', async () => {
    await seed();
    const run = await spend('--json');
    expect(run.json).toMatchObject({ written: 1, unpriced: 1 });
    expect(run.stderr).toContain('no --prices');
    expect(await readSessionUsage(t.db, 's1')).toMatchObject([{ cost_subcents: null, cost_source: 'unpriced' }]);
  });

  it.each([
    ['a missing file', undefined, /--prices .*p\.json: cannot read it \(ENOENT\)/],
    ['not JSON', '{', /--prices .*p\.json: not JSON/],
    ['a JSON array', '[]', /--prices .*p\.json: not a JSON object/],
  ])('R6-4: --prices with %s is a usage error naming the file (exit 2)', async (_, content, message) => {
    const file = join(dir, 'p.json');
    if (content !== undefined) writeFileSync(file, content);
    const run = await cli('spend', '--database-url', t.url, '--prices', file);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
  });

  it('R6-4: a store migrated before the usage table says to run migrate', async () => {
    await t.db.query(`DROP TABLE ${USAGE_TABLE}`);
    const run = await cli('spend', '--database-url', t.url);
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toContain(`the store has no ${USAGE_TABLE} table`);
    expect(run.stderr).toContain('subagent-context migrate');
  });

  it('R6-4: a spend flag given to another command is refused', async () => {
    const run = await cli('report', '--database-url', t.url, '--dry-run');
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('--dry-run does not apply to report (it is for spend)');
  });
});
