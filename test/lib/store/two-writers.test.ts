import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../lib/columns.js';
import type { Queryable } from '../../../lib/db/database.js';
import { mergeWrite, newestObservation } from '../../../lib/merge.js';
import type { StoredWrite, SubagentRow, SubagentWrite } from '../../../lib/row.js';
import { readSession } from '../../../lib/store/read.js';
import { writeBatch } from '../../../lib/store/write.js';
import { formatRfc3339, type Micros, parseRfc3339 } from '../../../lib/time.js';
import { writes as writeSequences } from '../../support/arbitraries.js';
import { seedSession, write } from '../../support/frames.js';
import { hostMerge, hostUpsert } from '../../support/host-writer.js';
import { TARGET_FIXTURES, useTestDatabase } from '../../support/targets.js';

const us = (text: string): Micros => parseRfc3339(text)!;
const T0 = '2026-08-12T10:00:00Z';
const T3 = '2026-08-12T10:03:00Z';
const T5 = '2026-08-12T10:05:00Z';
const T6 = '2026-08-12T10:06:00Z';

/** A frame at `observedAt` (settled there when its tool_status is terminal). */
const frameAt = (observedAt: string, tool_status: string | undefined, task: Record<string, unknown>) =>
  write({ observed_at: observedAt, tool_status, subagent_task: task });

/** The row as stored: a model (StoredWrite) in the form reads return, for comparing with the database. */
function viewOfModel(model: StoredWrite): Omit<SubagentRow, 'id'> {
  const at = (v: Micros | null | undefined) => (v === null || v === undefined ? null : formatRfc3339(v));
  return {
    ...model,
    observed_at: at(model.observed_at)!,
    settled_at: at(model.settled_at),
    updated_at: at(model.updated_at ?? model.last_observed_at)!,
    last_observed_at: at(newestObservation(model))!,
  };
}

const withoutId = ({ id: _id, ...rest }: SubagentRow) => rest;

/** The stored text of a timestamp column, for comparisons beyond the microsecond (the host's own digits). */
async function rawInstants(db: Queryable, session: string): Promise<{ observed: string; last: string }> {
  const [row] = await db.query<{ observed: unknown; last: unknown }>(
    `SELECT CAST(observed_at AS TEXT) AS observed, CAST(last_observed_at AS TEXT) AS last FROM ${TABLE} WHERE task_session_id = $1`,
    [session],
  );
  return { observed: String(row!.observed), last: String(row!.last) };
}

/** `YYYY-MM-DD HH:MM:SS[.f…][+00:00|Z]` (UTC) → nanoseconds since the date part, as sortable text. */
const nanoKey = (text: string) => {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?/.exec(text)!;
  return `${m[1]} ${m[2]}.${(m[3] ?? '').padEnd(9, '0')}`;
};

