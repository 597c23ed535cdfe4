import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveOtlpTarget } from '../../../lib/export/otlp/config.js';
import { createOtlpSink, OtlpExportError, type SpanSink } from '../../../lib/export/otlp/transport.js';
import { POSITION_KEY, PositionError } from '../../../lib/export/position.js';
import { type ExportOptions, runExport } from '../../../lib/export/run.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../../local/otlp-receiver.js';
import { exportOptions, receiverSink, storedPositionText, useOtlpReceiver } from '../../support/otlp-harness.js';
import { FIXED_IDS } from '../../support/otlp-ids.js';
import { insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/*
 * The export's edges that a plausible bug moves (issue 30, items 7-13): the position written only
 * after the collector accepted, listings that resume, compare-and-set on an existing position, the
 * transport's doubling back-off, ids that are the documented derivation, error statuses, and the
 * root span's times from the host's turn. Through runExport and a real OTLP/HTTP receiver.
 */

const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.123456Z`;
const nanos = (text: string) => parseRfc3339(text)! * 1000n;

const OPTIONS = exportOptions(0);

describe.each(TARGET_FIXTURES)('OTLP export edges on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const receiver = useOtlpReceiver();

  const sinkFor = (options: { retries?: number; backoffMillis?: number } = {}) =>
    receiverSink(receiver(), { protocol: 'http/protobuf', ...options });
  const exportWith = async (options: Partial<ExportOptions>, wrap?: (sink: SpanSink) => SpanSink) => {
    const { url, sink } = sinkFor();
    try {
      return await runExport(t.db, wrap ? wrap(sink) : sink, url, { ...OPTIONS, ...options });
    } finally {
      await sink.shutdown();
    }
  };
  const storedPosition = () => storedPositionText(t.db);
  const setPosition = (value: string) =>
    t.db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [POSITION_KEY, value]);

  it('R3-10: a 400 on the first of two batches of one page leaves no position (it moves only after an accepted batch)', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2), updated_at: T(10) },
      { tool_call_id: 'b', turn_id: 'u1', observed_at: T(3), settled_at: T(4), updated_at: T(10) },
      { tool_call_id: 'c', turn_id: 'u2', observed_at: T(5), settled_at: T(6), updated_at: T(20) },
    ]);
    receiver().respond(400);
    // u1 is 3 spans (root and two rows), u2 is 2: a batch of 3 holds one turn each
    const error = await exportWith({ batchSpans: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OtlpExportError);
    expect(receiver().requests.map((r) => r.answered)).toEqual([400]);
    expect(await storedPosition()).toBeUndefined();
  });

  it('R3-10: 45 turns read one per page are each sent exactly once (every key listing resumes after the last)', async () => {
    const turns = 45;
    await insertRows(
      t.db,
      Array.from(
        { length: turns },
        (_, i): StoredRow => ({
          tool_call_id: `c${i}`,
          turn_id: `u${String(i).padStart(2, '0')}`,
          observed_at: T(1),
          settled_at: T(2),
          updated_at: `2026-08-12T14:${String(i).padStart(2, '0')}:00.000000Z`,
        }),
      ),
    );
    let pages = 0;
    // a bound, so a listing that starts over ends the test instead of looping forever
    const summary = await exportWith({ pageTurns: 1, keepGoing: () => ++pages <= 3 * turns });
    expect(summary).toMatchObject({ complete: true, turns, spans: 2 * turns });
    const roots = receiver().spans.filter((s) => s.parentSpanId === '');
    const sent = roots.map((s) => s.attributes['subagent_context.turn_id']).sort();
    expect(sent).toEqual(Array.from({ length: turns }, (_, i) => `u${String(i).padStart(2, '0')}`));
  }, 180_000); // 45 pages of reads, sends and position moves: seconds, more on a loaded machine's PGlite

  it('R3-10: moving a stored position is a compare-and-set too: a run whose position another export updated meanwhile stops, and the other value stands', async () => {
    const start = JSON.stringify({ changed: '2026-01-01T00:00:00.000000000Z', task_session_id: '', turn_key: '' });
    await setPosition(start);
    await insertRows(t.db, [
      { tool_call_id: 'a', turn_id: 'u1', observed_at: T(1), settled_at: T(2), updated_at: T(10) },
      { tool_call_id: 'b', turn_id: 'u2', observed_at: T(3), settled_at: T(4), updated_at: T(20) },
    ]);
    const other = JSON.stringify({ changed: '2030-01-01T00:00:00.000000000Z', task_session_id: 's9', turn_key: 'zz' });
    const error = await exportWith({ batchSpans: 2 }, (real) => ({
      send: async (spans) => {
        const result = await real.send(spans);
        await t.db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [other, POSITION_KEY]);
        return result;
      },
      shutdown: () => real.shutdown(),
    })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PositionError);
    expect(await storedPosition()).toBe(other);
  });

  it('R3-10: a request failing with HTTP 500 is sent again after pauses that double (200, 400, 800 ms: at least 1.35 s for four attempts)', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver().respond(500, 500, 500, 500);
    const { url, sink } = sinkFor({ retries: 3, backoffMillis: 200 });
    const started = performance.now();
    const error = await runExport(t.db, sink, url, { ...OPTIONS, position: 'none' }).catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    await sink.shutdown();
    expect(error).toBeInstanceOf(OtlpExportError);
    expect((error as OtlpExportError).retryable).toBe(true);
    expect(receiver().requests.map((r) => r.answered)).toEqual([500, 500, 500, 500]);
    // a lower bound only: a loaded machine may take longer, never less (constant pauses: 0.6 s; ×1.5: 0.95 s)
    expect(elapsed).toBeGreaterThanOrEqual(1350);
  });

  it('R3-10: HTTP 429 is retried like a 5xx, never a refusal like another 4xx: 429 then 200 sends the batch', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver().respond(429);
    const summary = await exportWith({});
    expect(receiver().requests.map((r) => r.answered)).toEqual([429, 200]);
    expect(summary.spans).toBe(2);
    expect(await storedPosition()).toBeDefined();
  });

  it('R3-10: trace and span ids are the documented derivation of the identity (fixed values computed outside the code)', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    await exportWith({ position: 'none' });
    const root = receiver().spans.find((s) => s.parentSpanId === '')!;
    const row = receiver().spans.find((s) => s.attributes['subagent_context.tool_call_id'] === 'a')!;
    expect([root.traceId, root.spanId]).toEqual([FIXED_IDS.trace_s1_u1, FIXED_IDS.turn_s1_u1]);
    expect([row.traceId, row.spanId, row.parentSpanId]).toEqual([
      FIXED_IDS.trace_s1_u1,
      FIXED_IDS.row_s1_e1_a,
      FIXED_IDS.turn_s1_u1,
    ]);
  });

  it('R3-10: error, failed and cancelled in tool_status or agent_status make the span ERROR (column and value in its message); others UNSET', async () => {
    const cases: [string, 'tool_status' | 'agent_status', string, { code: number; message: string }][] = [];
    for (const column of ['tool_status', 'agent_status'] as const) {
      for (const value of ['error', 'failed', 'cancelled'])
        cases.push([`${column}-${value}`, column, value, { code: 2, message: `${column} ${value}` }]);
      cases.push([`${column}-completed`, column, 'completed', { code: 0, message: '' }]);
    }
    await insertRows(
      t.db,
      cases.map(([id, column, value], i) => ({
        tool_call_id: id,
        [column]: value,
        observed_at: T(i),
        settled_at: T(30),
      })),
    );
    await exportWith({ position: 'none' });
    const statuses = Object.fromEntries(
      receiver()
        .spans.filter((s) => s.parentSpanId !== '')
        .map((s) => [
          s.attributes['subagent_context.tool_call_id'],
          { code: s.status.code, message: s.status.message },
        ]),
    );
    expect(statuses).toEqual(Object.fromEntries(cases.map(([id, , , status]) => [id, status])));
  });

  it("R3-10: the turn's root span starts and ends at the host's task_session_turns.started_at/completed_at where the host has them, else at its rows' span", async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1), settled_at: T(9) },
      { tool_call_id: 'b', observed_at: T(2), settled_at: T(49) },
    ]);
    if (fixture === 'host') {
      const d = t.db.dialect;
      await t.db.query(
        `UPDATE task_session_turns SET started_at = ${d.timestampParam(1)}, completed_at = ${d.timestampParam(2)} WHERE id = 'u1'`,
        [
          d.encodeTimestamp(parseRfc3339('2026-08-12T12:59:00.5Z')!),
          d.encodeTimestamp(parseRfc3339('2026-08-12T13:10:00Z')!),
        ],
      );
    }
    await exportWith({ position: 'none' });
    const root = receiver().spans.find((s) => s.parentSpanId === '')!;
    expect([root.startTimeUnixNano, root.endTimeUnixNano]).toEqual(
      fixture === 'host'
        ? [nanos('2026-08-12T12:59:00.5Z'), nanos('2026-08-12T13:10:00Z')]
        : [nanos(T(1)), nanos(T(49))],
    );
  });
});
