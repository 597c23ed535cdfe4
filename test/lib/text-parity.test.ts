import { describe, expect, it } from 'vitest';
import { parseFrame } from '../../lib/frame/parse.js';
import { normalizeFrame } from '../../lib/normalize.js';
import type { SubagentRow } from '../../lib/row.js';
import { readAll } from '../../lib/store/read.js';
import { writeBatch } from '../../lib/store/write.js';
import { frame, seedSession } from '../support/frames.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/**
 * R2-1 and R2-2 through the ingest path (parse → normalize → upsert), the same table of cases on
 * every target: each input must give the same outcome and the same row everywhere.
 */
type Outcome = { invalid: string } | { skipped: true } | { row: Partial<SubagentRow> };

const LONE_HIGH = '\uD800';
const LONE_LOW = '\uDC00';
const EMOJI = '\u{1F600}'; // two UTF-16 units, one character
const IDENTITY_FIELDS = [
  'task_session_id',
  'task_id',
  'tool_call_id',
  'execution_id',
  'turn_id',
  'parent_tool_call_id',
] as const;

interface Case {
  name: string;
  body: Record<string, unknown>;
  expected: Outcome;
}

const CASES: Case[] = [
  {
    name: 'R2-1: U+0000 in description is removed; the metrics and the settlement are kept',
    body: frame({
      tool_status: 'completed',
      subagent_task: { description: 'Review\u0000 auth', total_tokens: 91_234, status: 'completed' },
    }),
    expected: {
      row: {
        description: 'Review auth',
        total_tokens: 91_234,
        tool_status: 'completed',
        settled_at: '2026-08-12T13:24:58.123456Z',
      },
    },
  },
  {
    name: 'R2-1: U+0000 in every stored text column is removed; only NULs → NULL',
    body: frame({
      tool_status: 'in\u0000_progress',
      subagent_task: {
        subagent_type: '\u0000',
        model: 'm\u00001',
        agent_id: 'a\u0000',
        child_session_id: '\u0000ch',
        status: 'run\u0000ning',
      },
    }),
    expected: {
      row: {
        subagent_type: null,
        model: 'm1',
        agent_id: 'a',
        child_session_id: 'ch',
        agent_status: 'running',
        tool_status: 'in_progress',
      },
    },
  },
  {
    name: 'R2-1: an unpaired surrogate in stored text becomes U+FFFD; a pair is kept',
    body: frame({ subagent_task: { model: `m${LONE_HIGH}x`, description: `${LONE_LOW}d${EMOJI}` } }),
    expected: { row: { model: 'm\uFFFDx', description: `\uFFFDd${EMOJI}` } },
  },
  {
    name: 'R2-1: stored text longer than 4,096 characters is cut at 4,096 characters (never inside a pair)',
    body: frame({ subagent_task: { description: `${'a'.repeat(4095)}${EMOJI}tail`, model: 'x'.repeat(9000) } }),
    expected: { row: { description: `${'a'.repeat(4095)}${EMOJI}`, model: 'x'.repeat(4096) } },
  },
  {
    name: 'R2-1: a terminal tool_status with a U+0000 settles once cleaned',
    body: frame({ tool_status: 'completed\u0000' }),
    expected: { row: { tool_status: 'completed', settled_at: '2026-08-12T13:24:58.123456Z' } },
  },
  ...IDENTITY_FIELDS.flatMap((field): Case[] => [
    {
      name: `R2-1: U+0000 in ${field} makes the frame invalid`,
      body: frame({ [field]: 'id\u0000x' }),
      expected: { invalid: field },
    },
    {
      name: `R2-1: an unpaired high surrogate in ${field} makes the frame invalid`,
      body: frame({ [field]: `id${LONE_HIGH}` }),
      expected: { invalid: field },
    },
    {
      name: `R2-1: an unpaired low surrogate in ${field} makes the frame invalid`,
      body: frame({ [field]: `${LONE_LOW}id` }),
      expected: { invalid: field },
    },
    {
      name: `R2-1: ${field} of 513 characters makes the frame invalid`,
      body: frame({ [field]: 'i'.repeat(513) }),
      expected: { invalid: field },
    },
  ]),
  {
    name: 'R2-1: a 9 KB tool_call_id makes the frame invalid (PostgreSQL would refuse the index row, 54000)',
    body: frame({ tool_call_id: 'c'.repeat(9 * 1024) }),
    expected: { invalid: 'tool_call_id' },
  },
  {
    name: 'R2-1: an id of exactly 512 characters is stored as sent',
    body: frame({ tool_call_id: 'c'.repeat(512), turn_id: 'u'.repeat(512) }),
    expected: { row: { tool_call_id: 'c'.repeat(512), turn_id: 'u'.repeat(512) } },
  },
  {
    name: 'R2-1: an id of 512 characters outside the BMP (1,024 UTF-16 units) is stored as sent',
    body: frame({ tool_call_id: EMOJI.repeat(512) }),
    expected: { row: { tool_call_id: EMOJI.repeat(512) } },
  },
  {
    name: 'R2-2: null turn_id, parent_tool_call_id, execution_id and tool_status are absent',
    body: frame({ turn_id: null, parent_tool_call_id: null, execution_id: null, tool_status: null } as never),
    expected: {
      row: {
        turn_id: null,
        parent_tool_call_id: null,
        agent_execution_id: 'unknown',
        tool_status: null,
        settled_at: null,
      },
    },
  },
  {
    name: 'R2-2: null for every field inside subagent_task is absent',
    body: frame({
      subagent_task: Object.fromEntries(
        [
          'description',
          'prompt',
          'subagent_type',
          'status',
          'agent_id',
          'model',
          'child_session_id',
          'result_text',
          'output_file',
          'duration_ms',
          'total_tokens',
          'tool_use_count',
          'is_async',
          'can_read_output_file',
        ].map((f) => [f, null]),
      ),
    }),
    expected: {
      row: {
        subagent_type: null,
        description: null,
        model: null,
        total_tokens: null,
        tool_use_count: null,
        duration_ms: null,
        is_async: 0,
      },
    },
  },
  ...(['task_session_id', 'task_id', 'tool_call_id'] as const).map(
    (field): Case => ({
      name: `R2-2: a null ${field} is absent: the frame is skipped, not invalid (AC-2)`,
      body: frame({ [field]: null } as never),
      expected: { skipped: true },
    }),
  ),
  {
    name: 'R2-2: a required version of null is still invalid',
    body: frame({ version: null } as never),
    expected: { invalid: 'version' },
  },
  {
    name: 'R2-2: a required observed_at of null is still invalid',
    body: frame({ observed_at: null } as never),
    expected: { invalid: 'observed_at' },
  },
  {
    name: 'R2-2: a required subagent_task of null is still invalid',
    body: { ...frame(), subagent_task: null },
    expected: { invalid: 'subagent_task' },
  },
];

