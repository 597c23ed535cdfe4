import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { traceIdOf } from '../../../lib/export/otlp/ids.js';
import { comparePositions, POSITION_KEY } from '../../../lib/export/position.js';
import { runExport } from '../../../lib/export/run.js';
import type { ScriptedAnswer } from '../../../local/otlp-receiver.js';
import { exportOptions, receiverSink, useOtlpReceiver } from '../../support/otlp-harness.js';
import { insertRows, type StoredRow } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R4-8 (issue 48 item 4): the export's resume is exact at ties. Turns share `changed` instants
 * (one updated_at for many turns is what a host's bulk write leaves), their sessions and turns
 * differ in case, accents and code points past U+FFFF (where UTF-16 and byte order part), a batch
 * of any size fails (refused, unavailable, or answered with no readable answer), and the rerun,
 * with any lookback including 0, must bring every turn to the collector.
 */

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;
const SESSIONS = ['s1', 'S1', 'sé', 's\u{1F600}', 's\uE000', 'ß'];
const TURNS = ['u1', 'U1', 'u\u{10000}', 'u\uFFFD', null];

interface TurnCase {
  session: number;
  turn: number;
  /** index of its updated_at among three instants: most turns tie */
  changed: number;
  rows: number;
}

const turnArb: fc.Arbitrary<TurnCase> = fc.record({
  session: fc.nat({ max: SESSIONS.length - 1 }),
  turn: fc.nat({ max: TURNS.length - 1 }),
  changed: fc.nat({ max: 2 }),
  rows: fc.integer({ min: 1, max: 2 }),
});

const FAILURES: ScriptedAnswer[] = [{ status: 400 }, { status: 503 }, { status: 200, body: 'not an OTLP answer' }];

describe.each(TARGETS)('R4-8 on %s: a resume at ties loses no turn', (target) => {
  const t = useTestDatabase(target);
  const receiver = useOtlpReceiver();

  it('R4-8 (issue 48): for any store, batch size, failing batch and lookback (0 included), every turn reaches the collector once a rerun succeeds', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(turnArb, { minLength: 1, maxLength: 12, selector: (c) => `${c.session}/${c.turn}` }),
        fc.integer({ min: 1, max: 6 }),
        fc.nat({ max: 8 }),
        fc.nat({ max: FAILURES.length - 1 }),
        fc.constantFrom(0, 1, 900),
        async (turns, batchSpans, failAt, failure, lookback) => {
          await t.db.query('DELETE FROM task_session_subagents');
          await t.db.query('DELETE FROM kandev_meta WHERE key = $1', [POSITION_KEY]);
          receiver().reset();
          const rows: StoredRow[] = turns.flatMap((c, i) => {
            const session = SESSIONS[c.session]!;
            const turn = TURNS[c.turn] === null ? null : `${TURNS[c.turn]}.${c.session}`;
            return Array.from({ length: c.rows }, (_, r) => ({
              task_session_id: session,
              turn_id: turn,
              tool_call_id: `c${i}.${r}`,
              observed_at: T(1),
              settled_at: T(2),
              updated_at: T(3 + c.changed),
            }));
          });
          await insertRows(t.db, rows);
          const expected = new Set(
            turns.map((c) =>
              traceIdOf(SESSIONS[c.session]!, TURNS[c.turn] === null ? '' : `${TURNS[c.turn]}.${c.session}`),
            ),
          );
          const run = async () => {
            const { url, sink } = receiverSink(receiver(), { retries: 0 });
            return runExport(t.db, sink, url, { ...exportOptions(lookback), batchSpans, pageTurns: 3 });
          };
          // the first run: `failAt` requests are accepted, the next one fails (if the run gets that far)
          receiver().respond(...Array.from({ length: failAt }, () => 200), FAILURES[failure]!);
          await run().catch(() => undefined);
          // the collector keeps what it answered 2xx to; only those spans count as arrived
          const arrived = new Set(
            receiver()
              .requests.filter((r) => r.answered < 300 && r.answered >= 200)
              .flatMap((r) => r.spans.map((s) => s.traceId)),
          );
          receiver().requests.length = 0;
          const rerun = await run();
          expect(rerun.complete).toBe(true);
          for (const r of receiver().requests) for (const s of r.spans) arrived.add(s.traceId);
          expect([...expected].filter((id) => !arrived.has(id))).toEqual([]);
        },
      ),
      { numRuns: target === 'sqlite' ? 40 : 12 },
    );
  });

  it('R4-8 (issue 48): 199 turns with one updated_at, a refusal on the second batch, --lookback-seconds 0: the rerun sends the other turns, all 199 arrive', async () => {
    const rows: StoredRow[] = Array.from({ length: 199 }, (_, i) => ({
      task_session_id: 's1',
      turn_id: `u${String(i).padStart(3, '0')}`,
      tool_call_id: `c${i}`,
      observed_at: T(1),
      settled_at: T(2),
      updated_at: T(3),
    }));
    await insertRows(t.db, rows);
    receiver().respond(200, 400);
    const run = () => {
      const { url, sink } = receiverSink(receiver(), { retries: 0 });
      return runExport(t.db, sink, url, { ...exportOptions(0), batchSpans: 100 });
    };
    await expect(run()).rejects.toThrow(/HTTP 400/);
    const rerun = await run();
    expect(rerun.new).toBe(199 - 50);
    const traces = new Set(receiver().spans.map((s) => s.traceId));
    expect(traces.size).toBe(199);
  });
});

describe('R4-8: the position order', () => {
  it('R4-8 (issue 48): sessions and turns compare in UTF-8 byte order, as the listing sorts them (past U+FFFF too)', () => {
    const at = (task_session_id: string, turn_key = '') => ({ changed: 1n, task_session_id, turn_key });
    expect(comparePositions(at('s\uE000'), at('s\u{1F600}'))).toBeLessThan(0);
    expect(comparePositions(at('S'), at('s'))).toBeLessThan(0);
    expect(comparePositions(at('s', 'u\uFFFD'), at('s', 'u\u{10000}'))).toBeLessThan(0);
    expect(comparePositions({ ...at('z'), changed: 0n }, at('a'))).toBeLessThan(0);
    expect(comparePositions(at('s', 'u'), at('s', 'u'))).toBe(0);
  });

  it('R4-8: the changed instant decides first, either way: a later change comes after whatever its session and turn', () => {
    const early = { changed: 1n, task_session_id: 'z', turn_key: 'z' };
    const late = { changed: 2n, task_session_id: 'a', turn_key: 'a' };
    expect(comparePositions(late, early)).toBeGreaterThan(0);
    expect(comparePositions(early, late)).toBeLessThan(0);
  });
});
