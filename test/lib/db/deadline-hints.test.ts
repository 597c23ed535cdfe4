import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { describeFailure } from '../../../lib/cli/failure.js';
import type { Database } from '../../../lib/db/database.js';
import { DatabaseError } from '../../../lib/db/errors.js';
import { openDatabase } from '../../../lib/db/open.js';
import type { Caller, Work } from '../../../lib/hints.js';

// R2-5 and issue 25: a deadline that comes is worded for whoever set it. Only ingest has frames
// that "stay on the queue"; migrate, health and export run again from their last commit; a person
// at the CLI runs a command, a function's operator invokes it. Both drivers, a real deadline each.

const dir = mkdtempSync(join(tmpdir(), 'deadline-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** A WebSocket peer that accepts and never answers: the Neon driver's connect waits on it. */
async function silentPostgres(): Promise<Database> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  const db = openDatabase('postgres://app@127.0.0.1:5432/app', { wsProxy: `127.0.0.1:${port}` });
  cleanups.push(async () => {
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return db;
}

let files = 0;
const DIALECTS: Record<string, { open(): Promise<Database>; deadline: () => number; detail: RegExp }> = {
  sqlite: {
    open: async () => openDatabase(`sqlite:${join(dir, `d${++files}.db`)}`, { create: true }),
    deadline: () => Date.now() - 1,
    detail: /^no time left before the deadline for this statement$/,
  },
  'postgres (Neon driver)': {
    open: silentPostgres,
    deadline: () => Date.now() + 150,
    detail:
      /^connecting did not finish within \d+ ms, the time left before the deadline: the database accepts connections but does not answer$/,
  },
};

const WORDS: [Work, Caller, string][] = [
  ['ingest', 'function', 'the frames stay on the queue and are delivered again'],
  ['ingest', 'cli', 'the frames not written stay on the local queue and are delivered again'],
  [
    'other',
    'function',
    'what was not committed is rolled back; invoke the function again, and raise its timeout if this repeats',
  ],
  ['other', 'cli', 'what was not committed is rolled back; run the command again'],
];

async function outOfTime(dialect: string, work: Work, caller: Caller): Promise<DatabaseError> {
  const { open, deadline } = DIALECTS[dialect]!;
  const db = await open();
  cleanups.push(async () => void db.close().catch(() => undefined));
  db.setDeadline(deadline(), { caller, work });
  const error = await db.query('SELECT 1').catch((err: unknown) => err);
  expect(error).toBeInstanceOf(DatabaseError);
  return error as DatabaseError;
}

describe.each(Object.keys(DIALECTS))('R2-5, issue 25: a deadline on %s is worded for its owner', (dialect) => {
  it.each(WORDS)('%s work, %s caller: "…: %s"', async (work, caller, words) => {
    const error = await outOfTime(dialect, work, caller);
    expect(error).toMatchObject({ kind: 'system', sqlstate: undefined, driverCode: 'ETIMEDOUT' });
    expect(error.detail).toMatch(DIALECTS[dialect]!.detail);
    expect(error.message).toBe(`${error.detail}: ${words}`);
    if (work === 'other') expect(error.message).not.toMatch(/queue/);
  });

  it.each(WORDS.filter(([, caller]) => caller === 'cli'))(
    "%s work set by a function, printed by the CLI: the CLI's words (%s), not the function's nor an unreachable server's",
    async (work, _caller, words) => {
      const error = await outOfTime(dialect, work, 'function');
      expect((await describeFailure(error)).message).toBe(`${error.detail}: ${words}`);
    },
  );
});
