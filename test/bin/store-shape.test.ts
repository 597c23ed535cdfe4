import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { EXIT } from '../../lib/cli/exit-codes.js';
import { missingTables } from '../../lib/store/probe.js';
import { runCliCaptured, testProxyEnv } from '../support/cli-run.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * Issue 51, item 1: a store whose host tables lack a column every command reads is named as such
 * (the table and column), before anything is written, with no advice about the disk.
 */

const dir = mkdtempSync(join(tmpdir(), 'subagent-context-shape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const frames = join(dir, 'frames.jsonl');
writeFileSync(frames, '{}\n');

describe.each(TARGETS)('issue 51: a store of another shape on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });
  beforeEach(async () => {
    await t.db.query('DROP TABLE kandev_meta');
    await t.db.query('DROP TABLE task_session_messages');
    // the host's tables of another version: the messages without their metadata column
    await t.db.query(
      'CREATE TABLE task_session_messages (id TEXT PRIMARY KEY, task_session_id TEXT NOT NULL, task_id TEXT, turn_id TEXT, created_at TIMESTAMP, updated_at TIMESTAMP)',
    );
  });
  const cli = (...argv: string[]) =>
    runCliCaptured([...argv, '--database-url', t.url], { HEALTH_CONFIRM_DELAY_SECONDS: '0', ...testProxyEnv() });

  it.each([['migrate'], ['report'], ['health'], ['health', '--full'], ['ingest', frames]])(
    'issue 51: %s on a store without task_session_messages.metadata names the column, writes nothing, exits 1',
    async (...argv) => {
      const run = await cli(...argv);
      expect(run.code).toBe(EXIT.failure);
      expect(run.stderr).toMatch(/is not the host's shape: it has no task_session_messages\.metadata column/);
      expect(run.stderr).toMatch(/nothing was written/);
      expect(run.stderr).not.toMatch(/disk|Nothing was committed/);
      expect(await missingTables(t.db, ['kandev_meta', 'task_session_subagents'])).toEqual([
        'kandev_meta',
        'task_session_subagents',
      ]);
    },
  );
});
