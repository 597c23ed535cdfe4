import { describe, expect, it } from 'vitest';
import { readSession } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { seedSession, write } from '../../support/frames.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

describe.each(TARGETS)('batch write on %s', (name) => {
  const t = useTestDatabase(name);

  it('writes a whole batch in one round trip', async () => {
    await seedSession(t.db);
    const writes = Array.from({ length: 50 }, (_, i) => write({ tool_call_id: `c${i % 20}`, subagent_task: { total_tokens: i + 1 } }));
    const before = t.db.stats.roundTrips;
    await writeBatch(t.db, writes);
    expect(t.db.stats.roundTrips - before).toBe(1);
    expect(await readSession(t.db, 's1')).toHaveLength(20);
  });

  it('AC-7: stores an async_launched frame with NULL, never 0, in all three metrics', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [write({ subagent_task: { status: 'async_launched', is_async: true, total_tokens: 0, duration_ms: 0 } })]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toMatchObject({ total_tokens: null, duration_ms: null, tool_use_count: null, is_async: 1, settled_at: null });
  });
});
