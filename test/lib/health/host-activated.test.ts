import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import type { Queryable } from '../../../lib/db/database.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { forReading } from '../../../lib/store/reading.js';
import type { Micros } from '../../../lib/time.js';
import { seedSession } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, seedMessage } from './seed.js';

const NOW = at('2026-08-12T14:00:00Z');

/** The host's own activation: RFC3339Nano keys (subagent_context_backfill.go), trailing zeros trimmed. */
async function hostKeys(db: Queryable): Promise<void> {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2), ($3, $4)', [
    CAPTURE_SINCE_KEY,
    '2026-08-12T12:00:00.3388988Z',
    BACKFILL_THROUGH_KEY,
    '2026-08-12T11:59:00Z',
  ]);
}

/** A row as the host's writer makes it: its own column list, no last_observed_at (there is no such column here). */
async function hostRow(db: Queryable, toolCallId: string, observedAt: Micros): Promise<void> {
  await seedSession(db);
  const stamp = db.dialect.encodeTimestamp(observedAt);
  await db.query(
    `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, source, observed_at, updated_at)
     VALUES ($1, 's1', 't1', $2, 'e1', 'live', ${db.dialect.timestampParam(3)}, ${db.dialect.timestampParam(3)})`,
    [`r-${toolCallId}`, toolCallId, stamp],
  );
}

describe.each(TARGETS)('R3-3: health on a store the host activated itself, on %s', (name) => {
  // The host's real DDL, its own task_session_subagents, and nothing of this project's.
  const t = useTestDatabase(name, { fixture: 'host', subagentTable: false });

  async function hostActivatedStore(): Promise<void> {
    await hostKeys(t.db);
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:30:00Z'), toolCallId: 'seen' });
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:31:00Z'), toolCallId: 'lost' });
    await hostRow(t.db, 'seen', at('2026-08-12T12:30:00.5Z'));
  }

  it('R3-3: nothing of ours is there (no guard function, no last_observed_at)', async () => {
    const columns = await t.db.query(
      name === 'sqlite'
        ? `SELECT name FROM pragma_table_info('${TABLE}') WHERE name = 'last_observed_at'`
        : `SELECT column_name FROM information_schema.columns WHERE table_name = '${TABLE}' AND column_name = 'last_observed_at'`,
    );
    expect(columns).toEqual([]);
    if (name !== 'sqlite') {
      const [fn] = await t.db.query<{ present: boolean }>(
        `SELECT to_regprocedure('subagent_context_json(text)') IS NOT NULL AS present`,
      );
      expect(fn?.present).toBe(false);
    }
  });

  it('R3-3: the scheduled check compares and names the missing key', async () => {
    await hostActivatedStore();
    const report = await check(t.db, NOW);
    expect(report).toMatchObject({
      status: 'shortfall',
      shortfall: 1,
      excess: 0,
      collisions: 0,
      missing: [{ task_session_id: 's1', tool_call_id: 'lost' }],
      captureSince: '2026-08-12T12:00:00.338899Z',
    });
  });

  it('R3-3: the full audit gives the same figures', async () => {
    await hostActivatedStore();
    const report = await check(t.db, NOW, { kind: 'full' });
    expect(report).toMatchObject({ status: 'shortfall', shortfall: 1, excess: 0, collisions: 0 });
    expect(report.lastObservedAt).toBe('2026-08-12T12:30:00.500000Z');
  });

  it('R3-3: reading leaves the store without any object of ours', async () => {
    await hostActivatedStore();
    await check(t.db, NOW, { kind: 'full' });
    const reader = await forReading(t.db);
    expect(reader.facts).toMatchObject({ table: true, hostToolCallIndex: true });
    if (name !== 'sqlite') expect(reader.facts.jsonGuard).not.toBe('function');
    const [observedIndex] = await t.db.query<{ n: number }>(
      name === 'sqlite'
        ? `SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'idx_subagents_observed_at'`
        : `SELECT COUNT(*) AS n FROM pg_class WHERE relname = 'idx_subagents_observed_at'`,
    );
    expect(Number(observedIndex!.n)).toBe(0);
  });

  it('R3-3: a message the host refused to parse cannot exist, and one that is not an object reads as no subagent', async () => {
    await hostActivatedStore();
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:32:00Z'), metadata: '"just a string"' });
    await seedMessage(t.db, { createdAt: at('2026-08-12T12:33:00Z'), metadata: null });
    expect(await check(t.db, NOW, { kind: 'full' })).toMatchObject({ shortfall: 1 });
  });
});

describe.each(TARGETS)('R3-3: where something of ours is required and missing, on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  it('R3-3: keys without any task_session_subagents: the error names migrate', async () => {
    await hostKeys(t.db);
    await seedMessage(t.db, { createdAt: NOW - 60n * MINUTE, toolCallId: 'c1' });
    await expect(check(t.db, NOW)).rejects.toThrow(/task_session_subagents does not exist.*subagent-context migrate/);
  });

  it('R3-3: not activated is still not_activated, whatever is missing', async () => {
    expect((await check(t.db, NOW)).status).toBe('not_activated');
  });

  it.skipIf(name === 'sqlite')(
    'R3-3: PostgreSQL without our guard, before 16 and without the host index, names migrate; from 16 on it reads',
    async () => {
      await t.db.query(
        `CREATE TABLE ${TABLE} (id TEXT PRIMARY KEY, task_session_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, observed_at TIMESTAMP NOT NULL)`,
      );
      await hostKeys(t.db);
      const [version] = await t.db.query<{ v: number }>(`SELECT current_setting('server_version_num')::int AS v`);
      if (Number(version!.v) >= 160000) {
        expect((await check(t.db, NOW)).status).toBe('silent');
      } else {
        await expect(check(t.db, NOW)).rejects.toThrow(/subagent_context_json\(text\).*subagent-context migrate/);
      }
    },
  );
});
