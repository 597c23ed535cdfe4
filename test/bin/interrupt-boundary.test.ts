import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startWsProxy, type WsProxy } from '../../lib/db/ws-proxy.js';
import { CHECKPOINT_KEY } from '../../lib/health/checkpoint.js';
import { CREATE_META_TABLE } from '../../lib/migrate/keys.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../lib/store/meta.js';
import { generateHostStore } from '../../local/generate-host-store.js';
import { TARGETS, type TestDatabase, useTestDatabase } from '../support/targets.js';

/*
 * Issue 58 #11: Ctrl-C (a real SIGINT to the CLI as a child process) during migrate's backfill and
 * the scheduled health check stops at the next boundary: the backfill's one transaction rolls back
 * (nothing of it committed), the health check writes no checkpoint; exit 130 with a line saying so.
 * On PostgreSQL the SIGINT is sent while a chosen statement is on its way to the server (held at
 * the WebSocket proxy until the CLI has seen the signal); on SQLite, whose statements are
 * synchronous, once the CLI has the store open.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const children = new Set<ChildProcess>();
const proxies: WsProxy[] = [];
afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/** Polls `check` every 10 ms until it holds, at most `boundMs`. */
async function until(check: () => boolean, boundMs: number, what: string): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Whether process `pid` has the file `path` open (Linux: /proc/<pid>/fd). */
function hasOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * The CLI with `args` against `t`'s store, sent one SIGINT: on PostgreSQL while the first statement
 * whose text contains `statement` is held at the proxy (released once the CLI said it was
 * interrupted), on SQLite once the CLI has the store open.
 */
async function interrupted(t: TestDatabase, args: string[], statement: string, env: NodeJS.ProcessEnv = {}) {
  let child: ChildProcess | undefined;
  let stderr = '';
  let sent = false;
  const acknowledged = () => until(() => stderr.includes('interrupted: finishing'), 30_000, 'the interrupt line');
  const sigint = () => {
    sent = true;
    child!.kill('SIGINT');
  };
  let proxyEnv: NodeJS.ProcessEnv = {};
  if (t.name !== 'sqlite') {
    const proxy = await startWsProxy({
      hold: (message) => {
        if (sent || !message.toString('utf8').includes(statement)) return undefined;
        sigint();
        return acknowledged();
      },
    });
    proxies.push(proxy);
    proxyEnv = { DATABASE_WS_PROXY: proxy.address };
  }
  const started = Date.now();
  child = spawn(
    process.execPath,
    [join(ROOT, 'bin/subagent-context.mjs'), ...args, '--database-url', t.url, '--json'],
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...proxyEnv, ...env } },
  );
  children.add(child);
  let stdout = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const ended = new Promise<Ended>((resolve) =>
    child!.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })),
  );
  if (t.name === 'sqlite') {
    const path = t.url.slice('sqlite:'.length);
    await until(() => hasOpen(child!.pid!, path) || child!.exitCode !== null, 60_000, 'the store opened');
    expect(child.exitCode, stderr).toBeNull();
    sigint();
  }
  return ended;
}

const count = async (t: TestDatabase, sql: string, params: unknown[] = []) =>
  Number((await t.db.query<{ n: number | string }>(sql, params))[0]!.n);

describe.each(TARGETS)('issue 58 #11: Ctrl-C during migrate and health on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  it("issue 58 #11: SIGINT during migrate's backfill rolls its transaction back: no row, no kandev_meta key; exit 130 saying nothing of it was committed; the rerun backfills", async () => {
    await generateHostStore(t.db, { messages: name === 'sqlite' ? 60_000 : 2_000, subagentShare: 0.5 });
    const ended = await interrupted(t, ['migrate'], 'INSERT INTO task_session_subagents');
    expect(ended.code, ended.stderr).toBe(130);
    const line = ended.stderr.split('\n').find((l) => l.startsWith('subagent-context: interrupted:')) ?? '';
    // PostgreSQL: the insert was in flight, so the next boundary is the key's; SQLite: wherever the
    // signal was seen (the schema's own transaction may have been running)
    expect(line).toMatch(
      name === 'sqlite'
        ? /^subagent-context: interrupted: migrate stopped (?:before|during) its backfill\b.*nothing of the backfill was committed/
        : /^subagent-context: interrupted: migrate stopped during its backfill \(before step "capture_since_key"\): its transaction was rolled back, so nothing of the backfill was committed \(no row, no kandev_meta key\)/,
    );
    expect(line).toMatch(/; run the same command again: the backfill runs whole$/);
    // the store: no row of the backfill, no key
    expect(await count(t, 'SELECT COUNT(*) AS n FROM task_session_subagents')).toBe(0);
    expect(
      await count(t, 'SELECT COUNT(*) AS n FROM kandev_meta WHERE key IN ($1, $2)', [
        CAPTURE_SINCE_KEY,
        BACKFILL_THROUGH_KEY,
      ]),
    ).toBe(0);
    // the command it names completes the work
    const rerun = await runMigration(t.db);
    expect(rerun.backfill).toBe('completed');
    expect(rerun.inserted).toBeGreaterThan(0);
  }, 180_000);

  it.each(['scheduled', 'full'] as const)(
    'issue 58 #11: SIGINT during the %s health check stops it at once (the confirmation pause cut short): exit 130, no checkpoint written',
    async (kind) => {
      await generateHostStore(t.db, { messages: 500, subagentShare: 1 });
      await t.db.query(CREATE_META_TABLE);
      // activated before every generated message, none of which has a row: a shortfall, so the check
      // pauses before confirming it (HEALTH_CONFIRM_DELAY_SECONDS, here two minutes)
      await t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2), ($3, $4)', [
        CAPTURE_SINCE_KEY,
        '2026-06-01T00:00:00.000000000Z',
        BACKFILL_THROUGH_KEY,
        '',
      ]);
      await runMigration(t.db); // the table; the keys stand, so no backfill
      const ended = await interrupted(
        t,
        ['health', '--grace-seconds', '0', ...(kind === 'full' ? ['--full'] : [])],
        'task_session_messages',
        { HEALTH_CONFIRM_DELAY_SECONDS: '120', HEALTH_MAX_WINDOW_SECONDS: '1000000000' },
      );
      expect(ended.code, ended.stderr).toBe(130);
      expect(ended.ms).toBeLessThan(100_000);
      const line = ended.stderr.split('\n').find((l) => l.startsWith('subagent-context: interrupted:')) ?? '';
      expect(line).toBe(
        kind === 'full'
          ? 'subagent-context: interrupted: health --full stopped before its result; it wrote nothing; run the same command again'
          : 'subagent-context: interrupted: health stopped before writing its checkpoint: no checkpoint was written (there is none yet); run the same command again',
      );
      expect(await count(t, 'SELECT COUNT(*) AS n FROM kandev_meta WHERE key = $1', [CHECKPOINT_KEY])).toBe(0);
    },
    180_000,
  );
});
