import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { CHECKPOINT_KEY } from '../../../lib/health/checkpoint.js';
import { readActivationKeys, readShortfall } from '../../../lib/report/completeness.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY } from '../../../lib/store/meta.js';
import { parseRfc3339 } from '../../../lib/time.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { seedMessage } from '../health/seed.js';

/*
 * R3-8, the report's completeness (docs/report.md#completeness), read by its own functions: the
 * keys and the notes each state of them gives, written out, and the shortfall over the scheduled
 * window (checkpoint or capture_since, whichever is later, to the cutoff). figures-edges.test.ts
 * proves the same through whole reports.
 */

const us = (text: string) => parseRfc3339(text)!;
const NOW = us('2026-08-13T00:00:00Z');
const NOT_ACTIVATED =
  'capture is not activated (no subagent_context_capture_since): completeness is unknown and no shortfall is computed; run `subagent-context migrate`.';
const NO_CHECKPOINT =
  'the scheduled health check has not verified anything yet (no checkpoint): the shortfall is not checked here; `subagent-context health` checks it and records the checkpoint (`health --full` audits the whole history).';

async function setMeta(db: Queryable, key: string, value: string) {
  await db.query('INSERT INTO kandev_meta (key, value) VALUES ($1, $2)', [key, value]);
}

