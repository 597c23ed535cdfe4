import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { type ExportOptions, runExport, SPEND_NOT_COLLECTED, USAGE_CHANGES_NOT_SEEN } from '../../../lib/export/run.js';
import { parseFrame } from '../../../lib/frame/parse.js';
import { normalizeFrame } from '../../../lib/normalize.js';
import type { RunUsage } from '../../../lib/producer/usage/run-usage.js';
import type { SubagentWrite } from '../../../lib/row.js';
import { writeBatch } from '../../../lib/store/write.js';
import type { ReceivedSpan } from '../../../local/otlp-receiver.js';
import { exportOptions, receiverSink, useOtlpReceiver } from '../../support/otlp-harness.js';
import { insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';
import { insertUsage, type UsageFields } from '../../support/usage-rows.js';

/*
 * R6-7: the run usage stored beside each row (task_session_subagent_usage, R6-2) on its
 * `invoke_agent` span, under the GenAI conventions' names for tokens and ours for cost, against
 * the real local receiver on every target and both host fixtures. Expected attributes are
 * written out by hand from docs/otlp.md#run-usage, not computed by the exporter's code.
 */

const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.123456Z`;
const OPTIONS = exportOptions(900);

/** One turn: a parent (a) and its child (b), both settled; the host row's own total_tokens on a. */
const TURN: StoredRow[] = [
  { tool_call_id: 'a', model: 'claude-opus-5', total_tokens: 900, observed_at: T(1), settled_at: T(2) },
  { tool_call_id: 'b', parent_tool_call_id: 'a', observed_at: T(3), settled_at: T(4) },
];

/** A whole run with every kind reported (reasoning within the output, R6-1), priced by the provider. */
const FULL: UsageFields = {
  tokens_in: 1200,
  tokens_out: 300,
  tokens_cached_read: 40_000,
  tokens_cached_write: 5_000,
  tokens_reasoning: 100,
  requests: 7,
  cost_subcents: 4321,
  cost_source: 'provider_reported',
  model: 'claude-opus-5,claude-haiku-4',
  complete: 1,
};

const usageOf = (span: ReceivedSpan | undefined) =>
  Object.fromEntries(
    Object.entries(span?.attributes ?? {}).filter(([k]) => k.startsWith('gen_ai.usage.') || k.includes('.usage.')),
  );
/** A write as `spend` makes it (lib/spend/run.ts frameFor): the row's identity, its newest observation, the usage. */
function usageWrite(call: string, observedAt: string, usage: RunUsage): SubagentWrite {
  const parsed = parseFrame(
    JSON.stringify({
      version: 1,
      task_session_id: 's1',
      task_id: 't1',
      tool_call_id: call,
      execution_id: 'e1',
      observed_at: observedAt,
      subagent_task: { usage },
    }),
  );
  if (!parsed.ok) throw parsed.error;
  const normalized = normalizeFrame(parsed.frame);
  if (normalized.kind !== 'write') throw new Error('not a write');
  return normalized.row;
}

const byCall = (spans: readonly ReceivedSpan[], id: string) =>
  spans.find((s) => s.attributes['subagent_context.tool_call_id'] === id);

describe.each(TARGET_FIXTURES)('R6-7 run usage on spans on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture });
  const receiver = useOtlpReceiver();
  const exportTo = async (db: Queryable, options: Partial<ExportOptions> = {}) => {
    const { url, sink } = receiverSink(receiver());
    try {
      return await runExport(db, sink, url, { ...OPTIONS, ...options });
    } finally {
      await sink.shutdown();
    }
  };
  const usage = (id: string, fields: Parameters<typeof insertUsage>[2]) =>
    insertUsage(t.db, { task_session_id: 's1', tool_call_id: id }, fields);

  it('R6-7: the run usage is on its invoke_agent span as the GenAI conventions name it, cost and its source as ours', async () => {
    await insertRows(t.db, TURN);
    await usage('a', { ...FULL, observed_at: T(2) });
    const summary = await exportTo(t.db);
    expect(summary).toMatchObject({ spans: 3, notes: [], unreadable: {} });
    expect(usageOf(byCall(receiver().spans, 'a'))).toEqual({
      // input as the convention counts it: with its cache parts; the output already holds its reasoning
      'gen_ai.usage.input_tokens': 1200 + 40_000 + 5_000,
      'gen_ai.usage.output_tokens': 300,
      'gen_ai.usage.cache_read.input_tokens': 40_000,
      'gen_ai.usage.cache_creation.input_tokens': 5_000,
      'gen_ai.usage.reasoning.output_tokens': 100,
      'subagent_context.usage.requests': 7,
      'subagent_context.usage.cost_subcents': 4321,
      'subagent_context.usage.cost_source': 'provider_reported',
      'subagent_context.usage.model': 'claude-opus-5,claude-haiku-4',
      'subagent_context.usage.complete': true,
      'subagent_context.usage.observed_at': T(2),
    });
    const a = byCall(receiver().spans, 'a')!;
    // the host row's own figure stays ours and apart; nothing is named total_tokens under gen_ai.usage
    expect(a.attributes['subagent_context.total_tokens']).toBe(900);
    expect(a.attributes['gen_ai.usage.total_tokens']).toBeUndefined();
    // a row without a usage row, and the turn's root, carry none
    expect(usageOf(byCall(receiver().spans, 'b'))).toEqual({});
    expect(usageOf(receiver().spans.find((s) => s.name === 'turn'))).toEqual({});
  });

  it('R6-7: a field not reported is absent, never 0; a kind not reported adds nothing to its total', async () => {
    await insertRows(t.db, TURN);
    // Codex-like: no cache writes, no price; b: only its output is known, not yet complete
    await usage('a', { tokens_in: 800, tokens_cached_read: 200, tokens_out: 50, tokens_reasoning: 20, complete: 1 });
    await usage('b', { tokens_out: 10, complete: 0 });
    await exportTo(t.db);
    expect(usageOf(byCall(receiver().spans, 'a'))).toEqual({
      'gen_ai.usage.input_tokens': 1000,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 200,
      'gen_ai.usage.reasoning.output_tokens': 20,
      'subagent_context.usage.complete': true,
      'subagent_context.usage.observed_at': '2026-08-12T13:00:00.000001Z',
    });
    expect(usageOf(byCall(receiver().spans, 'b'))).toEqual({
      'gen_ai.usage.output_tokens': 10,
      'subagent_context.usage.complete': false,
      'subagent_context.usage.observed_at': '2026-08-12T13:00:00.000001Z',
    });
  });

  // R6-1's cost rule as the span states it: [stored cost, stored source, tokens_out, sent cost, sent source]
  const costs: [string, number | null, string | null, number | null, number | undefined, string | undefined][] = [
    ['a provider-reported cost', 4321, 'provider_reported', 10, 4321, 'provider_reported'],
    ['a list-priced cost', 99, 'models_dev_list', 10, 99, 'models_dev_list'],
    ['a $0 for no tokens (a measured nothing)', 0, 'provider_reported', 0, 0, 'provider_reported'],
    ['a $0 for tokens: unpriced, not a measured $0', 0, 'models_dev_list', 10, undefined, 'unpriced'],
    ['a cost without a source: unpriced', 500, null, 10, undefined, 'unpriced'],
    ['unpriced (the ledger stores 0): no cost', 0, 'unpriced', 10, undefined, 'unpriced'],
    ['a source without a cost: unpriced', null, 'provider_reported', 10, undefined, 'unpriced'],
    ['neither: nothing', null, null, 10, undefined, undefined],
  ];
  it.each(costs)('R6-7, R6-1: %s', async (_, cost, source, out, sentCost, sentSource) => {
    await insertRows(t.db, TURN);
    await usage('a', { cost_subcents: cost, cost_source: source, tokens_out: out });
    await exportTo(t.db);
    const a = byCall(receiver().spans, 'a')!.attributes;
    expect(a['subagent_context.usage.cost_subcents']).toBe(sentCost);
    expect(a['subagent_context.usage.cost_source']).toBe(sentSource);
  });

  it('R6-7, R4-3: each hostile usage value is left out of its span and counted, the rest is sent', async () => {
    await insertRows(t.db, TURN);
    await usage('a', { ...FULL, observed_at: T(2) });
    const hostile: [string, string][] = [
      ['tokens_in', '-5'],
      ['tokens_cached_read', '-1'],
      ['cost_subcents', '9007199254740992'], // 2^53: beyond what a JSON reader keeps exactly
      ['complete', '2'],
      ['cost_source', "'free'"],
      ...(t.db.dialect.name === 'sqlite'
        ? ([
            ['tokens_out', "'many'"],
            ['requests', '1.5'],
            ['observed_at', "'garbage'"],
          ] as [string, string][])
        : ([['observed_at', "'infinity'"]] as [string, string][])),
    ];
    for (const [column, literal] of hostile)
      await t.db.query(`UPDATE task_session_subagent_usage SET ${column} = ${literal} WHERE tool_call_id = 'a'`);
    const summary = await exportTo(t.db);
    expect(summary.unreadable).toEqual(Object.fromEntries(hostile.map(([column]) => [`usage.${column}`, 1])));
    expect(summary).toMatchObject({ spans: 3, skipped: [] });
    const sqlite = t.db.dialect.name === 'sqlite';
    expect(usageOf(byCall(receiver().spans, 'a'))).toEqual({
      // input's total is not stated when a part of it is held but unreadable
      ...(sqlite ? {} : { 'gen_ai.usage.output_tokens': 300 }),
      'gen_ai.usage.cache_creation.input_tokens': 5_000,
      'gen_ai.usage.reasoning.output_tokens': 100,
      ...(sqlite ? {} : { 'subagent_context.usage.requests': 7 }),
      'subagent_context.usage.model': 'claude-opus-5,claude-haiku-4',
    });
  });

  it('R6-7, R4-8: usage `spend` writes after the span was sent, long after the turn, sends its turn again once, with the same ids', async () => {
    await insertRows(t.db, TURN);
    expect(await exportTo(t.db)).toMatchObject({ new: 1, spans: 3 });
    const before = receiver()
      .spans.map((s) => `${s.traceId}/${s.spanId}`)
      .sort();
    receiver().spans.length = 0;
    // months later (the rows are of August), as `spend` writes it: through the ingest's writer, as
    // of the row's own newest observation, so the row and its updated_at stay as they were
    await writeBatch(t.db, [
      usageWrite('b', T(4), { tokens_out: 10, cost_subcents: 12, cost_source: 'models_dev_list', complete: true }),
    ]);
    expect(await exportTo(t.db)).toMatchObject({ turns: 1, re_sent: 1, new: 0, spans: 3 });
    expect(
      receiver()
        .spans.map((s) => `${s.traceId}/${s.spanId}`)
        .sort(),
    ).toEqual(before);
    expect(usageOf(byCall(receiver().spans, 'b'))).toEqual({
      'gen_ai.usage.output_tokens': 10,
      'subagent_context.usage.cost_subcents': 12,
      'subagent_context.usage.cost_source': 'models_dev_list',
      'subagent_context.usage.complete': true,
      'subagent_context.usage.observed_at': T(4),
    });
    // then quiet: the same usage is not sent again, whatever the lookback
    expect(await exportTo(t.db)).toMatchObject({ turns: 0, spans: 0 });
    expect(await exportTo(t.db, { lookbackSeconds: 0 })).toMatchObject({ turns: 0, spans: 0 });
  });

  it('R6-7, R4-8: usage that replaces usage already sent (complete now) is sent again within the lookback', async () => {
    await insertRows(t.db, TURN);
    await usage('a', { tokens_out: 10, complete: 0, observed_at: T(2) });
    await exportTo(t.db);
    receiver().spans.length = 0;
    await t.db.query("UPDATE task_session_subagent_usage SET tokens_out = 25, complete = 1 WHERE tool_call_id = 'a'");
    expect(await exportTo(t.db)).toMatchObject({ turns: 1, re_sent: 1, spans: 3 });
    expect(usageOf(byCall(receiver().spans, 'a'))).toMatchObject({
      'gen_ai.usage.output_tokens': 25,
      'subagent_context.usage.complete': true,
    });
  });

  it('R6-7: a usage row without its write clock (another writer, or a table from before it) is sent again only within the lookback', async () => {
    await insertRows(t.db, TURN);
    await exportTo(t.db);
    receiver().spans.length = 0;
    await usage('a', { tokens_out: 10, observed_at: T(0) }); // a plain INSERT: written_at NULL
    expect(await exportTo(t.db, { lookbackSeconds: 0 })).toMatchObject({ turns: 0, spans: 0 });
    expect(await exportTo(t.db)).toMatchObject({ turns: 1, re_sent: 1 });
    expect(usageOf(byCall(receiver().spans, 'a'))).toMatchObject({ 'gen_ai.usage.output_tokens': 10 });
  });
});

describe.each(TARGET_FIXTURES)('R6-7 a store without the usage table on %s, %s host schema', (target, fixture) => {
  // R3-3: on the host's DDL, a store the host activated itself (no object of ours); on the minimal
  // one, a store a release before R6-2 migrated (our table, no usage table).
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const receiver = useOtlpReceiver();

  it('R6-7: no span carries usage, and the summary says so once, never as 0s', async () => {
    if (fixture !== 'host') await t.db.query('DROP TABLE task_session_subagent_usage');
    await insertRows(t.db, [
      ...TURN,
      { tool_call_id: 'c', turn_id: 'u2', observed_at: T(5), settled_at: T(6) },
      { tool_call_id: 'd', turn_id: 'u3', observed_at: T(7), settled_at: T(8) },
    ]);
    const { url, sink } = receiverSink(receiver());
    const summary = await runExport(t.db, sink, url, { ...OPTIONS, pageTurns: 1 });
    await sink.shutdown();
    expect(summary.spans).toBe(7);
    expect(summary.notes).toEqual([SPEND_NOT_COLLECTED]);
    expect(receiver().spans.flatMap((s) => Object.keys(usageOf(s)))).toEqual([]);
  });
});

describe.each(TARGET_FIXTURES)(
  'R6-7 a usage table from before its write clock on %s, %s host schema',
  (target, fixture) => {
    const t = useTestDatabase(target, { fixture });
    const receiver = useOtlpReceiver();

    it('R6-7: usage is still sent, and the summary says once that later usage is seen only within the lookback', async () => {
      await t.db.query('ALTER TABLE task_session_subagent_usage DROP COLUMN written_at');
      await insertRows(t.db, TURN);
      await insertUsage(t.db, { tool_call_id: 'a' }, { tokens_out: 10 });
      const { url, sink } = receiverSink(receiver());
      const summary = await runExport(t.db, sink, url, OPTIONS);
      await sink.shutdown();
      expect(summary.notes).toEqual([USAGE_CHANGES_NOT_SEEN]);
      expect(usageOf(byCall(receiver().spans, 'a'))).toMatchObject({ 'gen_ai.usage.output_tokens': 10 });
    });
  },
);
