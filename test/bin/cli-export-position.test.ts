import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../local/otlp-receiver.js';
import { runCliJson, testProxyEnv } from '../support/cli-run.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * `export`'s position flags through the real CLI (issue 30 item 20, docs/otlp.md#incremental-export):
 * `--task`, `--session` and `--until` make a one-off export that neither reads nor moves the
 * position unless `--position-key` is given; `--restart` exports from the first turn and then
 * moves it; `--no-position` reads and writes none.
 */

const cli = (...argv: string[]) => runCliJson(argv, testProxyEnv());
const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;
const KEY = 'subagent_context_otlp_position';
/** A stored position past every row here: a run that resumes from it sends nothing. */
const AHEAD = JSON.stringify({ changed: '2030-01-01T00:00:00.000000000Z', task_session_id: 's9', turn_key: 'u9' });

describe.each(TARGETS)('subagent-context export position flags on %s', (name) => {
  const t = useTestDatabase(name);
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(async () => {
    receiver.requests.length = 0;
    receiver.spans.length = 0;
    if (t.proxy) process.env.DATABASE_WS_PROXY = t.proxy.address;
    else delete process.env.DATABASE_WS_PROXY;
    await insertRows(t.db, [
      { task_session_id: 's1', task_id: 't1', tool_call_id: 'a', observed_at: T(1), settled_at: T(2) },
      { task_session_id: 's2', task_id: 't2', tool_call_id: 'b', observed_at: T(3), settled_at: T(4) },
    ]);
  });

  const exportRun = (...flags: string[]) =>
    cli('export', '--otlp', receiver.origin, '--database-url', t.url, '--json', ...flags);
  const stored = async (key = KEY) =>
    (await t.db.query<{ value: string }>('SELECT value FROM kandev_meta WHERE key = $1', [key]))[0]?.value;
  /** The stored position's point (R4-8: beside it the position records the turns it sent). */
  const storedPoint = async (key = KEY) => {
    const value = await stored(key);
    if (value === undefined) return undefined;
    // --json gives the point as JSON, in camelCase (issue 51)
    const { changed, task_session_id, turn_key } = JSON.parse(value);
    return { changed, taskSessionId: task_session_id, turnKey: turn_key };
  };
  const setStored = (value: string) => t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [KEY, value]);
  const sentCalls = () => receiver.spans.map((s) => s.attributes['subagent_context.tool_call_id']).filter(Boolean);

  it('R3-10: a stored position ahead of every row makes a resumed run send nothing (the contrast for the one-offs below)', async () => {
    await setStored(AHEAD);
    const run = await exportRun();
    expect(run.code).toBe(EXIT.ok);
    expect(run.json).toMatchObject({
      spans: 0,
      position: { key: KEY, before: { changed: '2030-01-01T00:00:00.000000000Z', taskSessionId: 's9', turnKey: 'u9' } },
    });
    expect(await stored()).toBe(AHEAD);
  });

  it.each([
    [
      ['--until', '2027-01-01T00:00:00Z'],
      ['a', 'b'],
    ],
    [['--task', 't1'], ['a']],
    [['--session', 's2'], ['b']],
  ])(
    'R3-10: export %j is a one-off: it neither reads the position (ahead of every row) nor moves it',
    async (flags, calls) => {
      await setStored(AHEAD);
      const run = await exportRun(...flags);
      expect(run.code).toBe(EXIT.ok);
      expect(run.json.position).toEqual({ key: null, before: null, after: null });
      expect(sentCalls().sort()).toEqual(calls);
      expect(await stored()).toBe(AHEAD);
    },
  );

  it.each([[['--until', '2027-01-01T00:00:00Z']], [['--task', 't1']], [['--session', 's1']]])(
    'R3-10: export %j with no position stored writes none',
    async (flags) => {
      const run = await exportRun(...flags);
      expect(run.code).toBe(EXIT.ok);
      expect(await stored()).toBeUndefined();
    },
  );

  it('R3-10: --task with --position-key reads and moves that key (and leaves the default one alone)', async () => {
    const key = `${KEY}_t1`;
    const first = await exportRun('--task', 't1', '--position-key', key);
    expect(first.code).toBe(EXIT.ok);
    expect(sentCalls()).toEqual(['a']);
    expect(first.json.position).toMatchObject({ key, before: null });
    expect(await storedPoint(key)).toEqual(first.json.position.after);
    expect(JSON.parse((await stored(key))!)).toMatchObject({ task_session_id: 's1' });
    expect(await stored()).toBeUndefined();
    receiver.spans.length = 0;
    const again = await exportRun('--task', 't1', '--position-key', key, '--lookback-seconds', '0');
    expect(again.json).toMatchObject({ spans: 0, position: { before: first.json.position.after } });
  });

  it('issue 51: export --restart with nothing changed says the turns were sent again because of --restart, and names the position it started from', async () => {
    const first = await exportRun();
    expect(first.code).toBe(EXIT.ok);
    const text = await cli('export', '--otlp', receiver.origin, '--database-url', t.url, '--restart');
    expect(text.stdout).toMatch(/^re-sent\s+2 turns \(sent again from the first turn: --restart\)$/m);
    expect(text.stdout).not.toMatch(/changed since last sent/);
    expect(text.stdout).toMatch(/^position before\s+\{"changed":/m);
  });

  it('R3-10: --restart exports from the first turn whatever the position holds, then moves it', async () => {
    await setStored(AHEAD);
    const run = await exportRun('--restart');
    expect(run.code).toBe(EXIT.ok);
    expect(sentCalls().sort()).toEqual(['a', 'b']);
    // issue 51: the point the key held before the restart, not "-"
    expect(run.json.position).toMatchObject({
      key: KEY,
      before: { changed: '2030-01-01T00:00:00.000000000Z', taskSessionId: 's9', turnKey: 'u9' },
    });
    expect(run.json.restart).toBe(true);
    const after = await storedPoint();
    expect(after).toEqual(run.json.position.after);
    expect(JSON.stringify(after)).not.toBe(AHEAD);
    expect(after).toMatchObject({ taskSessionId: 's2' });
  });

  it('R3-10: --no-position reads none (a stored one is ignored and kept) and writes none', async () => {
    const fresh = await exportRun('--no-position');
    expect(fresh.code).toBe(EXIT.ok);
    expect(sentCalls().sort()).toEqual(['a', 'b']);
    expect(fresh.json.position).toEqual({ key: null, before: null, after: null });
    expect(await stored()).toBeUndefined();
    await setStored(AHEAD);
    receiver.spans.length = 0;
    const again = await exportRun('--no-position');
    expect(sentCalls().sort()).toEqual(['a', 'b']);
    expect(again.json.position).toEqual({ key: null, before: null, after: null });
    expect(await stored()).toBe(AHEAD);
  });

  it('R3-10: --restart with --no-position is a usage error (exit 2)', async () => {
    const run = await exportRun('--restart', '--no-position');
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/--restart and --no-position exclude each other/);
    expect(receiver.requests).toEqual([]);
  });
});
