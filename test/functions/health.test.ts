import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../functions/health.js';
import { closeDatabaseFromEnv } from '../../lib/db/from-env.js';
import { formatKey, nowMicros } from '../../lib/time.js';
import { MINUTE, seedMessage, seedRow, setCaptureSince } from '../lib/health/seed.js';
import { TARGET_FIXTURES, useTestDatabase } from '../support/targets.js';

const ENV = ['DATABASE_URL', 'DATABASE_WS_PROXY', 'HEALTH_GRACE_SECONDS', 'HEALTH_CONFIRM_DELAY_SECONDS'] as const;

/** Everything the function printed: EMF documents and log lines (ERROR goes to stderr), one JSON object a line. */
function capturePrinted(): () => Record<string, unknown>[] {
  const chunks: string[] = [];
  const record = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(record),
    vi.spyOn(process.stderr, 'write').mockImplementation(record),
  ];
  return () => {
    for (const spy of spies) spy.mockRestore();
    return chunks
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };
}

const emf = (lines: Record<string, unknown>[]) => lines.find((line) => '_aws' in line);
const errors = (lines: Record<string, unknown>[]) => lines.filter((line) => line.level === 'ERROR');

describe.each(TARGET_FIXTURES)('health function on %s, %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });
  const saved = Object.fromEntries(ENV.map((key) => [key, process.env[key]]));

  beforeEach(() => {
    process.env.DATABASE_URL = t.url;
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    process.env.HEALTH_CONFIRM_DELAY_SECONDS = '0';
    delete process.env.HEALTH_GRACE_SECONDS;
  });
  afterEach(async () => {
    await closeDatabaseFromEnv();
    for (const key of ENV) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  it('AC-28: reports healthy with its metrics when every recent subagent has a row', async () => {
    const now = nowMicros();
    await setCaptureSince(t.db, formatKey(now - 120n * MINUTE));
    await seedMessage(t.db, { toolCallId: 'c1', createdAt: now - 60n * MINUTE });
    await seedRow(t.db, { toolCallId: 'c1', observedAt: now - 60n * MINUTE });
    const printed = capturePrinted();
    const report = await handler();
    const lines = printed();
    // The minimal host schema has no idx_messages_metadata_tool_call_id: excess is left to the audit (issue 26).
    const excess = fixture === 'host' ? 0 : null;
    expect(report).toMatchObject({ status: 'healthy', shortfall: 0, excess, collisions: 0 });
    expect(emf(lines)).toMatchObject({ health_check_ok: 1, not_activated: 0, shortfall: 0, collisions: 0 });
    expect(emf(lines)!.excess).toBe(excess ?? undefined);
    expect(emf(lines)!.seconds_since_last_observed).toBeGreaterThanOrEqual(3600);
    expect(errors(lines)).toEqual([]);
  });

  it('AC-28a: reports not_activated with an ERROR line and the not_activated metric', async () => {
    const printed = capturePrinted();
    const report = await handler();
    const lines = printed();
    expect(report).toMatchObject({ status: 'not_activated', shortfall: null });
    expect(emf(lines)).toMatchObject({ health_check_ok: 1, not_activated: 1 });
    expect(emf(lines)).not.toHaveProperty('shortfall');
    expect(errors(lines)).toHaveLength(1);
  });

  it('HEALTH_GRACE_SECONDS decides which messages are expected, and a shortfall logs ERROR', async () => {
    const now = nowMicros();
    await setCaptureSince(t.db, formatKey(now - 120n * MINUTE));
    await seedRow(t.db, { toolCallId: 'other', observedAt: now - 60n * MINUTE });
    await seedMessage(t.db, { toolCallId: 'c1', createdAt: now - 10n * MINUTE });
    expect(await handler()).toMatchObject({ status: 'healthy', shortfall: 0 });

    process.env.HEALTH_GRACE_SECONDS = '60';
    const printed = capturePrinted();
    const report = await handler();
    const lines = printed();
    expect(report).toMatchObject({
      status: 'shortfall',
      shortfall: 1,
      missing: [{ task_session_id: 's1', tool_call_id: 'c1' }],
    });
    expect(emf(lines)).toMatchObject({ health_check_ok: 1, shortfall: 1 });
    expect(errors(lines)).toEqual([expect.objectContaining({ status: 'shortfall', missing: report.missing })]);
  });

  it('the audit schedule\'s { kind: "full" } runs the full audit and publishes audit_ metrics; the plain scheduled event runs the window', async () => {
    const now = nowMicros();
    await setCaptureSince(t.db, formatKey(now - 120n * MINUTE));
    await seedRow(t.db, { toolCallId: 'c1', observedAt: now - 60n * MINUTE });
    await seedMessage(t.db, { toolCallId: 'c1', createdAt: now - 60n * MINUTE });
    let printed = capturePrinted();
    expect(await handler({ kind: 'full' })).toMatchObject({ status: 'healthy', kind: 'full', checkpoint: null });
    expect(emf(printed())).toMatchObject({ audit_health_check_ok: 1, audit_shortfall: 0 });
    printed = capturePrinted();
    expect(await handler({ 'detail-type': 'Scheduled Event' } as never)).toMatchObject({
      kind: 'scheduled',
      checkpoint: { moved: true },
    });
    expect(emf(printed())).toMatchObject({ health_check_ok: 1, shortfall: 0 });
  });

  it('a check that cannot run rejects and emits health_check_ok 0', async () => {
    process.env.HEALTH_GRACE_SECONDS = 'soon';
    const printed = capturePrinted();
    await expect(handler()).rejects.toThrow(/HEALTH_GRACE_SECONDS/);
    const lines = printed();
    expect(emf(lines)).toMatchObject({ health_check_ok: 0 });
    expect(errors(lines)).toHaveLength(1);
  });
});