describe.each(TARGET_FIXTURES)('R3-1: two writers, one row, on %s with the %s host schema', (name, fixture) => {
  const t = useTestDatabase(name, { fixture });

  it("R3-1: the host settles a row at t5; a frame of ours observed at t3 replaces nothing, unsettles nothing, re-dates nothing (issue 26's scenario)", async () => {
    await seedSession(t.db);
    await hostUpsert(t.db, frameAt(T0, 'in_progress', { status: 'running' }));
    await hostUpsert(
      t.db,
      frameAt(T5, 'completed', { status: 'completed', total_tokens: 500, model: 'claude-x', duration_ms: 9000 }),
    );
    const settledByHost = (await readSession(t.db, 's1'))[0]!;
    await writeBatch(t.db, [
      frameAt(T3, 'in_progress', { status: 'running', total_tokens: 100, model: 'claude-old', agent_id: 'a1' }),
    ]);
    const [row] = await readSession(t.db, 's1');
    expect(row).toMatchObject({
      agent_status: 'completed',
      tool_status: 'completed',
      total_tokens: 500,
      model: 'claude-x',
      duration_ms: 9000,
      agent_id: 'a1', // a NULL the host left is filled (R2-7)
      observed_at: formatRfc3339(us(T0)),
      settled_at: formatRfc3339(us(T5)),
      updated_at: formatRfc3339(us(T5)),
      last_observed_at: formatRfc3339(us(T5)), // the newest applied observation, never t3
    });
    expect({ ...row, agent_id: null }).toEqual({ ...settledByHost, last_observed_at: row!.last_observed_at });
  });

  it("R3-1: a frame of ours observed at or after the host's latest write replaces as in observation order", async () => {
    await seedSession(t.db);
    await hostUpsert(t.db, frameAt(T5, 'completed', { status: 'completed', total_tokens: 500, model: 'claude-x' }));
    await writeBatch(t.db, [frameAt(T5, undefined, { total_tokens: 510 })]); // the same instant is not older
    expect((await readSession(t.db, 's1'))[0]).toMatchObject({ total_tokens: 510, model: 'claude-x' });
    await writeBatch(t.db, [frameAt(T6, 'failed', { total_tokens: 600, model: 'claude-new' })]);
    expect((await readSession(t.db, 's1'))[0]).toMatchObject({
      total_tokens: 600,
      model: 'claude-new',
      tool_status: 'completed', // frozen once settled (AC-12)
      settled_at: formatRfc3339(us(T5)),
      updated_at: formatRfc3339(us(T6)),
      last_observed_at: formatRfc3339(us(T6)),
    });
  });

  it('R3-1: after our write, a later host write dates the row again: an older frame of ours then only fills NULLs', async () => {
    await seedSession(t.db);
    await writeBatch(t.db, [frameAt(T3, undefined, { model: 'ours-t3' })]);
    await hostUpsert(t.db, frameAt(T5, undefined, { model: 'host-t5', total_tokens: 50 }));
    await writeBatch(t.db, [frameAt('2026-08-12T10:04:00Z', undefined, { model: 'ours-t4', duration_ms: 7 })]);
    expect((await readSession(t.db, 's1'))[0]).toMatchObject({
      model: 'host-t5',
      total_tokens: 50,
      duration_ms: 7,
      updated_at: formatRfc3339(us(T5)),
      last_observed_at: formatRfc3339(us(T5)),
    });
  });

  it("R3-1: a backfilled row counts as observed at its message's updated_at, not its created_at", async () => {
    await seedSession(t.db);
    // The backfill's row for a message created 10:00 and last updated 10:05 (completed by then),
    // as a backfill that dates last_observed_at by created_at would leave it.
    await t.db.query(
      `INSERT INTO ${TABLE} (id, task_session_id, task_id, tool_call_id, agent_execution_id, model, total_tokens, agent_status, tool_status, source, observed_at, settled_at, updated_at, last_observed_at)
       VALUES ('m1', 's1', 't1', 'c1', 'e1', 'claude-x', 500, 'completed', 'completed', 'backfill', $1, $2, $2, $1)`,
      [t.db.dialect.encodeTimestamp(us(T0)), t.db.dialect.encodeTimestamp(us(T5))],
    );
    await writeBatch(t.db, [frameAt(T3, 'in_progress', { status: 'running', model: 'claude-old', total_tokens: 100 })]);
    expect((await readSession(t.db, 's1'))[0]).toMatchObject({
      model: 'claude-x',
      total_tokens: 500,
      agent_status: 'completed',
      source: 'backfill',
      last_observed_at: formatRfc3339(us(T5)),
    });
  });

  it("R3-1: last_observed_at is never earlier than observed_at, even against the host's sub-microsecond digits", async () => {
    await seedSession(t.db);
    const hostText =
      t.db.dialect.name === 'sqlite' ? '2026-08-12 13:24:57.3388988+00:00' : '2026-08-12 13:24:57.3388988';
    await hostUpsert(t.db, frameAt('2026-08-12T13:24:57.338898Z', undefined, { model: 'host' }), {
      observedAt: hostText,
    });
    await writeBatch(t.db, [frameAt('2026-08-12T13:24:57.338898Z', undefined, { agent_id: 'a1' })]);
    const raw = await rawInstants(t.db, 's1');
    expect(nanoKey(raw.last) >= nanoKey(raw.observed)).toBe(true);
    const [row] = await readSession(t.db, 's1');
    expect(row!.last_observed_at >= row!.observed_at).toBe(true);
    expect(row!.updated_at >= row!.observed_at).toBe(true);
  });

  it("R3-1, R2-7: any interleaving of host upserts and our frames (random times, duplicates, redeliveries) never lets a frame observed before the host's latest write replace what it stored, keeps last_observed_at ≥ observed_at, matches the rules in memory, and replays change nothing", async () => {
    let run = 0;
    const property = fc.asyncProperty(interleavings(), async ({ steps, replays }) => {
      run += 1;
      const session = `i-${run}`;
      await seedSession(t.db, session, 't1');
      const keyed = (w: SubagentWrite): SubagentWrite => ({ ...w, task_session_id: session });
      let model: StoredWrite | undefined;
      let hostLatest: Micros | undefined;
      let updatedBefore: string | undefined;
      const ours: SubagentWrite[] = [];
      for (const step of steps) {
        const before = (await readSession(t.db, session))[0];
        if (step.kind === 'host') {
          await hostUpsert(t.db, keyed(step.write));
          model = hostMerge(model, step.write);
          hostLatest = step.write.observed_at;
        } else {
          await writeBatch(t.db, [keyed(step.write)]);
          ours.push(step.write);
          const merged = model ? mergeWrite(model, step.write) : step.write;
          model = { ...merged, updated_at: merged.last_observed_at };
        }
        const [row] = await readSession(t.db, session);
        expect(withoutId(row!)).toEqual({ ...viewOfModel(model), task_session_id: session });
        expect(row!.last_observed_at >= row!.observed_at).toBe(true);
        if (step.kind === 'ours') {
          // Our writes never move updated_at backwards (the host's clock is its own).
          if (updatedBefore !== undefined) expect(row!.updated_at >= updatedBefore).toBe(true);
          if (hostLatest !== undefined && step.write.observed_at < hostLatest && before) {
            expect(row!.last_observed_at >= formatRfc3339(hostLatest)).toBe(true);
            for (const [column, value] of Object.entries(before)) {
              if (value === null || column === 'is_async') continue;
              if (column === 'tool_status' && before.settled_at === null && row!.settled_at !== null) continue;
              if (column === 'last_observed_at') continue;
              expect([column, row![column as keyof SubagentRow]]).toEqual([column, value]);
            }
          }
        }
        updatedBefore = row!.updated_at;
      }
      const settled = (await readSession(t.db, session))[0];
      for (const i of replays) if (ours.length > 0) await writeBatch(t.db, [keyed(ours[i % ours.length]!)]);
      expect((await readSession(t.db, session))[0]).toEqual(settled);
    });
    await fc.assert(property, { numRuns: 20 });
  }, 240_000);
});