describe.each(TARGETS)('R2-1, R2-2: the same frame gives the same outcome and row on %s', (name) => {
  const t = useTestDatabase(name);

  async function ingest(body: Record<string, unknown>): Promise<Outcome> {
    const parsed = parseFrame(JSON.stringify(body));
    if (!parsed.ok) return { invalid: parsed.error.reason };
    const normalized = normalizeFrame(parsed.frame);
    if (normalized.kind === 'skip') return { skipped: true };
    await writeBatch(t.db, [normalized.row]);
    const rows = await readAll(t.db);
    expect(rows).toHaveLength(1);
    return { row: rows[0]! };
  }

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await seedSession(t.db);
    const outcome = await ingest(c.body);
    if ('invalid' in c.expected) {
      expect(outcome).toEqual({ invalid: expect.stringContaining(c.expected.invalid) });
      const reason = (outcome as { invalid: string }).invalid;
      expect(reason.length).toBeLessThan(300); // never the value (a 9 KB id, a prompt)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the reason must not quote the U+0000 id (R2-1, R2-6)
      expect(reason).not.toMatch(/id\u0000x|iiiii|ccccc/);
      expect(await readAll(t.db)).toEqual([]);
    } else if ('skipped' in c.expected) {
      expect(outcome).toEqual({ skipped: true });
    } else {
      expect(outcome).toEqual({ row: expect.objectContaining(c.expected.row) });
    }
  });

  it('R2-1: two tool call ids that differ only in an unpaired surrogate never become one row', async () => {
    await seedSession(t.db);
    const outcomes = [
      await ingest(frame({ tool_call_id: `c${LONE_HIGH}` })),
      await ingest(frame({ tool_call_id: `c${LONE_LOW}` })),
    ];
    expect(outcomes).toEqual([
      { invalid: expect.stringContaining('tool_call_id') },
      { invalid: expect.stringContaining('tool_call_id') },
    ]);
    expect(await readAll(t.db)).toEqual([]);
  });
});
