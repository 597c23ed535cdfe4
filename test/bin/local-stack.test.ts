import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonDocument } from '../../lib/json-document.js';
import { formatRfc3339, parseStoredTimestamp } from '../../lib/time.js';
import { buildChecks, type LocalStackResult, runLocalStack } from '../../local/stack.js';
import { renderStackSummary } from '../../local/stack-summary.js';
import { badInstants } from '../support/instants.js';
import { pageFigures, section } from '../support/page-figures.js';
import { TARGETS, type TargetName, useTestDatabase } from '../support/targets.js';

// `npm start` in-process on a small store, so it cannot rot: every figure of its summary must
// match what the generated store and the planned stream produce, on every database target.
// pglite runs the stack's own default (embedded PGlite); the others get an empty test database.
// EMF documents are for CloudWatch; the stack's ingest handler would print one per batch.
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const pages = mkdtempSync(join(tmpdir(), 'local-stack-page-'));
afterAll(() => rmSync(pages, { recursive: true, force: true }));
const SMALL = { messages: 600, live: 40, seed: 7, page: join(pages, 'page.html') };
const progress = { write: () => true };
const CONTEXT = { wallMs: 0, kept: { kind: 'none' } } as const;
const DAY = 86_400_000_000n;

function useStackDatabase(name: TargetName): () => { databaseUrl?: string; wsProxy?: string } {
  if (name === 'pglite') return () => ({});
  // the stack creates the host's real DDL (its metadata index, issue 34) in an empty database
  const t = useTestDatabase(name, { subagentTable: false, fixture: 'host' });
  return () => ({ databaseUrl: t.url, wsProxy: t.proxy?.address });
}

describe.each(TARGETS)('the local stack on %s', (name) => {
  const target = useStackDatabase(name);
  let result: LocalStackResult;

  it('produces exactly what the generated store and the live stream must (AC-2, AC-9, AC-21b, AC-28, AC-31)', async () => {
    result = await runLocalStack({ ...SMALL, ...target(), progress });
    const mismatches = result.checks.filter((c) => !c.ok);
    expect(mismatches).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.checks.length).toBeGreaterThan(20);
    expect(result.health.status).toBe('healthy');
    expect(result.deadLetters.map((l) => l.failure)).toEqual(Array(result.plan.expected.invalid).fill('invalid_frame'));
  }, 180_000);

  it("issue 25: npm start --json gives every instant as RFC 3339 UTC, the host store's bigint instants too (not strings of microseconds)", () => {
    const doc = JSON.parse(jsonDocument(result));
    expect(badInstants(doc)).toEqual([]);
    expect(doc.store.createdAt.first).toBe(formatRfc3339(result.store.createdAt!.first));
    expect(doc.store.newestQualifyingCreatedAt).toBe(formatRfc3339(result.store.newestQualifyingCreatedAt!));
  });

  it('R3-9: writes the report page to the path it prints; its subagents are the rows the stack stored', () => {
    expect(result.page.path).toBe(SMALL.page);
    expect(renderStackSummary(result, CONTEXT)).toContain(SMALL.page);
    const html = readFileSync(SMALL.page, 'utf8');
    expect(result.page.bytes).toBe(Buffer.byteLength(html));
    const subagents = pageFigures(section(html, 'totals')).find((f) => f.path === 'totals.subagents');
    expect(subagents?.value).toBe(result.rows.reduce((n, r) => n + r.rows, 0));
  });

  it("R5-5, R5-1, R5-3, R6-10: npm start checks the ledger's unpriced events, lower bound, measured and list-priced cost and every fan_out_cost bucket; its history is the 30 days before the run, which the live rows continue", () => {
    const names = result.checks.map((c) => c.name);
    for (const wanted of [
      'report unpriced events = generated unpriced',
      'report estimated unpriced events = generated estimated unpriced',
      'report cost is a lower bound (unpriced events)',
      'report measured cost = generated provider_reported',
      'report list-priced cost = generated models_dev_list',
      'fan-out cost: turns over the buckets = generated turns',
      'fan-out cost: unattributed events = generated legacy rows',
      // R6-10: each event once, the sum closed with the total
      'fan-out cost: priced events of turns not costed = generated',
      'fan-out cost: costed + not costed + no turn = the total cost',
    ])
      expect(names).toContain(wanted);
    expect(names.filter((n) => n.startsWith('fan-out cost 9+:'))).toHaveLength(2);
    expect(result.report.totals.cost_lower_bound).toBe(true);
    expect(result.store.costs!.legacyEvents).toBeGreaterThan(0);
    // the live stream's new top-level rows: every new row but the one nested subagent
    const liveTopLevel = Object.values(result.plan.expected.topLevelByTurn).reduce((a, b) => a + b, 0);
    expect(liveTopLevel).toBe(result.plan.expected.newRows - 1);
    const captureSince = parseStoredTimestamp(result.migration.captureSince!)!;
    const { first, last } = result.store.createdAt!;
    expect(captureSince - last).toBeGreaterThan(0n);
    expect(captureSince - last).toBeLessThan(DAY);
    expect(captureSince - first).toBeLessThan(31n * DAY);
    expect(captureSince - first).toBeGreaterThan(29n * DAY);
  });

  it('R5-6: publishes the demo’s report to the emulator’s S3 and prints the link, which served the page', () => {
    expect(result.published.keys.map((k) => k.replace(/\d{4}-\d\d-\d\d\/\d{6}Z/, 'D'))).toEqual([
      'reports/D/report.json',
      'reports/D/index.html',
      'reports/latest/report.json',
      'reports/latest/index.html',
    ]);
    expect(result.published.linkServesPage).toBe(true);
    expect(result.published.url).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/subagent-context-demo\/reports\/latest\/index\.html\?.*X-Amz-Signature=/,
    );
    expect(result.checks.find((c) => c.name === 'published page served through its link')?.ok).toBe(true);
    expect(renderStackSummary(result, CONTEXT)).toContain(result.published.url);
  });

  it('flags a figure that differs from the expectation as a mismatch', () => {
    const expected = { ...result.plan.expected, attempted: result.plan.expected.attempted + 1 };
    const checks = buildChecks({ ...result, plan: { expected }, asyncWithMetrics: 0 });
    expect(checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(['attempted']);
    expect(renderStackSummary({ ...result, checks, ok: false }, CONTEXT)).toMatch(
      /1 MISMATCH\(ES\) of \d+ checks: attempted/,
    );
  });

  // The embedded database is always fresh; only a given database can already hold a store.
  it.skipIf(name === 'pglite')(
    'refuses a database that already holds a host store',
    async () => {
      await expect(
        runLocalStack({ ...SMALL, ...target(), progress }).then(() =>
          runLocalStack({ ...SMALL, ...target(), progress }),
        ),
      ).rejects.toThrow(/needs an empty database/);
    },
    180_000,
  );
});

describe('the local stack with a short live stream (issue 25)', () => {
  const t = useTestDatabase('sqlite', { subagentTable: false, fixture: 'host' });
  it.each([0, 1, 5, 10])(
    '--live %i passes every check: the invalid bodies are sent however short the stream (AC-2)',
    async (live) => {
      const result = await runLocalStack({ messages: 200, live, seed: 3, databaseUrl: t.url, progress });
      expect(result.checks.filter((c) => !c.ok)).toEqual([]);
      expect(result.deadLetters).toHaveLength(result.plan.expected.invalid);
      expect(result.health.status).toBe(live === 0 ? 'silent' : 'healthy');
    },
    120_000,
  );
});
