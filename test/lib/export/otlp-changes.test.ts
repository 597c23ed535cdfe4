import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { type OtlpProtocol, resolveOtlpTarget } from '../../../lib/export/otlp/config.js';
import { createOtlpSink, OtlpExportError, type RetryNotice } from '../../../lib/export/otlp/transport.js';
import { type ExportOptions, runExport } from '../../../lib/export/run.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../../../local/otlp-receiver.js';
import { exportOptions, receiverSink, storedPositionText, useOtlpReceiver } from '../../support/otlp-harness.js';
import { insertRows, type StoredRow, setStoredTime } from '../../support/subagent-rows.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

/*
 * R4-8 (the export sends each change once) against the real local receiver, on every target and
 * both host fixtures: idle reruns, a changed row, partial success, and where the position stands
 * when a run stops.
 */

const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.123456Z`;

/** The default lookback (900 s): every turn below is inside it on every rerun. */
const OPTIONS = exportOptions(900);

/** Three turns, each a parent and a child, all settled. */
const THREE_TURNS: StoredRow[] = ['u1', 'u2', 'u3'].flatMap((turn, i) => [
  {
    tool_call_id: `${turn}-a`,
    turn_id: turn,
    model: 'claude-opus-5',
    observed_at: T(i * 10 + 1),
    settled_at: T(i * 10 + 2),
  },
  {
    tool_call_id: `${turn}-b`,
    turn_id: turn,
    parent_tool_call_id: `${turn}-a`,
    observed_at: T(i * 10 + 3),
    settled_at: T(i * 10 + 4),
  },
]);

const turnsOf = (spans: readonly ReceivedSpan[]) =>
  [...new Set(spans.map((s) => String(s.attributes['subagent_context.turn_id'])))].sort();
const ids = (spans: readonly ReceivedSpan[]) => spans.map((s) => `${s.traceId}/${s.spanId}`).sort();

describe.each(TARGET_FIXTURES)('R4-8 change detection on %s, %s host schema', (target, fixture) => {
  const t = useTestDatabase(target, { fixture, subagentTable: fixture !== 'host' });
  const receiver = useOtlpReceiver();

  const exportTo = async (
    db: Queryable,
    options: Partial<ExportOptions> = {},
    protocol: OtlpProtocol = 'http/protobuf',
    onRetry?: (n: RetryNotice) => void,
  ) => {
    const { url, sink } = receiverSink(receiver(), { protocol, retries: 2, onRetry });
    return runExport(db, sink, url, { ...OPTIONS, ...options });
  };
  const stored = () => storedPositionText(t.db);
  const setColumn = async (toolCallId: string, column: string, value: unknown) =>
    t.db.query(`UPDATE task_session_subagents SET ${column} = $1 WHERE tool_call_id = $2`, [value, toolCallId]);
  const setTime = (toolCallId: string, column: string, text: string) => setStoredTime(t.db, toolCallId, column, text);

  it('R4-8: five reruns on an idle store send 0 spans after the first and leave the position as it was', async () => {
    await insertRows(t.db, THREE_TURNS);
    const first = await exportTo(t.db);
    expect(first).toMatchObject({ turns: 3, new: 3, re_sent: 0, spans: 9, requests: 1 });
    const position = await stored();
    for (let run = 0; run < 5; run++) {
      const again = await exportTo(t.db);
      expect(again).toMatchObject({ turns: 0, new: 0, re_sent: 0, unchanged: 3, spans: 0, requests: 0 });
      expect(await stored()).toBe(position); // nothing written either
    }
    expect(receiver().requests).toHaveLength(1);
  });

  it('R4-8: changing one row (the host moving updated_at) re-sends exactly its turn, with the same ids', async () => {
    await insertRows(t.db, THREE_TURNS);
    await exportTo(t.db);
    const u2 = ids(
      receiver().spans.filter(
        (s) => s.traceId === receiver().spans.find((x) => x.attributes['subagent_context.turn_id'] === 'u2')!.traceId,
      ),
    );
    receiver().spans.length = 0;
    await setColumn('u2-b', 'total_tokens', 777);
    await setTime('u2-b', 'updated_at', T(40));
    const summary = await exportTo(t.db);
    expect(summary).toMatchObject({ turns: 1, new: 0, re_sent: 1, unchanged: 2, spans: 3 });
    expect(turnsOf(receiver().spans)).toEqual(['u2']);
    expect(ids(receiver().spans)).toEqual(u2);
    expect(
      receiver().spans.find((s) => s.attributes['subagent_context.tool_call_id'] === 'u2-b')!.attributes,
    ).toMatchObject({
      'subagent_context.total_tokens': 777,
    });
    expect((await exportTo(t.db)).spans).toBe(0); // and then it is quiet again
  });

  it('R4-8, R3-1: a late frame that only fills a NULL (updated_at unchanged) is re-sent within the lookback, once', async () => {
    await insertRows(t.db, THREE_TURNS);
    await exportTo(t.db);
    receiver().spans.length = 0;
    await setColumn('u1-a', 'tool_use_count', 4);
    const summary = await exportTo(t.db);
    expect(summary).toMatchObject({ turns: 1, re_sent: 1, new: 0, spans: 3 });
    expect(turnsOf(receiver().spans)).toEqual(['u1']);
    expect((await exportTo(t.db)).spans).toBe(0);
  });

  it('R4-8: a lookback window longer than one listing (20 pages of turns) is checked whole', async () => {
    // 25 turns, one per second; pages of 1 turn, so one listing holds 20 of them
    await insertRows(
      t.db,
      Array.from({ length: 25 }, (_, i) => ({
        tool_call_id: `c${i}`,
        turn_id: `u${String(i).padStart(2, '0')}`,
        observed_at: T(i + 1),
        settled_at: T(i + 1),
      })),
    );
    expect(await exportTo(t.db, { pageTurns: 1 })).toMatchObject({ new: 25 });
    receiver().spans.length = 0;
    await setColumn('c22', 'tool_use_count', 1); // a late frame filling a NULL: updated_at stays
    expect(await exportTo(t.db, { pageTurns: 1 })).toMatchObject({ re_sent: 1, unchanged: 24, spans: 2 });
    expect(turnsOf(receiver().spans)).toEqual(['u22']);
  });

  it('R4-8: a new turn counts as new, the turns already sent are not sent again', async () => {
    await insertRows(t.db, THREE_TURNS);
    await exportTo(t.db);
    receiver().spans.length = 0;
    await insertRows(t.db, [{ tool_call_id: 'n', turn_id: 'u4', observed_at: T(50), settled_at: T(51) }]);
    expect(await exportTo(t.db)).toMatchObject({ turns: 1, new: 1, re_sent: 0, unchanged: 3, spans: 2 });
    expect(turnsOf(receiver().spans)).toEqual(['u4']);
  });

  it('R4-8: a row settling later sends its turn again (re-sent), now with the row', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'b', parent_tool_call_id: 'a', observed_at: T(3) },
    ]);
    expect(await exportTo(t.db)).toMatchObject({ new: 1, spans: 2 });
    receiver().spans.length = 0;
    await setTime('b', 'settled_at', T(9));
    await setTime('b', 'updated_at', T(9));
    expect(await exportTo(t.db)).toMatchObject({ new: 0, re_sent: 1, spans: 3 });
  });

  it('R4-8: --restart sends everything again and counts it as re-sent', async () => {
    await insertRows(t.db, THREE_TURNS);
    await exportTo(t.db);
    expect(await exportTo(t.db, { position: 'restart' })).toMatchObject({ turns: 3, new: 0, re_sent: 3, spans: 9 });
  });

  it.each(['http/protobuf', 'http/json'] as const)(
    'R4-8: a partialSuccess answer over %s is counted with its message; the position moves past it and records it',
    async (protocol) => {
      await insertRows(t.db, THREE_TURNS);
      // the first batch (u1, u2) is answered with 3 rejected spans, the second (u3) accepted
      receiver().respond({ partialSuccess: { rejectedSpans: 3, errorMessage: 'span too old: \u001b[2J' } });
      const summary = await exportTo(t.db, { batchSpans: 6 }, protocol);
      expect(receiver().requests.map((r) => [r.spans.length, r.rejected])).toEqual([
        [6, 3],
        [3, 0],
      ]);
      expect(summary).toMatchObject({
        rejected_spans: 3,
        rejected_message: 'span too old: \\x1B[2J', // terminal-safe (R4-2)
        spans: 9,
      });
      const position = JSON.parse((await stored())!);
      expect(position).toMatchObject({ turn_key: 'u3', rejected: { spans: 3, message: 'span too old: \\x1B[2J' } });
      // OTLP: a partial success is never retried; the next run sends nothing and keeps the record
      receiver().requests.length = 0;
      expect(await exportTo(t.db)).toMatchObject({ spans: 0, rejected_spans: 0 });
      expect(receiver().requests).toHaveLength(0);
      expect(JSON.parse((await stored())!).rejected.spans).toBe(3);
    },
  );

  it('R4-9: a 400 after accepted batches says where the position stands, not that it was not moved', async () => {
    await insertRows(t.db, THREE_TURNS);
    receiver().respond(200, 400);
    const error = await exportTo(t.db, { batchSpans: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OtlpExportError);
    const message = (error as Error).message;
    expect(message).toContain('refused the batch with HTTP 400: invalid span: trace_id');
    expect(message).toContain('Earlier batches of this run were accepted: the position stands after the last of them');
    expect(message).toContain('"turn_key":"u1"');
    expect(message).not.toContain('not moved');
    expect(JSON.parse((await stored())!)).toMatchObject({ turn_key: 'u1' });
  });

  it('R4-9: a 400 on the first batch says nothing was lost and the position was not moved', async () => {
    await insertRows(t.db, THREE_TURNS);
    receiver().respond(400);
    const error = await exportTo(t.db).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /HTTP 400: invalid span: trace_id; .*\. Nothing was lost: the export position was not moved$/,
    );
    expect(await stored()).toBeUndefined();
  });

  it('R4-9: a persistent 503 is retried, each retry told as it happens, and the failure names the last status', async () => {
    await insertRows(t.db, THREE_TURNS);
    receiver().respond(503, 503, { status: 429, retryAfter: '0' });
    const notices: RetryNotice[] = [];
    const error = await exportTo(t.db, {}, 'http/protobuf', (n) => notices.push(n)).catch((e: unknown) => e);
    expect(notices).toEqual([
      { attempt: 1, attempts: 3, reason: 'HTTP 503', waitMillis: 10 },
      { attempt: 2, attempts: 3, reason: 'HTTP 503', waitMillis: 20 },
    ]);
    expect(error).toBeInstanceOf(OtlpExportError);
    expect((error as OtlpExportError).status).toBe(429);
    expect((error as Error).message).toContain(
      'did not accept the batch after 3 attempt(s) (last: HTTP 429: unavailable)',
    );
  });
});
