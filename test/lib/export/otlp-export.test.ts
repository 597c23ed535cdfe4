import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { type OtlpProtocol, resolveOtlpTarget } from '../../../lib/export/otlp/config.js';
import { createOtlpSink, OtlpExportError } from '../../../lib/export/otlp/transport.js';
import { POSITION_KEY, PositionError } from '../../../lib/export/position.js';
import { type ExportOptions, runExport } from '../../../lib/export/run.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../../../local/otlp-receiver.js';
import { exportOptions, receiverSink, storedPositionText, useOtlpReceiver } from '../../support/otlp-harness.js';
import { FIXED_IDS } from '../../support/otlp-ids.js';
import { insertRows, type StoredRow, withDefaults } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.123456Z`;
const nanos = (text: string) => parseRfc3339(text)! * 1000n;

const OPTIONS = exportOptions(0);

/** A turn with nesting, an orphan, a failure, NULL metrics, an unsettled row and the 'unknown' execution. */
const ROWS: StoredRow[] = [
  {
    tool_call_id: 'a',
    subagent_type: 'security-reviewer',
    description: 'Review auth',
    agent_id: 'a1b2',
    model: 'claude-opus-5[1m]',
    agent_status: 'completed',
    tool_status: 'complete',
    total_tokens: 91234,
    tool_use_count: 0,
    duration_ms: 48211,
    observed_at: T(1),
    settled_at: T(49),
  },
  {
    tool_call_id: 'b',
    parent_tool_call_id: 'a',
    subagent_type: 'explore',
    tool_status: 'complete',
    observed_at: T(2),
    settled_at: T(9),
  },
  {
    tool_call_id: 'c',
    parent_tool_call_id: 'zz',
    agent_status: 'async_launched',
    tool_status: 'complete',
    is_async: 1,
    observed_at: T(3),
    settled_at: T(4),
  },
  {
    tool_call_id: 'd',
    agent_execution_id: 'unknown',
    subagent_type: null,
    tool_status: 'error',
    source: 'backfill',
    observed_at: T(5),
    settled_at: T(6),
  },
  { tool_call_id: 'e', subagent_type: 'explore', observed_at: T(7) },
];

/** R4-9's provider for the models ROWS names, written out by hand (docs/otlp.md#provider). */
const PROVIDER: Record<string, string> = { 'claude-opus-5[1m]': 'anthropic' };
const FAILED = ['error', 'failed', 'cancelled'];

/** What R3-10 and R4-9 say the row's span carries, written from the row (not from the exporter's code). */
function expectedAttributes(input: StoredRow, all: readonly StoredRow[]): Record<string, string | number | boolean> {
  const r = withDefaults(input);
  const parentInTurn = all.some(
    (p) => p.tool_call_id === r.parent_tool_call_id && withDefaults(p).agent_execution_id === r.agent_execution_id,
  );
  const a: Record<string, string | number | boolean | null> = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': r.subagent_type,
    'gen_ai.agent.id': r.agent_id,
    'gen_ai.agent.description': r.description,
    'gen_ai.request.model': r.model,
    'gen_ai.provider.name': r.model === null ? null : (PROVIDER[r.model] ?? null),
    'gen_ai.conversation.id': r.task_session_id,
    'error.type': [r.tool_status, r.agent_status].find((v) => v !== null && FAILED.includes(v)) ?? null,
    'subagent_context.task_id': r.task_id,
    'subagent_context.task_session_id': r.task_session_id,
    'subagent_context.turn_id': r.turn_id,
    'subagent_context.tool_call_id': r.tool_call_id,
    'subagent_context.agent_execution_id': r.agent_execution_id === 'unknown' ? null : r.agent_execution_id,
    'subagent_context.parent_tool_call_id': r.parent_tool_call_id,
    'subagent_context.orphan': r.parent_tool_call_id !== null && !parentInTurn ? true : null,
    'subagent_context.child_session_id': r.child_session_id,
    'subagent_context.source': r.source,
    'subagent_context.agent_status': r.agent_status,
    'subagent_context.tool_status': r.tool_status,
    'subagent_context.is_async': r.is_async === 1,
    'subagent_context.total_tokens': r.total_tokens,
    'subagent_context.tool_use_count': r.tool_use_count,
    'subagent_context.duration_ms': r.duration_ms,
    'subagent_context.settled': r.settled_at !== null,
  };
  return Object.fromEntries(Object.entries(a).filter(([, v]) => v !== null)) as Record<
    string,
    string | number | boolean
  >;
}

const byCall = (spans: readonly ReceivedSpan[], id: string) =>
  spans.find((s) => s.attributes['subagent_context.tool_call_id'] === id);
const idsOf = (spans: readonly ReceivedSpan[]) => spans.map((s) => `${s.traceId}/${s.spanId}/${s.parentSpanId}`).sort();

describe.each(TARGET_FIXTURES)('OTLP export on %s, %s host schema', (target, fixture) => {
  // R3-3: on the host's real DDL the table is the host's own, with no object of ours there.
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const receiver = useOtlpReceiver();

  const exportTo = async (
    db: Queryable,
    protocol: OtlpProtocol = 'http/protobuf',
    options: Partial<ExportOptions> = {},
  ) => {
    const { url, sink } = receiverSink(receiver(), { protocol });
    try {
      return await runExport(db, sink, url, { ...OPTIONS, ...options });
    } finally {
      await sink.shutdown();
    }
  };
  const storedPosition = () => storedPositionText(t.db);

  it.each(['http/protobuf', 'http/json'] as const)(
    'R3-10: over %s the received span tree equals the rows (parents, names, attributes, times, status)',
    async (protocol) => {
      await insertRows(t.db, ROWS);
      const summary = await exportTo(t.db, protocol);
      const spans = receiver().spans;
      // the unsettled row (e) waits until it settles; the turn's root comes with the rest
      expect(spans).toHaveLength(5);
      expect(summary).toMatchObject({ turns: 1, spans: 5, requests: 1 });
      expect(receiver().requests[0]!.contentEncoding).toBe('gzip');
      const root = spans.find((s) => s.parentSpanId === '')!;
      expect(root.name).toBe('turn');
      expect(root.attributes).toEqual({
        'gen_ai.conversation.id': 's1',
        'subagent_context.task_id': 't1',
        'subagent_context.task_session_id': 's1',
        'subagent_context.turn_id': 'u1',
      });
      expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));
      expect(root.resource['service.name']).toBe('subagent-context');
      for (const row of ROWS.filter((r) => r.settled_at)) {
        const span = byCall(spans, row.tool_call_id)!;
        expect(span.attributes).toEqual(expectedAttributes(row, ROWS));
        const type = withDefaults(row).subagent_type;
        expect(span.name).toBe(type ? `invoke_agent ${type}` : 'invoke_agent');
        // R4-9: the end is the start plus duration_ms where reported, else settled_at
        const duration = withDefaults(row).duration_ms;
        expect([span.startTimeUnixNano, span.endTimeUnixNano]).toEqual([
          nanos(row.observed_at),
          duration === null ? nanos(row.settled_at!) : nanos(row.observed_at) + BigInt(duration) * 1_000_000n,
        ]);
        expect(span.kind).toBe(1); // SPAN_KIND_INTERNAL
      }
      // a nests under a's span; c's parent is not in the turn (orphan): under the turn
      expect(byCall(spans, 'a')!.parentSpanId).toBe(root.spanId);
      expect(byCall(spans, 'b')!.parentSpanId).toBe(byCall(spans, 'a')!.spanId);
      expect(byCall(spans, 'c')!.parentSpanId).toBe(root.spanId);
      // Status ERROR for a failed call, UNSET otherwise
      expect(byCall(spans, 'd')!.status).toEqual({ code: 2, message: 'tool_status error' });
      expect(byCall(spans, 'a')!.status.code).toBe(0);
      // the turn's times: the host's where it has them (this fixture's fixed start), else the rows' span
      // (a's end, T(1) + its duration_ms 48,211 ms, is past its settled_at T(49): the turn ends with it)
      if (fixture === 'minimal')
        expect([root.startTimeUnixNano, root.endTimeUnixNano]).toEqual([
          nanos(T(1)),
          nanos('2026-08-12T13:00:49.334456Z'),
        ]);
    },
  );

  it('R3-6: NULL metrics are absent attributes (never 0) and total_tokens is never gen_ai.usage.*', async () => {
    await insertRows(t.db, ROWS);
    await exportTo(t.db);
    const b = byCall(receiver().spans, 'b')!;
    for (const metric of ['total_tokens', 'tool_use_count', 'duration_ms'])
      expect(b.attributes).not.toHaveProperty(`subagent_context.${metric}`);
    expect(byCall(receiver().spans, 'a')!.attributes['subagent_context.tool_use_count']).toBe(0); // a reported 0 stays 0
    expect(
      receiver()
        .spans.flatMap((s) => Object.keys(s.attributes))
        .filter((k) => k.startsWith('gen_ai.usage.')),
    ).toEqual([]);
    // 'unknown' is never an execution id
    expect(byCall(receiver().spans, 'd')!.attributes).not.toHaveProperty('subagent_context.agent_execution_id');
  });

  it('R3-10: exporting twice yields the same trace and span ids, on either protocol', async () => {
    await insertRows(t.db, ROWS);
    await exportTo(t.db, 'http/protobuf', { position: 'none' });
    const first = idsOf(receiver().spans);
    // not only equal to each other: the documented derivation, computed outside the code (test/support/otlp-ids.ts)
    expect(first).toContain(`${FIXED_IDS.trace_s1_u1}/${FIXED_IDS.turn_s1_u1}/`);
    expect(first).toContain(`${FIXED_IDS.trace_s1_u1}/${FIXED_IDS.row_s1_e1_a}/${FIXED_IDS.turn_s1_u1}`);
    receiver().spans.length = 0;
    await exportTo(t.db, 'http/json', { position: 'none' });
    expect(idsOf(receiver().spans)).toEqual(first);
  });

  it('R3-10: a 503 then a 200 loses nothing, and the position moves', async () => {
    await insertRows(t.db, ROWS);
    receiver().respond(503);
    const summary = await exportTo(t.db);
    expect(receiver().requests.map((r) => r.answered)).toEqual([503, 200]);
    expect(receiver().spans).toHaveLength(5);
    expect(summary.position.after).not.toBeNull();
    expect(await storedPosition()).toBe(summary.position.after);
  });

  it('R3-10: a 400 stops the export with a message naming the endpoint (no credentials), and the position stays', async () => {
    await insertRows(t.db, ROWS);
    await insertRows(t.db, [
      { tool_call_id: 'x', turn_id: 'u2', observed_at: T(50), settled_at: T(51), updated_at: T(59) },
    ]);
    // first batch (turn u1) accepted, the second refused
    receiver().respond(200, 400);
    const target = resolveOtlpTarget(
      { url: receiver().origin.replace('http://', 'http://user:s3cret@'), headers: ['authorization=Bearer tok-123'] },
      {},
    );
    const sink = createOtlpSink(target, { timeoutMillis: 10_000, retries: 3, backoffMillis: 10 });
    const error = await runExport(t.db, sink, target.url, { ...OPTIONS, batchSpans: 5 }).catch((e: unknown) => e);
    await sink.shutdown();
    expect(error).toBeInstanceOf(OtlpExportError);
    const message = (error as Error).message;
    expect(message).toContain(`${receiver().origin.replace('http://', 'http://***@')}/v1/traces`);
    expect(message).toContain('HTTP 400: invalid span: trace_id');
    expect(message).not.toMatch(/s3cret|tok-123/);
    expect(receiver().requests.map((r) => r.answered)).toEqual([200, 400]); // a 4xx is never retried
    expect(receiver().requests[0]!.headers.authorization).toBe('Bearer tok-123');
    // the position is the accepted batch's end (u1), not past the refused one (u2)
    expect(JSON.parse((await storedPosition())!)).toMatchObject({ turn_key: 'u1' });
    receiver().spans.length = 0;
    await exportTo(t.db);
    expect(receiver().spans.map((s) => s.attributes['subagent_context.turn_id'])).toEqual(['u2', 'u2']);
  });

  it('R3-10: a run whose position another export moved meanwhile stops and never puts it back', async () => {
    await insertRows(t.db, ROWS);
    await insertRows(t.db, [
      { tool_call_id: 'x', turn_id: 'u2', observed_at: T(50), settled_at: T(51), updated_at: T(59) },
    ]);
    const other = JSON.stringify({ changed: '2030-01-01T00:00:00.000000Z', task_session_id: 's1', turn_key: 'zz' });
    const { url, sink: real } = receiverSink(receiver(), { protocol: 'http/protobuf' });
    // While this run's first batch is in flight, another run (same key) moves the position.
    const sink = {
      send: async (spans: Parameters<typeof real.send>[0]) => {
        const result = await real.send(spans);
        await t.db.query(
          'INSERT INTO kandev_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
          [POSITION_KEY, other],
        );
        return result;
      },
      shutdown: () => real.shutdown(),
    };
    const error = await runExport(t.db, sink, url, { ...OPTIONS, batchSpans: 5 }).catch((e: unknown) => e);
    await sink.shutdown();
    expect(error).toBeInstanceOf(PositionError);
    expect((error as Error).message).toContain(
      `another export moved the position under kandev_meta key ${POSITION_KEY}`,
    );
    expect(await storedPosition()).toBe(other);
  });

  it('R3-10: a resumed export sends only turns changed since its position; a turn gaining a settled row is sent again with the same ids', async () => {
    await insertRows(t.db, ROWS);
    await exportTo(t.db);
    const first = idsOf(receiver().spans);
    receiver().spans.length = 0;
    expect((await exportTo(t.db)).spans).toBe(0);
    // e settles (as our writer or the host's would: updated_at moves on)
    const d = t.db.dialect;
    await t.db.query(
      `UPDATE task_session_subagents SET settled_at = ${d.timestampParam(1)}, updated_at = ${d.timestampParam(2)}, tool_status = 'complete' WHERE tool_call_id = 'e'`,
      [d.encodeTimestamp(parseRfc3339(T(58))!), d.encodeTimestamp(parseRfc3339(T(59))!)],
    );
    await exportTo(t.db);
    expect(receiver().spans).toHaveLength(6);
    expect(idsOf(receiver().spans).filter((id) => first.includes(id))).toEqual(first);
    expect(byCall(receiver().spans, 'e')!.endTimeUnixNano).toBe(nanos(T(58)));
  });

  it('R3-1, R3-10: a frame delivered late (updated_at behind the position, within the lookback) is exported on the next run', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2), updated_at: T(2) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(3), updated_at: T(30) },
    ]);
    await exportTo(t.db); // position: u2 at T(30); b not settled yet, so only a (and u1's root) went out
    expect(byCall(receiver().spans, 'b')).toBeUndefined();
    // b's settling frame, observed at T(20), is delivered now: under R3-1 updated_at stays T(30)…
    const d = t.db.dialect;
    await t.db.query(
      `UPDATE task_session_subagents SET settled_at = ${d.timestampParam(1)}, tool_status = 'complete' WHERE tool_call_id = 'b'`,
      [d.encodeTimestamp(parseRfc3339(T(20))!)],
    );
    receiver().spans.length = 0;
    await exportTo(t.db); // …so without a lookback the turn stays behind the position
    expect(byCall(receiver().spans, 'b')).toBeUndefined();
    await exportTo(t.db, 'http/protobuf', { lookbackSeconds: 900 });
    expect(byCall(receiver().spans, 'b')!.endTimeUnixNano).toBe(nanos(T(20)));
  });

  it('R3-10: --open-spans sends a row not settled yet as a zero-length span marked settled=false', async () => {
    await insertRows(t.db, ROWS);
    await exportTo(t.db, 'http/protobuf', { openSpans: true });
    const e = byCall(receiver().spans, 'e')!;
    expect(e.attributes['subagent_context.settled']).toBe(false);
    expect(e.endTimeUnixNano).toBe(e.startTimeUnixNano);
  });

  it('R3-10: a big turn goes in bounded batches, each at most batchSpans spans', async () => {
    await insertRows(
      t.db,
      Array.from({ length: 12 }, (_, i) => ({ tool_call_id: `c${i}`, observed_at: T(i + 1), settled_at: T(i + 2) })),
    );
    const summary = await exportTo(t.db, 'http/json', { batchSpans: 5 });
    expect(receiver().requests.map((r) => r.spans.length)).toEqual([5, 5, 3]);
    expect(summary.spans).toBe(13);
  });
});
