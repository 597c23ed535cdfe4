import { describe, expect, it } from 'vitest';
import { OtlpExportError } from '../../../lib/export/otlp/transport.js';
import { type ExportOptions, runExport } from '../../../lib/export/run.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { exportOptions, receiverSink, storedPositionText, useOtlpReceiver } from '../../support/otlp-harness.js';
import { insertRows, type StoredRow, setStoredTime } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * lib/export/run.ts's own rules (docs/otlp.md), each moved by a plausible bug the mutation run of
 * issue 30 found no test for: the position's (changed, session, turn) order on ties, the lookback
 * and settle lag as given, whole batches, a turn with nothing to send, an idle run that writes
 * nothing, keepGoing, and what a refusal says and carries. Through runExport and the real receiver.
 */

const T = (seconds: number) => `2026-08-12T13:00:${String(seconds).padStart(2, '0')}.123456Z`;

const row = (session: string, turn: string, updated: number, extra: Partial<StoredRow> = {}): StoredRow => ({
  task_session_id: session,
  tool_call_id: `${session}-${turn}-${updated}`,
  turn_id: turn,
  observed_at: T(1),
  settled_at: T(2),
  updated_at: T(updated),
  ...extra,
});

describe.each(TARGETS)('runExport rules on %s', (target) => {
  const t = useTestDatabase(target);
  const receiver = useOtlpReceiver();

  const exportTo = async (options: Partial<ExportOptions> = {}) => {
    const { url, sink } = receiverSink(receiver(), { retries: 0 });
    try {
      return await runExport(t.db, sink, url, { ...exportOptions(900), ...options });
    } finally {
      await sink.shutdown();
    }
  };
  const stored = async () => {
    const text = await storedPositionText(t.db);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };

  // Listed in (changed, session, turn) order, one turn a page: the point is the last of them.
  it.each([
    ['the same change time in two sessions', [row('s1', 'u2', 5), row('s2', 'u1', 5)], ['s2', 'u1']],
    ['the same change time in one session', [row('s1', 'u1', 5), row('s1', 'u2', 5)], ['s1', 'u2']],
    ['a later change in an earlier session', [row('s2', 'u1', 5), row('s1', 'u1', 7)], ['s1', 'u1']],
  ] as const)(
    'R3-10: with %s the position is the last turn in (changed, session, turn) order; --restart counts every turn re-sent',
    async (_label, rows, [session, turn]) => {
      await insertRows(t.db, [...rows]);
      expect(await exportTo({ pageTurns: 1 })).toMatchObject({ turns: 2, new: 2, restart: false });
      expect(await stored()).toMatchObject({ task_session_id: session, turn_key: turn });
      // every turn is at or behind the old point: sent before, so re-sent, never new (R4-8)
      expect(await exportTo({ pageTurns: 1, position: 'restart' })).toMatchObject({
        turns: 2,
        new: 0,
        re_sent: 2,
        restart: true,
      });
    },
  );

  it('R3-10: the point never moves back: a rerun whose newest turn is gone keeps it (and writes nothing)', async () => {
    await insertRows(t.db, [row('s1', 'u1', 5), row('s1', 'u2', 7)]);
    await exportTo();
    await t.db.query("DELETE FROM task_session_subagents WHERE turn_id = 'u2'");
    expect(await exportTo()).toMatchObject({ spans: 0, unchanged: 1 });
    expect(await stored()).toMatchObject({ turn_key: 'u2' });
  });

  it('R4-8: the lookback is the one given: a change 10 s behind the point is re-read with 15 s, not with 5 s', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1), row('s1', 'u2', 20)]);
    await exportTo({ lookbackSeconds: 5 });
    await t.db.query("UPDATE task_session_subagents SET total_tokens = 7 WHERE turn_id = 'u1'");
    await setStoredTime(t.db, 's1-u1-1', 'updated_at', T(10));
    expect(await exportTo({ lookbackSeconds: 5 })).toMatchObject({ spans: 0 });
    expect(await exportTo({ lookbackSeconds: 15 })).toMatchObject({ turns: 1, re_sent: 1 });
  });

  it('R3-10: a turn changed less than the settle lag before now is not read yet; one changed longer ago is', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1)]);
    const now = () => parseRfc3339(T(31))!;
    expect(await exportTo({ now, settleSeconds: 60, position: 'none' })).toMatchObject({ turns: 0, spans: 0 });
    expect(receiver().requests).toHaveLength(0);
    expect(await exportTo({ now, settleSeconds: 20, position: 'none' })).toMatchObject({ turns: 1, spans: 2 });
  });

  it('R3-10: spans that exactly fill their batches go in that many requests, no empty one after', async () => {
    // one turn of one row: its root and the row, 2 spans
    await insertRows(t.db, [row('s1', 'u1', 1)]);
    expect(await exportTo({ batchSpans: 2 })).toMatchObject({ spans: 2, requests: 1 });
    expect(receiver().requests.map((r) => r.spans.length)).toEqual([2]);
  });

  it('R4-8: a turn with nothing to send (not settled, no --open-spans) counts as neither new nor unchanged; once settled it is new', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1, { settled_at: null })]);
    const counts = { turns: 0, new: 0, re_sent: 0, unchanged: 0, spans: 0 };
    expect(await exportTo()).toMatchObject(counts);
    expect(await exportTo()).toMatchObject(counts);
    await setStoredTime(t.db, 's1-u1-1', 'settled_at', T(2));
    expect(await exportTo()).toMatchObject({ turns: 1, new: 1, re_sent: 0, unchanged: 0, spans: 2 });
  });

  it('R4-8: an idle rerun writes nothing: with every write to kandev_meta refused by a trigger it still succeeds', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1), row('s1', 'u2', 3)]);
    await exportTo();
    if (target === 'sqlite') {
      await t.db.query(
        "CREATE TRIGGER meta_read_only BEFORE UPDATE ON kandev_meta BEGIN SELECT RAISE(ABORT, 'kandev_meta is read-only'); END",
      );
    } else {
      await t.db.query(
        "CREATE FUNCTION meta_read_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'kandev_meta is read-only'; END $$",
      );
      await t.db.query(
        'CREATE TRIGGER meta_read_only BEFORE UPDATE ON kandev_meta FOR EACH ROW EXECUTE FUNCTION meta_read_only()',
      );
    }
    expect(await exportTo()).toMatchObject({ spans: 0, unchanged: 2 });
    // the trigger is real: a run that has something to write fails on it
    await insertRows(t.db, [row('s1', 'u3', 5)]);
    await expect(exportTo()).rejects.toThrow(/read-only/);
  });

  it('R3-10: keepGoing false before the first page: nothing is read or sent, the run says it is not complete', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1)]);
    expect(await exportTo({ keepGoing: () => false })).toMatchObject({ complete: false, turns: 0, spans: 0 });
    expect(receiver().requests).toHaveLength(0);
    expect(await stored()).toBeUndefined();
  });

  // a timestamp the host's table can hold that is not an instant (R4-3), per dialect
  const odd = target === 'sqlite' ? 'garbage' : '-infinity';
  const setOdd = (column: string) =>
    t.db.query(`UPDATE task_session_subagents SET ${column} = ${target === 'sqlite' ? '$1' : '$1::timestamp'}`, [odd]);

  it('R4-3: a turn with no turn id whose time cannot be read is skipped and named with turn_id null', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1, { turn_id: null })]);
    await setOdd('observed_at');
    expect(await exportTo()).toMatchObject({
      turns: 0,
      skipped: [{ task_session_id: 's1', turn_id: null, reason: expect.stringMatching(/^observed_at unreadable/) }],
    });
  });

  it('R4-3: a turn with an unreadable observed_at, settled_at and updated_at, each in another row, is sent and each is counted', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1), row('s1', 'u1', 2), row('s1', 'u1', 3), row('s1', 'u1', 4)]);
    const cast = target === 'sqlite' ? '$1' : '$1::timestamp';
    for (const [column, id] of [
      ['observed_at', 's1-u1-1'],
      ['settled_at', 's1-u1-2'],
      ['updated_at', 's1-u1-3'],
    ])
      await t.db.query(`UPDATE task_session_subagents SET ${column} = ${cast} WHERE tool_call_id = $2`, [odd, id]);
    const summary = await exportTo({ position: 'none' });
    expect(summary).toMatchObject({ turns: 1, skipped: [] });
    expect(summary.unreadable).toEqual({ observed_at: 1, settled_at: 1, updated_at: 1 });
  });

  it('R4-3: summary.unreadable names exactly the columns that held unreadable values, each with its count', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1), row('s1', 'u2', 3)]);
    await setOdd('updated_at');
    // the listing places the turns by their observed_at; only updated_at is named, never settled_at: 0
    expect((await exportTo({ position: 'none', settleSeconds: 60 })).unreadable).toEqual({ updated_at: 2 });
  });

  it.each([
    ['resume', /Nothing was lost: the export position was not moved$/],
    ['none', /No position is kept by this run \(--no-position or a one-off export\): run it again once fixed$/],
  ] as const)(
    'R4-9: a refusal with position %s says where the position stands, is not retryable and keeps its cause',
    async (position, said) => {
      await insertRows(t.db, [row('s1', 'u1', 1)]);
      receiver().respond(400);
      const error = await exportTo({ position }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OtlpExportError);
      expect((error as OtlpExportError).message).toMatch(said);
      expect((error as OtlpExportError).retryable).toBe(false);
      expect((error as OtlpExportError).status).toBe(400);
      expect((error as Error).cause).toBeInstanceOf(OtlpExportError);
    },
  );

  it.each([
    ['resume', /Nothing was lost: the export position was not moved; run again later to resume from it$/],
    ['none', /No position is kept by this run \(--no-position or a one-off export\): run it again later$/],
  ] as const)(
    'R4-9 (issue 48): a collector that stays unavailable with position %s is retryable and says where the position stands; no position, no "resumes"',
    async (position, said) => {
      await insertRows(t.db, [row('s1', 'u1', 1)]);
      receiver().respond(503);
      const error = await exportTo({ position }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OtlpExportError);
      expect((error as OtlpExportError).message).toMatch(said);
      if (position === 'none') expect((error as Error).message).not.toMatch(/resume/);
      expect((error as OtlpExportError).retryable).toBe(true);
      expect((error as OtlpExportError).status).toBe(503);
    },
  );

  it.each([
    [400, 'fix the cause and run again'],
    [503, 'run again later'],
  ] as const)(
    'R4-9: HTTP %i after an accepted batch says the position stands after that batch and what to do: "%s to resume from there"',
    async (status, again) => {
      // two turns of two spans each, one a request: the first accepted, the second failing
      await insertRows(t.db, [row('s1', 'u1', 1), row('s1', 'u2', 2)]);
      receiver().respond(200, status);
      const error = (await exportTo({ batchSpans: 2 }).catch((e: unknown) => e)) as OtlpExportError;
      expect(error).toBeInstanceOf(OtlpExportError);
      expect(error.message).toMatch(
        new RegExp(
          `Earlier batches of this run were accepted: the position stands after the last of them \\(.*"turn_key":"u1"\\}\\); ${again} to resume from there$`,
        ),
      );
      expect(await stored()).toMatchObject({ turn_key: 'u1' });
    },
  );

  it('R4-8 (issue 48): a 2xx answer that cannot be read stops the run before its batch: counted unknown, not complete, the position after the last accepted batch; the rerun sends that batch', async () => {
    await insertRows(t.db, [row('s1', 'u1', 1), row('s1', 'u2', 2), row('s1', 'u3', 3)]);
    receiver().respond(200, { status: 200, body: 'not an OTLP answer' });
    expect(await exportTo({ batchSpans: 2 })).toMatchObject({
      requests: 2,
      spans: 2,
      unknown_spans: 2,
      unknown_reason: expect.stringMatching(/is not an OTLP ExportTraceServiceResponse$/),
      complete: false,
    });
    // the batch of u2 is not recorded as sent, and u3 was never tried
    expect(await stored()).toMatchObject({ turn_key: 'u1' });
    expect(receiver().requests).toHaveLength(2);
    expect(await exportTo({ batchSpans: 2 })).toMatchObject({
      new: 2,
      unchanged: 1,
      unknown_spans: 0,
      complete: true,
    });
    expect(await stored()).toMatchObject({ turn_key: 'u3' });
  });

  it("R3-10: an error that is not the transport's (a retry notice that throws) reaches the caller as it is, not reworded", async () => {
    await insertRows(t.db, [row('s1', 'u1', 1)]);
    receiver().respond(503);
    const stop = new Error('the notice could not be written');
    const { url, sink } = receiverSink(receiver(), {
      retries: 1,
      onRetry: () => {
        throw stop;
      },
    });
    await expect(runExport(t.db, sink, url, exportOptions(900))).rejects.toBe(stop);
  });
});