describe.each(TARGETS)('R3-8 completeness on %s', (target) => {
  const t = useTestDatabase(target);

  it('R3-8: nothing activated: every key none, and the note says to run migrate', async () => {
    expect(await readActivationKeys(t.db)).toEqual({
      captureSince: undefined,
      backfillThrough: undefined,
      verifiedThrough: undefined,
      notes: [NOT_ACTIVATED],
    });
  });

  it('R3-8, AC-24f: activated without a checkpoint: the keys read, the note says the shortfall is not checked; "" is none', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, '2026-08-12T00:00:00.000000000Z');
    await setMeta(t.db, BACKFILL_THROUGH_KEY, '');
    expect(await readActivationKeys(t.db)).toEqual({
      captureSince: us('2026-08-12T00:00:00Z'),
      backfillThrough: undefined,
      verifiedThrough: undefined,
      notes: [NO_CHECKPOINT],
    });
    await t.db.query('UPDATE kandev_meta SET value = $1 WHERE key = $2', [
      '2026-08-11T23:59:59.000001000Z',
      BACKFILL_THROUGH_KEY,
    ]);
    await setMeta(t.db, CHECKPOINT_KEY, '2026-08-12T06:00:00.000000000Z');
    expect(await readActivationKeys(t.db)).toEqual({
      captureSince: us('2026-08-12T00:00:00Z'),
      backfillThrough: us('2026-08-11T23:59:59.000001Z'),
      verifiedThrough: us('2026-08-12T06:00:00Z'),
      notes: [],
    });
  });

  it('R3-8: a key that is no instant is a note naming it and its value, and reads as none; so is a checkpoint that is none', async () => {
    await setMeta(t.db, CAPTURE_SINCE_KEY, 'soon');
    await setMeta(t.db, CHECKPOINT_KEY, 'later');
    const keys = await readActivationKeys(t.db);
    expect(keys.captureSince).toBeUndefined();
    expect(keys.verifiedThrough).toBeUndefined();
    // the checkpoint's own error as a sentence, then the key's note, then activation
    expect(keys.notes).toEqual([
      `kandev_meta key ${CHECKPOINT_KEY} holds "later", which is not an RFC 3339 instant; delete the key (the next scheduled check then starts again from capture_since, or from the other health key) or set it to an instant in the key form (e.g. 2026-08-12T13:24:58.123456000Z).`,
      `kandev_meta key ${CAPTURE_SINCE_KEY} holds "soon", which is not an instant: it is reported as null (migrate and health say how to repair it).`,
      NOT_ACTIVATED,
    ]);
  });

  it('R3-8: the shortfall is not checked without capture_since or a checkpoint; checked and closed when the window is empty', async () => {
    const from = us('2026-08-12T06:00:00Z');
    const base = { backfillThrough: undefined, notes: [] };
    const unchecked = { shortfall: { open: false, count: 0, checked: false }, missing: [], notes: [] };
    expect(await readShortfall(t.db, { ...base, captureSince: undefined, verifiedThrough: from }, NOW)).toEqual(
      unchecked,
    );
    expect(await readShortfall(t.db, { ...base, captureSince: from, verifiedThrough: undefined }, NOW)).toEqual(
      unchecked,
    );
    const closed = { shortfall: { open: false, count: 0, checked: true }, missing: [], notes: [] };
    // a cutoff at (or before) the window's start: nothing to check
    expect(await readShortfall(t.db, { ...base, captureSince: from, verifiedThrough: from }, from)).toEqual(closed);
    expect(await readShortfall(t.db, { ...base, captureSince: from, verifiedThrough: from }, from - 1n)).toEqual(
      closed,
    );
  });

  it('R3-8: a window with no message missing its row is checked and closed, with no note', async () => {
    const from = us('2026-08-12T06:00:00Z');
    const keys = { captureSince: from, verifiedThrough: from, backfillThrough: undefined, notes: [] };
    expect(await readShortfall(t.db, keys, NOW)).toEqual({
      shortfall: { open: false, count: 0, checked: true },
      missing: [],
      notes: [],
    });
  });

  it('R3-8: the window starts at the later of the checkpoint and capture_since; a missing message in it is the shortfall, named', async () => {
    await seedMessage(t.db, { createdAt: us('2026-08-12T03:00:00Z'), toolCallId: 'early' });
    await seedMessage(t.db, { createdAt: us('2026-08-12T09:00:00Z'), toolCallId: 'late' });
    const keys = (captureSince: string, verifiedThrough: string) => ({
      captureSince: us(captureSince),
      verifiedThrough: us(verifiedThrough),
      backfillThrough: undefined,
      notes: [],
    });
    // checkpoint later than capture_since: from the checkpoint
    expect(await readShortfall(t.db, keys('2026-08-12T00:00:00Z', '2026-08-12T06:00:00Z'), NOW)).toEqual({
      shortfall: { open: true, count: 1, checked: true },
      missing: [{ task_session_id: 's1', tool_call_id: 'late' }],
      notes: [
        '1 qualifying message key(s) created since 2026-08-12T06:00:00.000000Z have no row: the figures miss them (run `subagent-context health` for the triage).',
      ],
    });
    // capture_since later than the checkpoint: from capture_since
    expect(await readShortfall(t.db, keys('2026-08-12T06:00:00Z', '2026-08-12T00:00:00Z'), NOW)).toMatchObject({
      shortfall: { open: true, count: 1, checked: true },
      missing: [{ tool_call_id: 'late' }],
    });
    // both early: both messages
    expect((await readShortfall(t.db, keys('2026-08-12T00:00:00Z', '2026-08-12T00:00:00Z'), NOW)).shortfall).toEqual({
      open: true,
      count: 2,
      checked: true,
    });
    // the cutoff before the late one: only the early one
    expect(
      (await readShortfall(t.db, keys('2026-08-12T00:00:00Z', '2026-08-12T00:00:00Z'), us('2026-08-12T08:00:00Z')))
        .missing,
    ).toEqual([{ task_session_id: 's1', tool_call_id: 'early' }]);
  });
});

describe.each(TARGETS)('R3-3 completeness on %s, a store where nothing created task_session_subagents', (target) => {
  const t = useTestDatabase(target, { subagentTable: false });
  const from = us('2026-08-12T06:00:00Z');
  const keys = { captureSince: from, verifiedThrough: from, backfillThrough: undefined, notes: [] };

  it('R3-3: the shortfall is not computed, and the note says why (the table is not there)', async () => {
    expect(await readShortfall(t.db, keys, NOW)).toEqual({
      shortfall: { open: false, count: 0, checked: false },
      missing: [],
      notes: [
        'the shortfall was not computed: task_session_subagents does not exist in this database, and nothing (neither the host nor this project) has created it; run `subagent-context migrate` (or invoke the migrate function) once to create it, then run this command again.',
      ],
    });
  });

  it('R3-8: a cutoff at or before the window start is checked and closed without reading the store', async () => {
    const closed = { shortfall: { open: false, count: 0, checked: true }, missing: [], notes: [] };
    expect(await readShortfall(t.db, keys, from)).toEqual(closed);
    expect(await readShortfall(t.db, keys, from - 1n)).toEqual(closed);
  });
});
