import { describe, expect, it } from 'vitest';
import { runMigration } from '../../../lib/migrate/run-migration.js';
import type { SubagentRow } from '../../../lib/row.js';
import { readAll } from '../../../lib/store/read.js';
import { formatRfc3339 } from '../../../lib/time.js';
import { fixtureHolds, TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { at, check, MINUTE, seedMessage, seedRow, setCaptureSince } from '../health/seed.js';
import { insertHostMessage, subagentDoc } from './host-messages.js';

/*
 * R2-1 parity on the odd host metadata a store can hold (docs/dialects.md#json-documents): an
 * unpaired surrogate escape, a repeated key, nesting deeper than 1,000 levels. Every target with
 * both host fixtures: the same backfilled rows and the same health figures on every dialect. (A
 * case the fixture's store cannot hold is left out there: the real host's expression indexes
 * refuse the document, jsonb an unpaired escape, json_extract the deep nesting.)
 */

const doc = (options: Parameters<typeof subagentDoc>[0]) => JSON.stringify(subagentDoc(options));
/** `text` with its first `"key":` member repeated first, as `"key":"first",` (the later one is the one read). */
const repeated = (text: string, key: string, first: unknown) =>
  text.replace(`"${key}":`, `"${key}":${JSON.stringify(first)},"${key}":`);
/** A subagent document with a member `raw` holding `depth` nested arrays (the document one deeper). */
const nested = (depth: number) =>
  doc({ top: { raw: 'RAW' } }).replace('"RAW"', `${'['.repeat(depth)}${']'.repeat(depth)}`);

interface Case {
  name: string;
  /** the metadata TEXT exactly as stored */
  metadata: string;
  /** the row the backfill makes (the fields that matter), or null for none */
  row: Partial<SubagentRow> | null;
  /** health: tool call ids of live rows observed in the window beside the message */
  live: string[];
  figures: { shortfall: number; excess: number; collisions: number };
}

const LONE_LOW = '\uDC00';
const LONE_HIGH = '\uD800';

const CASES: Case[] = [
  {
    name: 'R2-1: an unpaired low surrogate escape in tool_call_id: identity invalid, no row, not expected',
    metadata: doc({ top: { tool_call_id: `c${LONE_LOW}` } }),
    row: null,
    live: [],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: an unpaired high surrogate escape (upper case) in tool_call_id: identity invalid, no row, not expected',
    metadata: doc({ top: { tool_call_id: 'c1' } }).replace('"c1"', '"c1\\uD800"'),
    row: null,
    live: [],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: an unpaired surrogate escape in parent_tool_call_id: identity invalid, no row, not expected',
    metadata: doc({ top: { parent_tool_call_id: `p${LONE_HIGH}x` } }),
    row: null,
    live: [],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: a message with an unpaired surrogate in its tool_call_id explains no row (excess)',
    metadata: doc({ top: { tool_call_id: `c1${LONE_LOW}` } }),
    row: null,
    live: ['c1'],
    figures: { shortfall: 0, excess: 1, collisions: 0 },
  },
  {
    name: 'R2-1: an unpaired surrogate escape in description → U+FFFD; the message is backfilled and expected',
    metadata: doc({ task: { description: `Review ${LONE_LOW} auth`, model: `m${LONE_HIGH}` } }),
    row: { tool_call_id: 'c1', description: 'Review \uFFFD auth', model: 'm\uFFFD' },
    live: [],
    figures: { shortfall: 1, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: an unpaired surrogate escape in prompt (never stored) changes nothing: backfilled, explains its row',
    metadata: doc({ task: { prompt: `p${LONE_LOW}${LONE_HIGH}`, total_tokens: 91_234 } }),
    row: { tool_call_id: 'c1', total_tokens: 91_234 },
    live: ['c1'],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: a surrogate pair escape is one character, kept in the identity',
    metadata: doc({ top: { tool_call_id: 'c1' } }).replace('"c1"', '"c\\ud83d\\ude00"'),
    row: { tool_call_id: 'c\u{1F600}' },
    live: ['c\u{1F600}'],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: an escaped backslash before udc00 is text, not an escape',
    metadata: doc({ top: { tool_call_id: 'c\\udc00' } }),
    row: { tool_call_id: 'c\\udc00' },
    live: [],
    figures: { shortfall: 1, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: a repeated tool_call_id reads as its last value (as JSON.parse reads it)',
    metadata: repeated(doc({ top: { tool_call_id: 'c2' } }), 'tool_call_id', 'c1'),
    row: { tool_call_id: 'c2' },
    live: ['c2'],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: a repeated key in subagent_task reads as its last value',
    metadata: repeated(
      repeated(doc({ task: { model: 'claude-x', total_tokens: 500 } }), 'model', 'claude-old'),
      'total_tokens',
      100,
    ),
    row: { tool_call_id: 'c1', model: 'claude-x', total_tokens: 500 },
    live: [],
    figures: { shortfall: 1, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: a repeated normalized object reads as the last one (its kind decides)',
    metadata: repeated(doc({}), 'normalized', { kind: 'message' }),
    row: { tool_call_id: 'c1', subagent_type: 'security-reviewer' },
    live: [],
    figures: { shortfall: 1, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: a repeated kind whose last value is not subagent_task: not a subagent message',
    metadata: repeated(doc({ kind: 'message' }), 'kind', 'subagent_task'),
    row: null,
    live: ['c1'],
    figures: { shortfall: 0, excess: 1, collisions: 0 },
  },
  {
    name: 'R2-1: nesting 1,000 levels deep (SQLite’s limit) is read on every dialect',
    metadata: nested(999),
    row: { tool_call_id: 'c1' },
    live: [],
    figures: { shortfall: 1, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: nesting deeper than 1,000 levels: unreadable on every dialect (no row, explains nothing)',
    metadata: nested(1000),
    row: null,
    live: ['c1'],
    figures: { shortfall: 0, excess: 1, collisions: 0 },
  },
  {
    name: 'R2-1: nesting far deeper than 1,000 levels fails no statement (jsonb would hit the stack limit)',
    metadata: nested(20_000),
    row: null,
    live: [],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
  {
    name: 'R2-1: more than 1,000 brackets but shallow is read on every dialect',
    metadata: doc({ top: { raw: Array.from({ length: 1500 }, () => [[]]) } }),
    row: { tool_call_id: 'c1' },
    live: ['c1'],
    figures: { shortfall: 0, excess: 0, collisions: 0 },
  },
];

const casesFor = (target: (typeof TARGET_FIXTURES)[number][0], fixture: (typeof TARGET_FIXTURES)[number][1]) =>
  CASES.filter((c) => fixtureHolds(target, fixture, c.metadata)).map((c) => [c.name, c] as const);

/** The 20,000-deep document takes 10-40 s on PGlite on a loaded 2-core machine (its JSON checks walk every level). */
const CASE_TIMEOUT_MS = 120_000;

describe.each(TARGET_FIXTURES)('R2-1: odd host metadata, backfill on %s (%s host)', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });

  it.each(casesFor(target, fixture))(
    '%s',
    async (_name, c) => {
      await insertHostMessage(t.db, { id: 'm1', metadata: c.metadata });
      const report = await runMigration(t.db);
      const rows = await readAll(t.db);
      if (c.row === null) {
        expect(report).toMatchObject({ inserted: 0, matched: 0 });
        expect(rows).toEqual([]);
      } else {
        expect(report).toMatchObject({ inserted: 1, matched: 1 });
        expect(rows).toEqual([expect.objectContaining(c.row)]);
      }
    },
    CASE_TIMEOUT_MS,
  );
});

describe.each(TARGET_FIXTURES)('R2-1: odd host metadata, health on %s (%s host)', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });
  const since = at('2026-08-12T13:00:00Z');
  const now = since + 60n * MINUTE;

  it.each(casesFor(target, fixture))(
    '%s',
    async (_name, c) => {
      await setCaptureSince(t.db, formatRfc3339(since));
      await seedMessage(t.db, { createdAt: since + MINUTE, metadata: c.metadata });
      for (const toolCallId of c.live) await seedRow(t.db, { observedAt: since + 2n * MINUTE, toolCallId });
      const figures = (r: { shortfall: number | null; excess: number | null; collisions: number | null }) => ({
        shortfall: r.shortfall,
        excess: r.excess,
        collisions: r.collisions,
      });
      // Without the host's metadata index (the minimal fixture) the scheduled check leaves excess to the audit.
      const scheduled = fixture === 'minimal' ? { ...c.figures, excess: null } : c.figures;
      expect(figures(await check(t.db, now))).toEqual(scheduled);
      expect(figures(await check(t.db, now, { kind: 'full' }))).toEqual(c.figures);
    },
    CASE_TIMEOUT_MS,
  );
});