/*
 * A page the tree reader cannot read whole (R4-3): on the host's schema an unreadable
 * task_session_turns time fails the page's read, which is then read turn by turn.
 */
describe.each(TARGETS)("runExport reading a page turn by turn on %s, the host's schema", (target) => {
  const t = useTestDatabase(target, { fixture: 'host', subagentTable: false });
  const receiver = useOtlpReceiver();
  const cast = target === 'sqlite' ? '$1' : '$1::timestamp';
  const odd = target === 'sqlite' ? 'garbage' : 'infinity';

  it('R4-3: a turn whose host times cannot be read and a turn with no readable row are skipped and named; a turn with one unreadable row among readable ones and the others go out', async () => {
    await insertRows(t.db, [
      row('s1', 'u1', 1),
      row('s1', 'u2', 2),
      row('s1', 'u3', 3),
      row('s1', 'u4', 4),
      row('s1', 'u4', 5),
      row('s1', 'u5', 6),
    ]);
    await t.db.query(`UPDATE task_session_turns SET completed_at = ${cast} WHERE id = 'u2'`, [odd]);
    await t.db.query(
      `UPDATE task_session_subagents SET observed_at = ${cast} WHERE tool_call_id IN ('s1-u3-3', 's1-u4-5')`,
      [odd],
    );
    const { url, sink } = receiverSink(receiver(), { retries: 0 });
    const summary = await runExport(t.db, sink, url, exportOptions(900));
    expect([...summary.skipped].sort((a, b) => (a.turn_id! < b.turn_id! ? -1 : 1))).toEqual([
      {
        task_session_id: 's1',
        turn_id: 'u2',
        reason: expect.stringMatching(/^task_session_turns\.completed_at unreadable/),
      },
      { task_session_id: 's1', turn_id: 'u3', reason: expect.stringMatching(/^observed_at unreadable/) },
    ]);
    // u4's unreadable row is counted; u3, skipped and named, is not read
    expect(summary).toMatchObject({ new: 3, spans: 6, unreadable: { observed_at: 1 } });
    expect(new Set(receiver().spans.map((s) => s.attributes['subagent_context.turn_id']))).toEqual(
      new Set(['u1', 'u4', 'u5']),
    );
  });
});
