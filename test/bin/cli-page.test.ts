import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import type { Queryable } from '../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../lib/health/checkpoint.js';
import type { Group, ReportDocument } from '../../lib/report/document.js';
import { renderHtml } from '../../lib/report/render/html.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../lib/store/meta.js';
import { parseRfc3339 } from '../../lib/time.js';
import { seedMessage } from '../lib/health/seed.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { addCostEvent } from '../support/cost-events.js';
import { pageFigures, resolve, section, strayNumbers } from '../support/page-figures.js';
import { insertGeneratedTurn, insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real CLI in-process (test/support/cli-run.ts). */
const cli = (...argv: string[]) => runCliCaptured(argv, testProxyEnv());

const us = (text: string) => parseRfc3339(text)!;

async function setMeta(db: Queryable, key: string, value: string) {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);
}

async function addCost(db: Queryable, id: string, session: string, task: string, turn: string, subcents: number) {
  await addCostEvent(db, { id, session, task, turn, subcents, at: '2026-08-12T13:00:00Z' });
}

/**
 * A known store: two tasks (one titled with markup), three sessions, six subagents over two days
 * (reported and unreported metrics, a nested one, a backfilled one), cost events, activation keys,
 * a session active before capture_since (a lower bound) and one message with no row (a shortfall).
 */
async function seedStore(db: Queryable): Promise<void> {
  await insertRows(db, [
    {
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'a',
      subagent_type: 'Explore',
      model: 'claude-sonnet-4',
      agent_status: 'completed',
      tool_status: 'complete',
      total_tokens: 41_237,
      tool_use_count: 12,
      duration_ms: 48_211,
      observed_at: '2026-08-12T13:00:00.000001Z',
      settled_at: '2026-08-12T13:01:00.000001Z',
      description: '<script>alert(1)</script>',
    },
    {
      task_session_id: 's1',
      task_id: 't1',
      turn_id: 'u1',
      tool_call_id: 'b',
      parent_tool_call_id: 'a',
      subagent_type: 'Plan',
      agent_status: 'async_launched',
      is_async: 1,
      observed_at: '2026-08-12T13:00:05Z',
    },
    {
      task_session_id: 's2',
      task_id: 't1',
      turn_id: 'u2',
      tool_call_id: 'c',
      subagent_type: 'Explore',
      source: 'backfill',
      total_tokens: 0,
      duration_ms: 900,
      observed_at: '2026-08-11T09:00:00Z',
    },
    {
      task_session_id: 's3',
      task_id: 't2',
      turn_id: 'u3',
      tool_call_id: 'd',
      subagent_type: 'general-purpose',
      model: 'gpt-5',
      total_tokens: 275_717,
      duration_ms: 1_204_113,
      observed_at: '2026-08-12T14:00:00Z',
    },
    { task_session_id: 's3', task_id: 't2', turn_id: 'u3', tool_call_id: 'e', observed_at: '2026-08-12T14:00:01Z' },
    { task_session_id: 's3', task_id: 't2', turn_id: 'u4', tool_call_id: 'f', observed_at: '2026-08-12T15:00:00Z' },
  ]);
  await db.query(`UPDATE tasks SET title = 'Fix the <b>login</b> "page" 2' WHERE id = 't1'`);
  await addCost(db, 'c1', 's1', 't1', 'u1', 1_000);
  await addCost(db, 'c2', 's3', 't2', 'u3', 333);
  await setMeta(db, CAPTURE_SINCE_KEY, '2026-08-12T12:00:00.000000000Z');
  await setMeta(db, BACKFILL_THROUGH_KEY, '2026-08-12T11:59:00.5Z');
  await setMeta(db, CHECKPOINT_KEY, '2026-08-12T12:30:00.000000000Z');
  // s2 was active before capture_since: its fan-out is a lower bound
  await seedMessage(db, { session: 's2', createdAt: us('2026-08-11T08:59:00Z'), metadata: '{}' });
  // a subagent message after the checkpoint that has no row: an open shortfall
  await seedMessage(db, { session: 's3', createdAt: us('2026-08-12T16:00:00Z'), toolCallId: 'missing-1' });
}

/** The page's task rows: each row's key and its figures (path relative to the row's group). */
function taskRows(html: string): Map<string, { field: string; value: unknown }[]> {
  const rows = new Map<string, { field: string; value: unknown }[]>();
  for (const m of section(html, 'tasks').matchAll(/<tr data-key="([^"]*)">([\s\S]*?)<\/tr>/g)) {
    const figures = pageFigures(m[2]!).map((f) => ({
      field: f.path.replace(/^(series\.task|groups)\.\d+\./, ''),
      value: f.value,
    }));
    rows.set(m[1]!, figures);
  }
  return rows;
}

