import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { PAGE_DEFAULTS } from '../../lib/defaults.js';
import { ACKNOWLEDGED_KEY, CHECKPOINT_KEY } from '../../lib/health/checkpoint.js';
import { CAPTURE_SINCE_KEY } from '../../lib/store/meta.js';
import { codePoints } from '../../lib/text.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { section } from '../support/page-figures.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * R4-4: the page stays under 2 MB whatever the store holds: every host string on it is cut, ids in
 * attributes and kandev_meta values quoted in notes included, and the tree budget counts UTF-8
 * bytes. Cuts fall on grapheme clusters (issue 48 items 10, 16).
 */

process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const dir = mkdtempSync(join(tmpdir(), 'subagent-context-hostile-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...argv: string[]) => runCliCaptured(argv, testProxyEnv());
const MB2 = 2 * 1024 * 1024;

describe.each(TARGETS)('R4-4 on %s: a hostile store still makes a page under 2 MB', (name) => {
  const t = useTestDatabase(name, { fixture: 'host' });

  it('R4-4: 210 rows with 20,000-character task and turn ids, and 1,500,000-character checkpoint keys: the page is under 2 MB, every attribute cut, the table cut, the check not called "not run"', async () => {
    const long = (tag: string, i: number) => `${tag}${i}-${'x'.repeat(20_000)}`;
    await insertRows(
      t.db,
      Array.from({ length: 210 }, (_, i) => ({
        task_session_id: `s${i}`,
        task_id: long('task', i),
        turn_id: long('turn', i),
        tool_call_id: `c${i}`,
        observed_at: `2026-08-12T10:00:00.${String(i).padStart(6, '0')}Z`,
      })),
    );
    const meta = (key: string, value: string) =>
      t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);
    await meta(CAPTURE_SINCE_KEY, '2026-08-12T00:00:00.000000000Z');
    await meta(CHECKPOINT_KEY, 'y'.repeat(1_500_000));
    await meta(ACKNOWLEDGED_KEY, 'z'.repeat(1_500_000));

    const file = join(dir, `${name}-ids.html`);
    const run = await cli('report', '--database-url', t.url, '--by', 'task', '--html', file);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const page = readFileSync(file);
    expect(page.length).toBeLessThan(MB2);
    const html = page.toString('utf8');
    for (const m of html.matchAll(/ data-(?:key|turn)="([^"]*)"/g))
      expect(codePoints(m[1]!)).toBeLessThanOrEqual(PAGE_DEFAULTS.idChars + 1);
    expect(html).not.toContain('y'.repeat(1_000));
    expect(html).not.toContain('has not run');
    expect(section(html, 'completeness')).toContain('1,500,000 characters');
    // the table (the run's stdout) quotes the keys cut as well
    expect(run.stdout.length).toBeLessThan(MB2);
    expect(run.stdout).not.toContain('y'.repeat(1_000));
    expect(run.stdout).not.toContain('has not run');
  }, 120_000);

  it('R4-4: trees of CJK text are held to the tree budget in UTF-8 bytes, not UTF-16 units', async () => {
    // 200 subagents a turn, 50 turns, each description 4,096 CJK characters (3 bytes each)
    const rows = [];
    for (let turn = 0; turn < 50; turn++)
      for (let n = 0; n < 40; n++)
        rows.push({
          task_session_id: `s${turn}`,
          turn_id: `u${turn}`,
          tool_call_id: `c${turn}-${n}`,
          subagent_type: '型'.repeat(200),
          model: '模'.repeat(200),
          description: '漢'.repeat(4096),
          observed_at: `2026-08-12T10:${String(turn).padStart(2, '0')}:00.000001Z`,
        });
    await insertRows(t.db, rows);
    const file = join(dir, `${name}-cjk.html`);
    const run = await cli('report', '--database-url', t.url, '--html', file);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const trees = Buffer.byteLength(section(readFileSync(file, 'utf8'), 'trees'), 'utf8');
    // the budget, plus the one node and summary that may cross it
    expect(trees).toBeLessThan(PAGE_DEFAULTS.treeBytes + 8_000);
  }, 180_000);

  it('R4-4: the page cuts on grapheme clusters: e + U+0301, a ZWJ family and a flag are never split', async () => {
    const clusters = ['e\u0301', '👨‍👩‍👧', '🇺🇸'];
    await insertRows(
      t.db,
      clusters.map((cluster, i) => ({
        tool_call_id: `c${i}`,
        // 'a' then the cluster repeated: every cut of the description falls inside a cluster's run
        description: `a${cluster.repeat(400)}`,
        subagent_type: `b${cluster.repeat(100)}`,
        observed_at: `2026-08-12T10:00:0${i}.000001Z`,
      })),
    );
    const file = join(dir, `${name}-graphemes.html`);
    const run = await cli('report', '--database-url', t.url, '--html', file);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const trees = section(readFileSync(file, 'utf8'), 'trees');
    const texts = [...trees.matchAll(/<(?:bdi|code)[^>]*>([ab][^<]*)<\/(?:bdi|code)>/g)].map((m) => m[1]!);
    expect(texts).toHaveLength(6);
    for (const text of texts) {
      const cluster = clusters.find((c) => text.includes(c.slice(0, 2)))!;
      // the text is the letter and whole clusters only: nothing of a split one is left over
      expect(text.slice(1).split(cluster).join('')).toBe('');
      expect(text.length).toBeGreaterThan(1);
    }
  }, 60_000);

  it('R4-4: one row dated 9999-12-31 leaves every real day on the per-day charts and is named as an outlier', async () => {
    const rows = Array.from({ length: 32 }, (_, i) => ({
      tool_call_id: `c${i}`,
      observed_at: `2026-07-${String(i + 1).padStart(2, '0')}T10:00:00.000001Z`.replace('07-32', '08-01'),
    }));
    rows.push({ tool_call_id: 'late', observed_at: '9999-12-31T10:00:00.000001Z' });
    await insertRows(t.db, rows);
    const file = join(dir, `${name}-days.html`);
    const run = await cli('report', '--database-url', t.url, '--html', file);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const html = readFileSync(file, 'utf8');
    const start = html.indexOf('<figure class="chart" id="chart-per-day"');
    const chart = html.slice(start, html.indexOf('</figure>', start));
    expect(chart).toContain('32 of 33 days');
    expect(chart).toMatch(/1 later day not drawn, such as 31 Dec 9999 \(1 subagent\)/);
    expect(chart.match(/<th scope="row">/g)).toHaveLength(32);
  }, 60_000);
});
