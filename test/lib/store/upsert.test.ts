import { describe, expect, it } from 'vitest';
import type { SubagentWrite } from '../../../lib/row.js';
import { readSession } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { seedSession } from '../../support/frames.js';
import { MERGE_CASES } from '../../support/merge-cases.js';
import { viewOfRow } from '../../support/row-view.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

const inSession = (writes: readonly SubagentWrite[], session: string) =>
  writes.map((w) => ({ ...w, task_session_id: session }));

describe.each(TARGETS)('docs/merge.md#merging-onto-an-existing-row merge rules in the upsert on %s', (name) => {
  const t = useTestDatabase(name);

  // Each case lands twice: one upsert per write (session s1) and as one batch (session s2).
  it.each(MERGE_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await seedSession(t.db, 's1');
    await seedSession(t.db, 's2');
    for (const w of inSession(c.writes, 's1')) await writeBatch(t.db, [w]);
    await writeBatch(t.db, inSession(c.writes, 's2'));
    const one = await readSession(t.db, 's1');
    const batch = await readSession(t.db, 's2');
    expect(one).toHaveLength(1);
    expect(batch).toHaveLength(1);
    expect(viewOfRow(one[0]!)).toMatchObject({ ...c.expected, task_session_id: 's1' });
    expect(viewOfRow(batch[0]!)).toMatchObject({ ...c.expected, task_session_id: 's2' });
  });
});
