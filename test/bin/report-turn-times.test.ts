import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { createPublishHandler, PUBLISH_BUCKET_ENV, PUBLISH_PREFIX_ENV } from '../../lib/publish/handler.js';
import { publishReport } from '../../lib/publish/run.js';
import { createS3Client, s3Writer } from '../../lib/publish/s3.js';
import type { ReportDocument } from '../../lib/report/document.js';
import { runCliCaptured, runCliJson, testProxyEnv } from '../support/cli-run.js';
import { useS3 } from '../support/s3.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * R4-3 / issue 57 #3: one task_session_turns.started_at that is not an instant (PostgreSQL
 * `infinity`, SQLite 'garbage') costs that tree its host dates, counted in a note, never the
 * report: `report --json --trees N`, `report --html`, `publish` and the scheduled publish all give
 * their output, and the tree is dated by its subagents' observations (as a turn the host does not
 * record). The host's real schema (it has started_at and completed_at).
 */

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-turn-times-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOTE =
  "1 fan-out tree(s) are dated by their subagents' observations: their task_session_turns.started_at or completed_at is not an instant.";

describe.each(TARGETS)('R4-3 / issue 57 #3: a turn start that is not an instant on %s', (target) => {
  const t = useTestDatabase(target, { fixture: 'host', subagentTable: false });
  const s3 = useS3();
  const odd = target === 'sqlite' ? 'garbage' : 'infinity';
  beforeEach(async () => {
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: '2026-08-12T13:00:01Z', settled_at: '2026-08-12T13:00:09Z' },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: '2026-08-12T14:00:00Z', settled_at: '2026-08-12T14:00:05Z' },
    ]);
    await t.db.query(
      `UPDATE task_session_turns SET started_at = ${target === 'sqlite' ? '$1' : '$1::timestamp'} WHERE id = 'u1'`,
      [odd],
    );
  });

  it('R4-3 / issue 57 #3: report --json --trees N gives every tree, the odd one dated by its observations, and counts it in a note', async () => {
    const run = await runCliJson(['report', '--database-url', t.url, '--json', '--trees', '5'], testProxyEnv());
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const doc = run.json as ReportDocument;
    expect(doc.trees.map((tree) => tree.turn_id)).toEqual(['u2', 'u1']);
    const u1 = doc.trees.find((tree) => tree.turn_id === 'u1')!;
    expect([u1.started_at, u1.completed_at]).toEqual(['2026-08-12T13:00:01.000000Z', '2026-08-12T13:00:09.000000Z']);
    expect(doc.completeness.notes).toContain(NOTE);
    expect(run.stderr).not.toContain('task_session_subagents');
  });

  it('R4-3 / issue 57 #3: report --html writes the page', async () => {
    const file = join(dir, `${target}.html`);
    const run = await runCliCaptured(['report', '--database-url', t.url, '--html', file], testProxyEnv());
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(readFileSync(file, 'utf8')).toContain('are dated by their subagents');
  });

  it('R4-3 / issue 57 #3: publish --to, the publish function and the scheduled handler publish the report', async () => {
    const cli = await runCliJson(
      ['publish', '--database-url', t.url, '--to', `s3://${s3.bucket}/cli`, '--json'],
      testProxyEnv(),
    );
    expect(cli.code, cli.stderr).toBe(EXIT.ok);
    const client = createS3Client();
    try {
      const summary = await publishReport(t.db, s3Writer(client, s3.bucket, { prefix: 'fn' }), {
        bucket: s3.bucket,
        prefix: 'fn',
      });
      expect(summary.objects).toHaveLength(4);
    } finally {
      client.destroy();
    }
    const handler = createPublishHandler({
      db: () => t.db,
      env: { [PUBLISH_BUCKET_ENV]: s3.bucket, [PUBLISH_PREFIX_ENV]: 'scheduled' },
    });
    expect((await handler({}, { getRemainingTimeInMillis: () => 60_000 })).objects).toHaveLength(4);
    const doc = JSON.parse((await s3.get('scheduled/latest/report.json')).body) as ReportDocument;
    expect(doc.completeness.notes).toContain(NOTE);
  });
});
