import { describe, expect, it } from 'vitest';
import { seedMessage, seedRow } from '../lib/health/seed.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * Issue 51, item 7: a scheduled health run counts the collisions of its own window, so the next run
 * reads 0 with no new data; the text says so, and the full audit says it counts since capture_since.
 */

describe.each(TARGETS)('issue 51: health collisions on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  const cli = (...argv: string[]) =>
    runCliCaptured([...argv, '--database-url', t.url], {
      HEALTH_CONFIRM_DELAY_SECONDS: '0',
      HEALTH_OVERLAP_SECONDS: '0', // so the second window holds nothing of the first
      ...testProxyEnv(),
    });
  const lineOf = (text: string, label: string) => text.split('\n').find((l) => l.startsWith(`${label} `)) ?? '';

  it('issue 51: two scheduled runs in a row read 1 then 0 collisions, each saying it counts its window; --full says since capture_since', async () => {
    await cli('migrate');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const now = BigInt(Date.now()) * 1000n;
    // one key, two agent executions: a row of its own each (AC-32)
    await seedRow(t.db, { observedAt: now, toolCallId: 'c1', execution: 'e1' });
    await seedRow(t.db, { observedAt: now + 1n, toolCallId: 'c1', execution: 'e2' });
    await seedMessage(t.db, { createdAt: now, toolCallId: 'c1' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const first = await cli('health', '--grace-seconds', '0');
    expect(lineOf(first.stdout, 'collisions')).toMatch(
      /^collisions\s+1 \(rows beyond the first for one \(task_session_id, tool_call_id\) key, observed in this window only, which reaches back HEALTH_OVERLAP_SECONDS before the checkpoint; a later window may no longer hold them; --full counts every one since capture_since\)$/,
    );
    const second = await cli('health', '--grace-seconds', '0');
    expect(lineOf(second.stdout, 'collisions')).toMatch(
      /^collisions\s+0 \(observed in this window only, which reaches back HEALTH_OVERLAP_SECONDS before the checkpoint; a later window may no longer hold them; --full counts every one since capture_since\)$/,
    );
    const full = await cli('health', '--full', '--grace-seconds', '0');
    expect(lineOf(full.stdout, 'collisions')).toMatch(/^collisions\s+1 \(.*, since capture_since\)$/);
  }, 60_000);
});
