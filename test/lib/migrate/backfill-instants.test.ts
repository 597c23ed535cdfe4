import { describe, expect, it } from 'vitest';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import { readAll } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { write } from '../../support/frames.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

describe.each(TARGET_FIXTURES)('backfilled instants on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  const completed = subagentDoc({
    task: { status: 'completed', model: 'claude-x', total_tokens: 500, duration_ms: 4000 },
  });

  it("R3-1, R2-7: a backfilled row's last_observed_at is the message's updated_at, never its created_at", async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: completed,
      createdAt: '2026-08-12T10:00:00Z',
      updatedAt: '2026-08-12T10:05:00.000001Z',
    });
    await runMigration(t.db);
    expect(await readAll(t.db)).toMatchObject([
      { observed_at: '2026-08-12T10:00:00.000000Z', last_observed_at: '2026-08-12T10:05:00.000001Z' },
    ]);
  });

  it('R3-1, R2-7: a live frame observed between created_at and updated_at only fills NULLs of a backfilled row', async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: completed,
      createdAt: '2026-08-12T10:00:00Z',
      updatedAt: '2026-08-12T10:05:00Z',
    });
    await runMigration(t.db);
    await writeBatch(t.db, [
      write({
        execution_id: '',
        observed_at: '2026-08-12T10:03:00Z',
        subagent_task: { status: 'running', model: 'claude-old', total_tokens: 100, agent_id: 'a1' },
      }),
    ]);
    expect(await readAll(t.db)).toMatchObject([
      {
        source: 'backfill',
        agent_status: 'completed',
        model: 'claude-x',
        total_tokens: 500,
        duration_ms: 4000,
        agent_id: 'a1',
        last_observed_at: '2026-08-12T10:05:00.000000Z',
      },
    ]);
  });

  it('R3-1: a host message whose updated_at precedes its created_at gives last_observed_at = observed_at', async () => {
    await insertHostMessage(t.db, {
      id: 'm1',
      metadata: completed,
      createdAt: '2026-08-12T10:00:00Z',
      updatedAt: '2026-08-12T09:59:59Z',
    });
    await runMigration(t.db);
    expect(await readAll(t.db)).toMatchObject([
      { observed_at: '2026-08-12T10:00:00.000000Z', last_observed_at: '2026-08-12T10:00:00.000000Z' },
    ]);
  });
});