type Step = { kind: 'host' | 'ours'; write: SubagentWrite };

/**
 * Host upserts and frames of ours for one row, in arrival order. Our frames have random observation
 * times (distinct, even microseconds) and come again as duplicates anywhere later; the host's writer
 * stamps its clock at each write (odd microseconds: never a tie with ours), which is later than
 * every observation written before it (the producer runs on the host's clock) and its own last.
 * `replays` are re-deliveries of our frames after the sequence.
 */
function interleavings() {
  return fc
    .record({
      frames: writeSequences(['A'], 10),
      byHost: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
      hostGaps: fc.array(fc.bigInt({ min: 1n, max: 20_000_000n }), { minLength: 10, maxLength: 10 }),
      duplicates: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 5 }),
      replays: fc.array(fc.nat(), { maxLength: 8 }),
    })
    .map(({ frames, byHost, hostGaps, duplicates, replays }) => {
      const one = (w: SubagentWrite): SubagentWrite => ({
        ...w,
        tool_call_id: 'c1',
        agent_execution_id: 'e1',
        task_id: 't1',
      });
      const used = new Set<Micros>();
      const at = (w: SubagentWrite, instant: Micros): SubagentWrite => ({
        ...w,
        observed_at: instant,
        last_observed_at: instant,
        settled_at: w.settled_at === null ? null : instant,
      });
      let steps: Step[] = [];
      // The host's clock: after every observation written so far (it starts before any of them).
      let clock = frames[0]!.observed_at;
      for (const f of frames) if (f.observed_at < clock) clock = f.observed_at;
      clock -= 1n;
      for (const [i, frame] of frames.entries()) {
        if (byHost[i]) {
          let instant = clock + hostGaps[i]!;
          if (instant % 2n === 0n) instant += 1n;
          clock = instant;
          steps.push({ kind: 'host', write: at(one(frame), instant) });
        } else {
          let instant = frame.observed_at - (frame.observed_at % 2n);
          while (used.has(instant)) instant += 2n;
          used.add(instant);
          if (instant > clock) clock = instant;
          steps.push({ kind: 'ours', write: at(one(frame), instant) });
        }
      }
      for (const [pick, offset] of duplicates) {
        const ours = steps.flatMap((s, i) => (s.kind === 'ours' ? [i] : []));
        if (ours.length === 0) break;
        const from = ours[pick % ours.length]!;
        const to = from + 1 + (offset % (steps.length - from));
        steps = [...steps.slice(0, to), steps[from]!, ...steps.slice(to)];
      }
      return { steps, replays };
    });
}