describe.each(TARGETS)('report --html on %s: the page equals the --json report (R3-9)', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });
  beforeEach(() => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
  });

  it('R3-9: every number in the banner, the totals and the tasks table equals the --json report’s for the same arguments', async () => {
    await seedStore(t.db);
    const args = ['report', '--database-url', t.url, '--by', 'task', '--grace-seconds', '0'];
    const json = await cli(...args, '--json');
    expect(json.code, json.stderr).toBe(EXIT.ok);
    const doc = JSON.parse(json.stdout) as ReportDocument;
    const file = join(dir, `${name}.html`);
    const run = await cli(...args, '--html', file);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(new RegExp(`^wrote the page to ${file} \\([\\d,]+ bytes\\)\\n$`));
    const html = readFileSync(file, 'utf8');

    // the store is what we think it is (a report figure that moved would make the rest vacuous)
    expect(doc.totals).toMatchObject({ subagents: 6, nested: 1, backfill: 1, tokens: { sum: 316_954, reported: 3 } });
    expect(doc.completeness.shortfall).toMatchObject({ open: true, count: 1 });
    expect(doc.completeness.lower_bound_sessions).toBe(1);

    for (const id of ['completeness', 'totals']) {
      const figures = pageFigures(section(html, id));
      expect(figures.length, id).toBeGreaterThan(4);
      for (const f of figures) expect(f.value, f.path).toEqual(resolve(doc, f.path));
      expect(strayNumbers(section(html, id)), id).toEqual([]);
    }
    expect(section(html, 'completeness')).toContain('role="alert"');

    const rows = taskRows(html);
    expect([...rows.keys()].sort()).toEqual(doc.groups.map((g) => g.key).sort());
    for (const [key, figures] of rows) {
      const group = doc.groups.find((g) => g.key === key) as Group;
      expect(figures.map((f) => f.field).sort()).toEqual(
        [
          'contexts',
          'cost_per_context_subcents',
          'cost_subcents',
          'sessions',
          'subagents',
          'tokens.reported',
          'tokens.sum',
        ].sort(),
      );
      for (const f of figures) expect(f.value, `${key} ${f.field}`).toEqual(resolve(group, f.field));
    }
    expect(strayNumbers(section(html, 'tasks'))).toEqual([]);
    // the title and the description came from the database: shown, escaped
    expect(html).toContain('Fix the &lt;b&gt;login&lt;/b&gt; &quot;page&quot; 2');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toMatch(/<script/i);
  });

  it('R3-9: --html with --json prints the very document the page was rendered from (series, histogram, trees filled)', async () => {
    await seedStore(t.db);
    const file = join(dir, `${name}-both.html`);
    const run = await cli('report', '--database-url', t.url, '--html', file, '--json', '--grace-seconds', '0');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const doc = JSON.parse(run.stdout) as ReportDocument;
    expect(doc.series?.day?.map((g) => g.key)).toEqual(expect.arrayContaining(['2026-08-11', '2026-08-12']));
    expect(doc.distributions?.duration_ms.reported).toBe(3);
    expect(doc.trees.length).toBeGreaterThan(0);
    const html = readFileSync(file, 'utf8');
    for (const f of pageFigures(html)) expect(f.value, f.path).toEqual(resolve(doc, f.path));
    expect(html.match(/<details class="turn"/g)).toHaveLength(doc.trees.length);
    // R5-3: the fan-out cost chart's table has every bucket's figures, each the document's (above)
    expect(doc.fan_out_cost).not.toBeNull();
    const chart = html.slice(html.indexOf('<figure class="chart" id="chart-fan-out-cost">'));
    const paths = pageFigures(chart.slice(0, chart.indexOf('</figure>'))).map((f) => f.path);
    for (const i of [0, 1, 2, 3, 4, 5, 6])
      for (const field of ['turns', 'costed_turns', 'median_subcents', 'p95_subcents'])
        expect(paths, `${i} ${field}`).toContain(`fan_out_cost.buckets.${i}.${field}`);
  });

  it('R3-9: --html to a folder that does not exist fails naming the path and what to do (exit 1)', async () => {
    const run = await cli('report', '--database-url', t.url, '--html', join(dir, 'no', 'such', 'page.html'));
    expect(run.code).toBe(EXIT.failure);
    expect(run.stderr).toMatch(/cannot write the page to .*page\.html \(ENOENT\): give a path in a folder that exists/);
  });
  for (const [shape, n] of [
    ['deep', 100_000],
    ['wide', 30_000],
  ] as const) {
    it(`R4-4: a turn ${shape === 'deep' ? 'whose parent chain is 100,000 deep' : 'of 30,000 subagents'}: report --json --trees prints every node, and the page stays under 2 MB`, async () => {
      await insertGeneratedTurn(t.db, n, shape);
      const json = await cli('report', '--database-url', t.url, '--json', '--trees', '1');
      expect(json.code, json.stderr).toBe(EXIT.ok);
      const doc = JSON.parse(json.stdout) as ReportDocument;
      let nodes = 0;
      let depth = 0;
      const stack = doc.trees[0]!.subagents.map((node) => ({ node, level: 1 }));
      while (stack.length > 0) {
        const { node, level } = stack.pop()!;
        nodes++;
        depth = Math.max(depth, level);
        for (const child of node.children) stack.push({ node: child, level: level + 1 });
      }
      expect([nodes, depth]).toEqual([n, shape === 'deep' ? n : 1]);

      // The wide store through the CLI's --html; the deep one's page from the document just read
      // (the page's other figures over 100,000 rows cost minutes on a loaded machine, R4-12's to bound).
      const file = join(dir, `${name}-${shape}.html`);
      if (shape === 'wide') {
        const run = await cli('report', '--database-url', t.url, '--html', file, '--trees', '5');
        expect(run.code, run.stderr).toBe(EXIT.ok);
      } else writeFileSync(file, renderHtml(doc));
      const html = readFileSync(file, 'utf8');
      expect(Buffer.byteLength(html)).toBeLessThan(2 * 1024 * 1024);
      // the turn's first 200 subagents are drawn, the rest counted
      expect(html.match(/<div class="node">/g)).toHaveLength(200);
      expect(html).toContain(`and ${(n - 200).toLocaleString('en-US')} more subagents in this turn`);
      // paths name a node by its place in the turn, not by its depth
      expect(html).toContain('data-figure="trees.0.nodes.199.total_tokens"');
      expect(html).not.toContain('.children.');
    }, 600_000);
  }
});
