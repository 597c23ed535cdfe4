import { describe, expect, it } from 'vitest';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import type { SubagentRow } from '../../../lib/row.js';
import { readAll } from '../../../lib/store/read.js';
import { formatRfc3339 } from '../../../lib/time.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, seedMessage, seedRow, setCaptureSince } from '../health/seed.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

/*
 * R2-1 in host metadata (docs/frame.md#text-rules): the backfill and the health check read a
 * document holding `\u0000` escapes the same way on every dialect — PostgreSQL's jsonb rejects the
 * escape, which used to drop the message silently. (The minimal host fixture: on PostgreSQL the
 * host's own expression index casts metadata to jsonb, so a real PostgreSQL host cannot store such
 * a document at all; its SQLite store can.)
 */

const NUL = '\u0000';
const doc = (options: Parameters<typeof subagentDoc>[0]) => JSON.stringify(subagentDoc(options));

interface Case {
  name: string;
  /** the metadata TEXT exactly as stored */
  metadata: string;
  /** the row the backfill makes, or null for none */
  expected: Partial<SubagentRow> | null;
}

const CASES: Case[] = [
  {
    name: 'R2-1: a \\u0000 escape in prompt (never stored) does not drop the message',
    metadata: doc({ task: { prompt: `review${NUL}this`, description: 'Review auth', total_tokens: 91_234 } }),
    expected: { description: 'Review auth', total_tokens: 91_234, tool_status: 'completed' },
  },
  {
    name: 'R2-1: a \\u0000 escape in description is removed, as ingest removes U+0000',
    metadata: doc({ task: { description: `Review${NUL} auth`, model: `${NUL}` } }),
    expected: { description: 'Review auth', model: null },
  },
  {
    name: 'R2-1: a \\u0000 escape in the tool call id: no row (its frame would be invalid)',
    metadata: doc({ top: { tool_call_id: `c1${NUL}x` } }),
    expected: null,
  },
  {
    name: 'R2-1: a \\u0000 escape in parent_tool_call_id: no row (its frame would be invalid)',
    metadata: doc({ top: { parent_tool_call_id: `p${NUL}` } }),
    expected: null,
  },
  {
    name: 'R2-1: an escaped backslash before u0000 is text, not a U+0000',
    metadata: doc({ task: { description: 'a\\u0000b' } }),
    expected: { description: 'a\\u0000b' },
  },
  {
    name: 'R2-1: an escaped backslash followed by a \\u0000 escape keeps the backslash, drops the U+0000',
    metadata: doc({ task: { description: `a\\${NUL}b\\\\${NUL}${NUL}c` } }),
    expected: { description: 'a\\b\\\\c' },
  },
  {
    name: 'R2-1: a terminal status with a \\u0000 settles once cleaned',
    metadata: doc({ top: { status: `completed${NUL}` } }),
    expected: { tool_status: 'completed', settled_at: '2026-08-12T13:24:58.123456Z' },
  },
  {
    name: 'R2-1: description longer than 4,096 characters is cut at 4,096',
    metadata: doc({ task: { description: 'd'.repeat(5000) } }),
    expected: { description: 'd'.repeat(4096) },
  },
  {
    name: 'R2-1: a tool call id of 513 characters: no row (its frame would be invalid)',
    metadata: doc({ top: { tool_call_id: 'c'.repeat(513) } }),
    expected: null,
  },
  {
    name: 'R2-1: a tool call id of 512 characters is stored as sent',
    metadata: doc({ top: { tool_call_id: 'c'.repeat(512) } }),
    expected: { tool_call_id: 'c'.repeat(512) },
  },
];

describe.each(TARGETS)('R2-1: host metadata with \\u0000 escapes, backfill on %s', (name) => {
  const t = useTestDatabase(name);

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await insertHostMessage(t.db, { id: 'm1', metadata: c.metadata });
    const report = await runMigration(t.db);
    const rows = await readAll(t.db);
    if (c.expected === null) {
      expect(report).toMatchObject({ inserted: 0, matched: 0 });
      expect(rows).toEqual([]);
    } else {
      expect(report).toMatchObject({ inserted: 1, matched: 1 });
      expect(rows).toEqual([expect.objectContaining(c.expected)]);
    }
  });
});

describe.each(TARGETS)('R2-1: host metadata with \\u0000 escapes, health on %s', (name) => {
  const t = useTestDatabase(name);
  const since = at('2026-08-12T13:00:00Z');
  const now = since + 60n * MINUTE;
  const withNulInPrompt = (toolCallId: string) =>
    JSON.stringify(subagentDoc({ top: { tool_call_id: toolCallId }, task: { prompt: `p${NUL}q` } }));

  it('R2-1: a message with a \\u0000 escape stays in the comparison: missing row → shortfall, row present → healthy', async () => {
    await setCaptureSince(t.db, formatRfc3339(since));
    await seedMessage(t.db, { createdAt: since + MINUTE, metadata: withNulInPrompt('c1') });
    await seedMessage(t.db, { createdAt: since + MINUTE, metadata: withNulInPrompt('c2') });
    await seedRow(t.db, { observedAt: since + MINUTE, toolCallId: 'c1' });
    const report = await check(t.db, now);
    expect(report).toMatchObject({ shortfall: 1, missing: [{ task_session_id: 's1', tool_call_id: 'c2' }] });
  });

  it('R2-1: a message whose tool call id holds a \\u0000 is not expected (its frame would be invalid)', async () => {
    await setCaptureSince(t.db, formatRfc3339(since));
    await seedMessage(t.db, { createdAt: since + MINUTE, metadata: withNulInPrompt(`c${NUL}1`) });
    await seedRow(t.db, { observedAt: since + MINUTE, toolCallId: 'c9' });
    await seedMessage(t.db, { createdAt: since + MINUTE, metadata: withNulInPrompt('c9') });
    expect(await check(t.db, now)).toMatchObject({ shortfall: 0 });
  });
});
