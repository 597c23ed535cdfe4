import { describe, expect, it } from 'vitest';
import {
  checkPositionKey,
  movePosition,
  POSITION_KEY,
  PositionError,
  parsePosition,
  pointText,
  positionMoved,
  positionText,
  readPositionText,
} from '../../../lib/export/position.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * The export's position as stored (docs/otlp.md#incremental-export, R3-10, R4-8): its key, its
 * text (written out), what a stored value must hold to be read back, and the compare-and-set that
 * moves it. The export runs (export-edges.test.ts, test/bin/cli-export-position.test.ts) prove
 * when a run reads and moves it.
 */

const KEY = POSITION_KEY;
const POINT = { changed: 1_786_539_601_000_001n, task_session_id: 's1', turn_key: 'u1' };
const POINT_TEXT = '{"changed":"2026-08-12T13:00:01.000001000Z","task_session_id":"s1","turn_key":"u1"}';
const NOT_A_POSITION = `kandev_meta key ${KEY} does not hold an export position; delete the key to export everything again (ids stay the same, so a collector that dedupes by id keeps one copy)`;

describe('R3-10, R4-8 the stored export position', () => {
  it.each([
    [KEY, true],
    [`${KEY}_staging`, true],
    [`${KEY}.eu-1`, true],
    [`${KEY}-2`, true],
    [`x${KEY}`, false],
    [`${KEY}_Staging`, false],
    [`${KEY} x`, false],
    [`${KEY}\n`, false],
    ['subagent_context_otlp', false],
  ])('R3-10: --position-key %j is ours: %s', (key, ok) => {
    if (ok) expect(checkPositionKey(key)).toBe(key);
    else
      expect(() => checkPositionKey(key)).toThrow(
        new PositionError(
          `--position-key must start with ${KEY} and use only a-z, 0-9, _ . - (got ${JSON.stringify(key)})`,
        ),
      );
  });

  it('R3-10: the point is changed (the key form), session and turn, in that order; the stored form adds the sent record and rejections only when there are any', () => {
    expect(pointText(POINT)).toBe(POINT_TEXT);
    expect(positionText({ position: POINT, sent: new Map() })).toBe(POINT_TEXT);
    const sent = new Map([
      ['k1', { digest: 'd1', changed: 5n }],
      ['k2', { digest: '', changed: -7n }],
    ]);
    const rejected = { spans: 3, message: 'too big', at: '2026-08-12T13:00:02.000000000Z' };
    const text = positionText({ position: POINT, sent, rejected });
    expect(text).toBe(
      '{"changed":"2026-08-12T13:00:01.000001000Z","task_session_id":"s1","turn_key":"u1","sent":[["k1","d1","5"],["k2","","-7"]],"rejected":{"spans":3,"message":"too big","at":"2026-08-12T13:00:02.000000000Z"}}',
    );
    // and it reads back as it was
    expect(parsePosition(KEY, text)).toEqual({ position: POINT, sent, rejected });
    expect(parsePosition(KEY, POINT_TEXT)).toEqual({ position: POINT, sent: new Map() });
    expect(parsePosition(KEY, null)).toBeUndefined();
  });

  it('R4-8: a rejection record without a message reads back without one; one with a wrong shape is dropped, the point kept', () => {
    const base = JSON.parse(POINT_TEXT) as Record<string, unknown>;
    const read = (rejected: unknown) => parsePosition(KEY, JSON.stringify({ ...base, rejected }));
    expect(read({ spans: 2, at: 'then' })).toEqual({
      position: POINT,
      sent: new Map(),
      rejected: { spans: 2, at: 'then' },
    });
    expect(read({ spans: 2, at: 'then', message: 7 })!.rejected).toEqual({ spans: 2, at: 'then' });
    for (const odd of [null, { spans: '2', at: 'then' }, { spans: 2 }, { at: 'then' }, { spans: 2, at: 3 }])
      expect(read(odd), JSON.stringify(odd)).toEqual({ position: POINT, sent: new Map() });
  });

  it.each([
    ['not JSON', 'not json'],
    ['null', 'null'],
    ['a number', '7'],
    ['no changed', '{"task_session_id":"s1","turn_key":"u1"}'],
    ['changed not a string', '{"changed":5,"task_session_id":"s1","turn_key":"u1"}'],
    ['changed not an instant', '{"changed":"soon","task_session_id":"s1","turn_key":"u1"}'],
    ['no session', '{"changed":"2026-08-12T13:00:01.000001000Z","turn_key":"u1"}'],
    ['a session not a string', '{"changed":"2026-08-12T13:00:01.000001000Z","task_session_id":1,"turn_key":"u1"}'],
    ['no turn', '{"changed":"2026-08-12T13:00:01.000001000Z","task_session_id":"s1"}'],
    ['a turn not a string', '{"changed":"2026-08-12T13:00:01.000001000Z","task_session_id":"s1","turn_key":null}'],
    ['sent not a list', `${POINT_TEXT.slice(0, -1)},"sent":{}}`],
    ['a sent entry not a list', `${POINT_TEXT.slice(0, -1)},"sent":["k1"]}`],
    ['a sent entry of two', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1"]]}`],
    ['a sent entry of four', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","5","x"]]}`],
    ['a sent entry holding a number', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1",5]]}`],
    ['a sent entry holding a number first', `${POINT_TEXT.slice(0, -1)},"sent":[[1,"d1","5"]]}`],
    ['a sent instant not whole', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","5.5"]]}`],
    ['a sent instant with text after it', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","5x"]]}`],
    ['a sent instant with text before it', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","x5"]]}`],
    ['a sent instant of 21 digits', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","${'1'.repeat(21)}"]]}`],
    ['a sent instant empty', `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1",""]]}`],
  ])('R3-10: a stored value with %s is not a position: the error says how to start over', (_, raw) => {
    expect(() => parsePosition(KEY, raw)).toThrow(new PositionError(NOT_A_POSITION));
  });

  it('R3-10: a sent instant of 20 digits, or negative, reads back', () => {
    const raw = `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","${'9'.repeat(19)}"],["k2","d2","-1"]]}`;
    expect([...parsePosition(KEY, raw)!.sent]).toEqual([
      ['k1', { digest: 'd1', changed: 9_999_999_999_999_999_999n }],
      ['k2', { digest: 'd2', changed: -1n }],
    ]);
    const twenty = `${POINT_TEXT.slice(0, -1)},"sent":[["k1","d1","${'1'.repeat(20)}"]]}`;
    expect(parsePosition(KEY, twenty)!.sent.get('k1')!.changed).toBe(11_111_111_111_111_111_111n);
  });

  it('R3-10: the error of a run whose position another export moved names the key and the turns it sent', () => {
    const error = positionMoved(`${KEY}_b`, 3);
    expect(error).toBeInstanceOf(PositionError);
    expect(error.name).toBe('PositionError');
    expect(error.message).toBe(
      `another export moved the position under kandev_meta key ${KEY}_b while this one ran; this run stopped after 3 turn(s) (the collector may have received them twice, with the same ids). Run one export per --position-key at a time, then run again to resume`,
    );
  });
});

describe.each(TARGETS)('R3-10 moving the position on %s', (target) => {
  const t = useTestDatabase(target);

  it('R3-10: the position is read as stored, moved only from what was read (compare-and-set), on its own key only', async () => {
    expect(await readPositionText(t.db, KEY)).toBeNull();
    expect(await movePosition(t.db, KEY, null, 'one')).toBe(true);
    expect(await readPositionText(t.db, KEY)).toBe('one');
    // absent expected, present stored: nothing written
    expect(await movePosition(t.db, KEY, null, 'two')).toBe(false);
    expect(await readPositionText(t.db, KEY)).toBe('one');
    // a stale expectation: nothing written
    expect(await movePosition(t.db, KEY, 'zero', 'two')).toBe(false);
    expect(await readPositionText(t.db, KEY)).toBe('one');
    expect(await movePosition(t.db, KEY, 'one', 'two')).toBe(true);
    expect(await readPositionText(t.db, KEY)).toBe('two');
    // another key is another position
    const other = `${KEY}_b`;
    expect(await readPositionText(t.db, other)).toBeNull();
    expect(await movePosition(t.db, other, 'two', 'x')).toBe(false);
    expect(await readPositionText(t.db, other)).toBeNull();
    expect(await movePosition(t.db, other, null, 'b1')).toBe(true);
    expect(await readPositionText(t.db, KEY)).toBe('two');
    expect(await readPositionText(t.db, other)).toBe('b1');
  });
});
