import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../functions/migrate.js';
import { closeDatabaseFromEnv } from '../../lib/db/from-env.js';
import { BACKFILL_THROUGH_KEY, readMetaKeys } from '../../lib/store/meta.js';
import { readAll } from '../../lib/store/read.js';
import { insertHostMessage, subagentDoc } from '../lib/migrate/host-messages.js';
import { TARGET_FIXTURES, useTestDatabase } from '../support/targets.js';

describe.each(TARGET_FIXTURES)('migrate function on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture, subagentTable: false });
  const saved = { url: process.env.DATABASE_URL, proxy: process.env.DATABASE_WS_PROXY };

  beforeEach(() => {
    process.env.DATABASE_URL = t.url;
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
  });
  afterEach(async () => {
    await closeDatabaseFromEnv();
    for (const [key, value] of [
      ['DATABASE_URL', saved.url],
      ['DATABASE_WS_PROXY', saved.proxy],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('docs/migrate.md#7-the-report, AC-17: runs on DATABASE_URL and resolves to the report, then skips on the next invocation', async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc(), createdAt: '2026-08-12T13:24:58.123456Z' });
    const first = await handler({});
    expect(first).toMatchObject({
      backfill: 'completed',
      inserted: 1,
      matched: 1,
      backfillThrough: '2026-08-12T13:24:58.123456000Z',
    });
    expect(first.captureSince).toEqual((await readMetaKeys(t.db)).captureSince);
    expect(typeof first.durationMs).toBe('number');
    const second = await handler({});
    expect(second).toMatchObject({
      backfill: 'skipped',
      inserted: 0,
      captureSince: first.captureSince,
      backfillThrough: first.backfillThrough,
    });
    expect(await readAll(t.db)).toHaveLength(1);
  });

  it('R3-4: the input {"rerunBackfill": true} inserts lost backfilled rows again; any other input only reports them', async () => {
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc(), createdAt: '2026-08-12T13:24:58.123456Z' });
    await handler({});
    await t.db.query('DELETE FROM task_session_subagents');
    expect(await handler({ rerunBackfill: 'yes' })).toMatchObject({ backfill: 'skipped', historyMissing: 1 });
    expect(await handler({ rerunBackfill: true })).toMatchObject({ backfill: 'rerun', inserted: 1, historyMissing: 0 });
    expect(await readAll(t.db)).toHaveLength(1);
  });

  it('AC-20: rejects with a message naming the migration and the failed step, and writes no key', async () => {
    await t.db.query('DROP TABLE kandev_meta');
    await t.db.query(
      `CREATE TABLE kandev_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL DEFAULT '' CHECK (key <> '${BACKFILL_THROUGH_KEY}'))`,
    );
    await insertHostMessage(t.db, { id: 'm1', metadata: subagentDoc() });
    await expect(handler({})).rejects.toThrow(/task_session_subagents\.backfill failed at step "backfill_through_key"/);
    expect(await readMetaKeys(t.db)).toEqual({ captureSince: undefined, backfillThrough: undefined });
  });
});
