import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../lib/db/open.js';
import { runMigration } from '../../lib/migrate/run-migration.js';
import { createHostSchema } from '../../local/host-schema.js';
import { frame } from '../support/frames.js';

/*
 * Issue 51, item 2: Ctrl-C (a real SIGINT to the real CLI) finishes the batch in hand, says where
 * the command stands and what to run next, and exits 130; the rerun it names completes the work.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'subagent-context-interrupt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The CLI as a person runs it; `interruptWhen`: SIGINT once stderr matches it. */
function cli(args: string[], interruptWhen?: RegExp) {
  return run([join(ROOT, 'bin/subagent-context.mjs'), ...args], interruptWhen);
}

function run(args: string[], interruptWhen?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    let stdout = '';
    let stderr = '';
    let sent = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (interruptWhen && !sent && interruptWhen.test(stderr)) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('issue 51: Ctrl-C during ingest', () => {
  it('issue 51: SIGINT during ingest finishes the batch in hand, says how many frames were written and that a rerun is safe, exits 130', async () => {
    const path = join(dir, 'host.db');
    const db = openDatabase(`sqlite:${path}`, { create: true });
    await createHostSchema(db);
    await runMigration(db);
    await db.query("INSERT INTO task_sessions (id, task_id) VALUES ('s1', 't1')");
    const total = 500;
    const frames = join(dir, 'frames.jsonl');
    writeFileSync(
      frames,
      Array.from({ length: total }, (_, i) => `${JSON.stringify(frame({ tool_call_id: `c${i}` }))}\n`).join(''),
    );
    const url = `sqlite:${path}`;
    const stopped = await cli(['ingest', frames, '--database-url', url], /ingest \[#{3,}/);
    expect(stopped.code).toBe(130);
    const line = stopped.stderr.split('\n').find((l) => l.startsWith('subagent-context: interrupted:')) ?? '';
    const written = Number(/\((\d[\d,]*) rows written/.exec(line)?.[1]?.replace(/,/g, ''));
    expect(line).toMatch(
      /^subagent-context: interrupted: ingest stopped between batches: [\d,]+ of 500 frames were handled/,
    );
    expect(line).toMatch(/run the same command again to finish: a frame written twice is one row/);
    const [{ n }] = (await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM task_session_subagents')) as [
      { n: number },
    ];
    expect(Number(n)).toBe(written);
    expect(written).toBeLessThan(total);

    const rerun = await cli(['ingest', frames, '--database-url', url, '--quiet']);
    expect(rerun.code).toBe(0);
    const [{ n: after }] = (await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM task_session_subagents')) as [
      { n: number },
    ];
    expect(Number(after)).toBe(total);
    await db.close();
  }, 120_000);
});

describe('issue 51: Ctrl-C during npm start', () => {
  it('issue 51: SIGINT during `npm start -- --sqlite F` removes the partial store and its -wal/-shm, says so, exits 130; the rerun is not refused', async () => {
    const store = join(dir, 'demo.db');
    const stopped = await run(
      ['--import', 'tsx', 'bin/local-stack.ts', '--sqlite', store, '--messages', '20000', '--live', '2000'],
      /\S/,
    );
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(
      new RegExp(
        `interrupted: the demo stopped before its summary; its partial store ${store} was removed, so \`npm start -- --sqlite ${store}\` runs again as it was`,
      ),
    );
    expect(readdirSync(dir).filter((f) => f.startsWith('demo.db'))).toEqual([]);
  }, 60_000);
});
