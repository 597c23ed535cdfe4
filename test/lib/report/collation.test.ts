import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../../lib/cli/exit-codes.js';
import type { Database, Queryable } from '../../../lib/db/database.js';
import { openDatabase } from '../../../lib/db/open.js';
import { startWsProxy, type WsProxy } from '../../../lib/db/ws-proxy.js';
import { CHECKPOINT_KEY } from '../../../lib/health/checkpoint.js';
import type { ReportDocument } from '../../../lib/report/document.js';
import { CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { ensureSubagentTable } from '../../../lib/store/schema.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { HOST_FIXTURES } from '../../../local/host-fixtures.js';
import { runCliJson } from '../../support/cli-run.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { seedMessage } from '../health/seed.js';

/*
 * Wherever a list is cut (`ORDER BY … LIMIT`), every database keeps the same items: code-point
 * order (Dialect.byteOrder: COLLATE "C" on PostgreSQL, BINARY on SQLite), whatever the database's
 * collation (docs/report.md#sorting). Claude tool ids are mixed-case; an ICU collation orders
 * `toolu_a` before `toolu_B`, byte order the other way round.
 */

/** 30 mixed-case missing keys (more than the 20 shown), and 4 sessions whose turns tie on time. */
const TOOL_IDS = Array.from({ length: 30 }, (_, i) => {
  const letters = ['a', 'B', 'c', 'D', '_', 'e', 'F', 'z', 'Z', '1'];
  return `toolu_${letters[i % 10]}${letters[(i * 7) % 10]}${i}`;
});
const SESSIONS = ['sa', 'SB', 'Sa', 'sB'];

/** The oracle: code-point order of the keys (all ASCII here, so JavaScript's < is it), first 20. */
const EXPECTED_MISSING = [...TOOL_IDS]
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  .slice(0, 20)
  .map((tool_call_id) => ({ task_session_id: 's1', tool_call_id }));
/** `--trees 2`: every turn starts at the same instant, so the session id breaks the tie, in code-point order. */
const EXPECTED_TREE_SESSIONS = ['SB', 'Sa'];

async function seedStore(db: Queryable): Promise<void> {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2), ($3, $2)', [
    CAPTURE_SINCE_KEY,
    '2026-08-12T12:00:00.000000000Z',
    CHECKPOINT_KEY,
  ]);
  for (const [i, toolCallId] of TOOL_IDS.entries()) {
    await seedMessage(db, { createdAt: parseRfc3339(`2026-08-12T13:00:${String(i).padStart(2, '0')}Z`)!, toolCallId });
  }
  await insertRows(
    db,
    SESSIONS.map((session) => ({
      task_session_id: session,
      turn_id: `${session}-u`,
      tool_call_id: 'row',
      observed_at: '2026-08-12T13:30:00.000001Z',
    })),
  );
}

async function reportOn(url: string, proxy: string | undefined): Promise<ReportDocument> {
  const run = await runCliJson(
    ['report', '--database-url', url, '--grace-seconds', '0', '--json', '--trees', '2'],
    proxy ? { DATABASE_WS_PROXY: proxy } : {},
  );
  expect(run.code, run.stderr).toBe(EXIT.ok);
  return run.json as ReportDocument;
}

function expectSameCut(doc: ReportDocument): void {
  expect(doc.completeness.shortfall).toEqual({ open: true, count: 30, checked: true });
  expect(doc.completeness.missing).toEqual(EXPECTED_MISSING);
  expect(doc.trees.map((tree) => tree.task_session_id)).toEqual(EXPECTED_TREE_SESSIONS);
}

describe.each(TARGETS)('collation-independent cuts on %s (its default collation)', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });

  it('issue 36, collation: completeness.missing and --trees keep the same items in code-point order', async () => {
    await seedStore(t.db);
    expectSameCut(await reportOn(t.url, t.proxy?.address));
  });
});

const adminUrl = process.env.TEST_DATABASE_URL;

describe.runIf(adminUrl !== undefined && TARGETS.includes('postgres'))(
  'collation-independent cuts on the PostgreSQL server with an explicit collation',
  () => {
    let proxy: WsProxy;
    let admin: Database;
    const created: string[] = [];
    beforeAll(async () => {
      proxy = await startWsProxy();
      admin = openDatabase(adminUrl!, { wsProxy: proxy.address, max: 1 });
    });
    afterAll(async () => {
      for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
      await proxy.close();
    });

    it.each([
      ['an ICU en-US', "LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"],
      ['the C', "LOCALE 'C'"],
    ])('issue 36, collation: on %s collation, missing keys and --trees are the same items', async (_name, locale) => {
      const name = `subagent_collation_${process.pid}_${created.length}_${Date.now().toString(36)}`;
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ${locale}`);
      created.push(name);
      const url = new URL(adminUrl!);
      url.pathname = `/${name}`;
      const db = openDatabase(url.toString(), { wsProxy: proxy.address });
      try {
        await HOST_FIXTURES.host.create(db);
        await ensureSubagentTable(db);
        await seedStore(db);
        // The database really orders the ids its own way (else the test proves nothing).
        const [own] = await db.query<{ before: boolean }>("SELECT 'toolu_a' < 'toolu_B' AS before");
        expect(own!.before).toBe(locale.includes('icu'));
      } finally {
        await db.close();
      }
      expectSameCut(await reportOn(url.toString(), proxy.address));
    });
  },
);
