import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { type ExportOptions, runExport } from '../../../lib/export/run.js';
import { listChangedTurns } from '../../../lib/report/trees.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { exportOptions, receiverSink, storedPositionText, useOtlpReceiver } from '../../support/otlp-harness.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R4-9 (conventions and time), R4-3 (an unreadable value is skipped, named, and the export moves
 * on) and R4-4 (no depth or width limit) against the real local receiver.
 */

const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.123456Z`;
const nanos = (text: string) => parseRfc3339(text)! * 1000n;

const OPTIONS = exportOptions(900);

function receiverFor() {
  const receiver = useOtlpReceiver();
  const exportTo = (db: Queryable, options: Partial<ExportOptions> = {}) => {
    const { url, sink } = receiverSink(receiver(), { timeoutMillis: 60_000, retries: 2 });
    return runExport(db, sink, url, { ...OPTIONS, ...options });
  };
  return { receiver, exportTo };
}

describe.each(TARGET_FIXTURES)('R4-9 conventions on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const r = receiverFor();

  it('R4-9: every span whose model names a provider carries gen_ai.provider.name; others carry none', async () => {
    const models: [string | null, string | undefined][] = [
      ['claude-opus-5[1m]', 'anthropic'],
      ['gpt-5.1-codex', 'openai'],
      ['o3', 'openai'],
      ['gemini-2.5-pro', 'gcp.gemini'],
      ['anthropic/claude-sonnet-4', 'anthropic'],
      ['my-local-llama', undefined],
      [null, undefined],
    ];
    await insertRows(
      t.db,
      models.map(([model], i) => ({ tool_call_id: `m${i}`, model, observed_at: T(i + 1), settled_at: T(i + 2) })),
    );
    await r.exportTo(t.db);
    for (const [i, [, provider]] of models.entries()) {
      const span = r.receiver().spans.find((s) => s.attributes['subagent_context.tool_call_id'] === `m${i}`)!;
      expect(span.attributes['gen_ai.provider.name']).toBe(provider);
    }
  });

  it('R4-9: error.type on ERROR spans (cancelled included), none on others; schema URL on resource and scope', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'ok', tool_status: 'complete', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'cancel', agent_status: 'cancelled', observed_at: T(3), settled_at: T(4) },
      { tool_call_id: 'fail', tool_status: 'error', agent_status: 'failed', observed_at: T(5), settled_at: T(6) },
    ]);
    await r.exportTo(t.db);
    const spans = r.receiver().spans;
    const by = (id: string) => spans.find((s) => s.attributes['subagent_context.tool_call_id'] === id)!;
    expect(by('ok').attributes).not.toHaveProperty('error.type');
    expect([by('cancel').status, by('cancel').attributes['error.type']]).toEqual([
      { code: 2, message: 'agent_status cancelled' },
      'cancelled',
    ]);
    expect([by('fail').status.code, by('fail').attributes['error.type']]).toEqual([2, 'error']);
    for (const span of spans) {
      expect(span.resourceSchemaUrl).toBe('https://opentelemetry.io/schemas/1.41.0');
      expect(span.scopeSchemaUrl).toBe('https://opentelemetry.io/schemas/1.41.0');
    }
  });

  it('R4-9: a span ends at its start plus duration_ms where reported, else at settled_at', async () => {
    await insertRows(t.db, [
      // duration_ms 254,220 ms: the span is 254.22 s long, whatever settled_at says (57.7 s here)
      { tool_call_id: 'd', duration_ms: 254_220, observed_at: T(1), settled_at: '2026-08-12T13:00:58.823456Z' },
      { tool_call_id: 'n', observed_at: T(2), settled_at: T(9) },
    ]);
    await r.exportTo(t.db);
    const by = (id: string) => r.receiver().spans.find((s) => s.attributes['subagent_context.tool_call_id'] === id)!;
    expect(by('d').endTimeUnixNano).toBe(nanos('2026-08-12T13:04:15.343456Z'));
    expect(by('n').endTimeUnixNano).toBe(nanos(T(9)));
  });
});

/** Values the host's table (no CHECKs) can hold that are not instants: R4-3's list, per dialect. */
const UNREADABLE: Record<string, [string, unknown][]> = {
  postgres: [
    ['-infinity', '-infinity'],
    ['infinity', 'infinity'],
    ['year 294276', '294276-01-01 00:00:00'],
    ['BC', '0044-03-15 12:00:00 BC'],
  ],
  sqlite: [
    ['garbage', 'garbage'],
    ["''", ''],
    ['1700000000', 1_700_000_000],
    ['year 10000', '10000-01-01 00:00:00+00:00'],
  ],
};

describe.each(TARGETS)('R4-3, R4-4 the export on odd and huge turns on %s', (target) => {
  const t = useTestDatabase(target);
  const r = receiverFor();
  const dialect = target === 'sqlite' ? 'sqlite' : 'postgres';

  it.each(UNREADABLE[dialect]!)(
    'R4-3: a row whose observed_at is %s is skipped with its turn named; the other turns go out; the next run is not blocked',
    async (_label, value) => {
      await insertRows(t.db, [
        { tool_call_id: 'good', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
        { tool_call_id: 'odd', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
        { tool_call_id: 'later', turn_id: 'u3', observed_at: T(5), settled_at: T(6) },
      ]);
      const cast = target === 'sqlite' ? '$1' : '$1::timestamp';
      await t.db.query(`UPDATE task_session_subagents SET observed_at = ${cast} WHERE tool_call_id = 'odd'`, [value]);
      const summary = await r.exportTo(t.db);
      expect(summary.skipped).toEqual([
        {
          task_session_id: 's1',
          turn_id: 'u2',
          reason: expect.stringMatching(/^observed_at unreadable \(.*, tool call "odd"\)$/),
        },
      ]);
      expect(summary).toMatchObject({ new: 2, spans: 4 });
      expect(new Set(r.receiver().spans.map((s) => s.attributes['subagent_context.turn_id']))).toEqual(
        new Set(['u1', 'u3']),
      );
      expect(JSON.parse((await storedPositionText(t.db))!)).toMatchObject({ turn_key: 'u3' });
      // the next run (its lookback reads u2 again) is not blocked either
      expect(await r.exportTo(t.db)).toMatchObject({ spans: 0, skipped: [{ turn_id: 'u2' }] });
    },
  );

  it.each(UNREADABLE[dialect]!)(
    "R4-3 (issue 48): one row whose observed_at is %s is left out of its turn, counted in unreadable.observed_at; the turn's readable rows go out",
    async (_label, value) => {
      await insertRows(t.db, [
        { tool_call_id: 'good', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
        { tool_call_id: 'odd', turn_id: 'u1', observed_at: T(3), settled_at: T(4) },
      ]);
      const cast = target === 'sqlite' ? '$1' : '$1::timestamp';
      await t.db.query(`UPDATE task_session_subagents SET observed_at = ${cast} WHERE tool_call_id = 'odd'`, [value]);
      const summary = await r.exportTo(t.db);
      expect(summary).toMatchObject({ new: 1, spans: 2, skipped: [], unreadable: { observed_at: 1 } });
      expect(r.receiver().spans.flatMap((s) => s.attributes['subagent_context.tool_call_id'] ?? [])).toEqual(['good']);
    },
  );

  const cast = target === 'sqlite' ? '$1' : '$1::timestamp';
  const setTime = (column: string, value: unknown, toolCallId: string) =>
    t.db.query(`UPDATE task_session_subagents SET ${column} = ${cast} WHERE tool_call_id = '${toolCallId}'`, [value]);

  it.each(UNREADABLE[dialect]!)(
    'R4-3: a turn whose only updated_at is %s is placed by its observed_at, sent, counted in unreadable.updated_at; the listing goes on',
    async (_label, value) => {
      await insertRows(t.db, [
        { tool_call_id: 'good', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
        { tool_call_id: 'odd', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
        { tool_call_id: 'later', turn_id: 'u3', observed_at: T(5), settled_at: T(6), updated_at: T(7) },
      ]);
      await setTime('updated_at', value, 'odd');
      // a settle lag of 60 s from now: PostgreSQL infinity, read as an instant, would never pass it
      const summary = await r.exportTo(t.db, { settleSeconds: 60 });
      expect(summary).toMatchObject({ new: 3, spans: 6, skipped: [], unreadable: { updated_at: 1 } });
      expect(new Set(r.receiver().spans.map((s) => s.attributes['subagent_context.turn_id']))).toEqual(
        new Set(['u1', 'u2', 'u3']),
      );
      // the next run sends nothing new and still names the value in its window
      expect(await r.exportTo(t.db, { settleSeconds: 60 })).toMatchObject({ spans: 0, unreadable: { updated_at: 1 } });
    },
  );

  it('R4-3: a turn with one unreadable updated_at among readable ones is placed by the newest readable one', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2), updated_at: T(30) },
      { tool_call_id: 'b', turn_id: 'u1', observed_at: T(3), settled_at: T(4), updated_at: T(31) },
      { tool_call_id: 'c', turn_id: 'u2', observed_at: T(5), settled_at: T(6), updated_at: T(40) },
    ]);
    await setTime('updated_at', UNREADABLE[dialect]![1]![1], 'b');
    expect(await listChangedTurns(t.db, {})).toEqual([
      {
        task_session_id: 's1',
        turn_key: 'u1',
        changed: parseRfc3339(T(30)),
        unreadable: { updated_at: 1, settled_at: 0, observed_at: 0 },
      },
      {
        task_session_id: 's1',
        turn_key: 'u2',
        changed: parseRfc3339(T(40)),
        unreadable: { updated_at: 0, settled_at: 0, observed_at: 0 },
      },
    ]);
    expect(await r.exportTo(t.db)).toMatchObject({ turns: 2, unreadable: { updated_at: 1 } });
  });

  it('R4-3: a turn with no readable time at all is listed first, skipped and named; the turns after it go out', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'odd', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'good', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
    ]);
    const [value] = UNREADABLE[dialect]![0]!.slice(1);
    await setTime('updated_at', value, 'odd');
    await setTime('observed_at', value, 'odd');
    const summary = await r.exportTo(t.db);
    expect(summary).toMatchObject({
      turns: 1,
      skipped: [{ task_session_id: 's1', turn_id: 'u1', reason: expect.stringMatching(/^observed_at unreadable/) }],
    });
    expect(r.receiver().spans.flatMap((s) => s.attributes['subagent_context.tool_call_id'] ?? [])).toEqual(['good']);
  });

  /** A metric the host's table can hold that is not a count in range: -1 on both dialects, text on SQLite. */
  const setMetrics = async (toolCallId: string) => {
    const duration = target === 'sqlite' ? "'1 h'" : '-1';
    await t.db.query(
      `UPDATE task_session_subagents SET total_tokens = -1, tool_use_count = -2147483648, duration_ms = ${duration} WHERE tool_call_id = '${toolCallId}'`,
    );
  };

  it('R4-3: a row with total_tokens = -1 (and an unreadable tool_use_count, duration_ms) is sent without them, each counted in summary.unreadable', async () => {
    await insertRows(t.db, [
      {
        tool_call_id: 'odd',
        turn_id: 'u1',
        total_tokens: 5,
        tool_use_count: 2,
        duration_ms: 30,
        observed_at: T(1),
        settled_at: T(2),
      },
      {
        tool_call_id: 'good',
        turn_id: 'u2',
        total_tokens: 7,
        tool_use_count: 1,
        duration_ms: 40,
        observed_at: T(3),
        settled_at: T(4),
      },
    ]);
    await setMetrics('odd');
    expect(await r.exportTo(t.db, { position: 'none' })).toMatchObject({
      turns: 2,
      skipped: [],
      unreadable: { total_tokens: 1, tool_use_count: 1, duration_ms: 1 },
    });
    const odd = r.receiver().spans.find((s) => s.attributes['subagent_context.tool_call_id'] === 'odd')!;
    expect(odd.attributes['subagent_context.total_tokens']).toBeUndefined();
    expect(odd.attributes['subagent_context.tool_use_count']).toBeUndefined();
    expect(odd.attributes['subagent_context.duration_ms']).toBeUndefined();
    // with no length, the span ends at settled_at
    expect(odd.endTimeUnixNano).toBe(nanos(T(2)));
  });

  it('R4-3: an unreadable metric of a row not sent (not settled) is not counted; with --open-spans it is sent and counted', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'odd', turn_id: 'u1', total_tokens: 5, observed_at: T(1), settled_at: null },
      { tool_call_id: 'good', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
    ]);
    await setMetrics('odd');
    const closed = await r.exportTo(t.db, { position: 'none' });
    expect([closed.turns, closed.unreadable]).toEqual([1, {}]);
    expect(await r.exportTo(t.db, { position: 'none', openSpans: true })).toMatchObject({
      turns: 2,
      unreadable: { total_tokens: 1, tool_use_count: 1, duration_ms: 1 },
    });
  });

  it.each(UNREADABLE[dialect]!)(
    'R4-3: a settled_at of %s reads as not settled (no span without --open-spans) and is counted in unreadable.settled_at',
    async (_label, value) => {
      await insertRows(t.db, [
        { tool_call_id: 'odd', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
        { tool_call_id: 'good', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
      ]);
      await setTime('settled_at', value, 'odd');
      expect(await r.exportTo(t.db, { position: 'none' })).toMatchObject({
        turns: 1,
        skipped: [],
        unreadable: { settled_at: 1 },
      });
      expect(r.receiver().spans.flatMap((s) => s.attributes['subagent_context.tool_call_id'] ?? [])).toEqual(['good']);
      const open = await r.exportTo(t.db, { position: 'none', openSpans: true });
      expect(open).toMatchObject({ turns: 2, unreadable: { settled_at: 1 } });
      const span = r.receiver().spans.find((s) => s.attributes['subagent_context.tool_call_id'] === 'odd')!;
      expect(span.attributes['subagent_context.settled']).toBe(false);
    },
  );

  /** One statement: a turn of `n` rows, each the child of the previous (chain) or of one root (width). */
  const insertTurn = async (n: number, shape: 'chain' | 'width') => {
    await insertRows(t.db, [{ tool_call_id: 'c0', observed_at: T(0), settled_at: T(1) }]);
    const d = t.db.dialect;
    const time = d.timestampParam(2);
    const parent = shape === 'chain' ? `'c' || (i - 1)` : `'c0'`;
    await t.db.query(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
       INSERT INTO task_session_subagents (id, task_session_id, task_id, turn_id, tool_call_id, agent_execution_id,
         parent_tool_call_id, subagent_type, is_async, source, observed_at, settled_at, updated_at)
       SELECT 's1/e1/c' || i, 's1', 't1', 'u1', 'c' || i, 'e1', ${parent}, 'explore', 0, 'live', ${time}, ${time}, ${time} FROM n`,
      [n - 1, d.encodeTimestamp(parseRfc3339(T(2))!)],
    );
  };

  // 5,000 deep is where span building crashed (recursion); the 100,000 / 30,000 case is
  // otlp-spans.test.ts (span building alone: the tree reader's own cost is lib/report's).
  it.each([
    ['chain', 5_000],
    ['width', 5_000],
  ] as const)(
    'R4-4: a turn that is a %s of %i rows exports whole, every span under its parent',
    async (shape, n) => {
      await insertTurn(n, shape);
      const summary = await r.exportTo(t.db, { batchSpans: 10_000 });
      expect(summary).toMatchObject({ turns: 1, spans: n + 1, skipped: [] });
      const spans = r.receiver().spans;
      expect(spans).toHaveLength(n + 1);
      const byCall = new Map(spans.map((s) => [s.attributes['subagent_context.tool_call_id'], s]));
      const root = spans.find((s) => s.parentSpanId === '')!;
      expect(byCall.get('c0')!.parentSpanId).toBe(root.spanId);
      for (const i of [1, 2, n - 1]) {
        const expectedParent = shape === 'chain' ? `c${i - 1}` : 'c0';
        expect(byCall.get(`c${i}`)!.parentSpanId).toBe(byCall.get(expectedParent)!.spanId);
      }
    },
    120_000,
  );
});
