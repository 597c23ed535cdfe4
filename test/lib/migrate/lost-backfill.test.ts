import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import { runHealthCheck } from '../../../lib/health/check.js';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY, readMetaKeys } from '../../../lib/store/meta.js';
import { readAll } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { write } from '../../support/frames.js';
import { TARGET_FIXTURES, type TestDatabase, useTestDatabase } from '../../support/targets.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

const fullAudit = (t: TestDatabase) => runHealthCheck(t.db, { kind: 'full', graceSeconds: 0, confirmDelayMs: 0 });

async function history(t: TestDatabase, ids: readonly string[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    await insertHostMessage(t.db, {
      id: `m-${id}`,
      metadata: subagentDoc({ top: { tool_call_id: id } }),
      createdAt: `2026-08-12T12:0${i}:00Z`,
    });
  }
}

describe.each(TARGET_FIXTURES)('R3-4: a lost backfill on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture, subagentTable: false });

  it('R3-4: after the table is dropped and re-created, migrate says the backfilled rows are gone and the full audit names them', async () => {
    await history(t, ['c1', 'c2']);
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'completed', inserted: 2, historyMissing: null });
    await t.db.query(`DROP TABLE ${TABLE}`);
    const again = await runMigration(t.db);
    expect(again).toMatchObject({ backfill: 'skipped', inserted: 0, historyMissing: 2 });
    const audit = await fullAudit(t);
    expect(audit).toMatchObject({
      status: 'shortfall',
      shortfall: 0,
      history: {
        shortfall: 2,
        missing: [
          { task_session_id: 's1', tool_call_id: 'c1' },
          { task_session_id: 's1', tool_call_id: 'c2' },
        ],
      },
    });
  });

  it('R3-4: deleted backfilled rows are found; a key with a live row instead is not missing', async () => {
    await history(t, ['c1', 'c2', 'c3']);
    await runMigration(t.db);
    await t.db.query(`DELETE FROM ${TABLE} WHERE tool_call_id IN ('c1', 'c2')`);
    // c2's invocation also reached us live: it has a row, of another execution.
    await writeBatch(t.db, [write({ tool_call_id: 'c2', observed_at: '2026-08-12T12:05:00Z' })]);
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'skipped', historyMissing: 1 });
    expect((await fullAudit(t)).history).toMatchObject({
      shortfall: 1,
      missing: [{ task_session_id: 's1', tool_call_id: 'c1' }],
    });
  });

  it('R3-4: rerunBackfill inserts the lost rows again (ON CONFLICT DO NOTHING), keys byte-identical, other rows kept', async () => {
    await history(t, ['c1', 'c2']);
    await runMigration(t.db);
    const keys = await readMetaKeys(t.db);
    await t.db.query(`DELETE FROM ${TABLE} WHERE tool_call_id = 'c1'`);
    const kept = (await readAll(t.db)).find((r) => r.tool_call_id === 'c2');
    const rerun = await runMigration(t.db, { rerunBackfill: true });
    expect(rerun).toMatchObject({ backfill: 'rerun', inserted: 1, historyMissing: 0 });
    expect(await readMetaKeys(t.db)).toEqual(keys);
    const rows = await readAll(t.db);
    expect(rows.map((r) => [r.tool_call_id, r.source])).toEqual([
      ['c1', 'backfill'],
      ['c2', 'backfill'],
    ]);
    expect(rows.find((r) => r.tool_call_id === 'c2')).toEqual(kept);
    expect(await runMigration(t.db, { rerunBackfill: true })).toMatchObject({ backfill: 'rerun', inserted: 0 });
    expect((await fullAudit(t)).history).toMatchObject({ shortfall: 0 });
  });

  it('R3-4: the rerun covers only the history: a message since capture_since stays the live path’s (a shortfall, not a backfilled row)', async () => {
    await t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2), ($3, $4)', [
      CAPTURE_SINCE_KEY,
      '2026-08-12T13:00:00.000000000Z',
      BACKFILL_THROUGH_KEY,
      '2026-08-12T12:00:00.000000000Z',
    ]);
    await insertHostMessage(t.db, {
      id: 'old',
      metadata: subagentDoc({ top: { tool_call_id: 'old' } }),
      createdAt: '2026-08-12T12:00:00Z',
    });
    await insertHostMessage(t.db, {
      id: 'new',
      metadata: subagentDoc({ top: { tool_call_id: 'new' } }),
      createdAt: '2026-08-12T13:00:00Z',
    });
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'skipped', historyMissing: 1 });
    expect(await runMigration(t.db, { rerunBackfill: true })).toMatchObject({ inserted: 1, historyMissing: 0 });
    expect((await readAll(t.db)).map((r) => r.tool_call_id)).toEqual(['old']);
    expect(await fullAudit(t)).toMatchObject({
      shortfall: 1,
      missing: [{ task_session_id: 's1', tool_call_id: 'new' }],
      history: { shortfall: 0 },
    });
  });

  it('R3-4: a store whose history is all there reports historyMissing 0 and the audit a history shortfall of 0', async () => {
    await history(t, ['c1']);
    await runMigration(t.db);
    expect(await runMigration(t.db)).toMatchObject({ backfill: 'skipped', historyMissing: 0 });
    expect(await fullAudit(t)).toMatchObject({ history: { shortfall: 0 } });
  });
});
