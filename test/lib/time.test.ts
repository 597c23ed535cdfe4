import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatCanonical,
  formatHostSqlite,
  formatKey,
  formatRfc3339,
  monotonicClock,
  nowMicros,
  parseRfc3339,
  parseStoredTimestamp,
} from '../../lib/time.js';

/** 2026-08-12T13:24:58.123456Z */
const T = 1_786_541_098_123_456n;

describe('parseRfc3339', () => {
  it.each([
    ['2026-08-12T13:24:58.123456Z', T],
    ['2026-08-12T13:24:58.123456z', T],
    ['2026-08-12t13:24:58.123456Z', T],
    ['2026-08-12 13:24:58.123456Z', T],
    ['2026-08-12T13:24:58.123456+00:00', T],
    ['2026-08-12T13:24:58.123456-00:00', T],
    ['2026-08-12T15:24:58.123456+02:00', T],
    ['2026-08-12T08:54:58.123456-04:30', T],
    ['2026-08-13T02:24:58.123456+13:00', T],
    ['2026-08-12T13:24:58Z', T - 123_456n],
    ['2026-08-12T13:24:58.1Z', T - 23_456n],
    ['2026-08-12T13:24:58.12Z', T - 3_456n],
    ['2026-08-12T13:24:58.1234Z', T - 56n],
    ['2026-08-12T13:24:58.123456000Z', T],
  ])('reads %s exactly to the microsecond', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });

  it.each([
    ['2026-08-12T13:24:58.1234551Z', T],
    ['2026-08-12T13:24:58.123455999Z', T],
    ['2026-08-12T13:24:57.999999001Z', T - 123_456n],
    ['2026-08-12T13:24:57.000000001Z', T - 1_123_455n],
  ])('R3-2: reads %s rounded up to the microsecond, never earlier than written', (text, expected) => {
    expect(parseRfc3339(text)).toBe(expected);
  });

  it('R3-2: a sub-microsecond instant orders after the microsecond it starts in', () => {
    const host = parseStoredTimestamp('2026-08-12 13:24:57.3388988+00:00')!;
    expect(host > parseRfc3339('2026-08-12T13:24:57.338898Z')!).toBe(true);
    expect(host).toBe(parseRfc3339('2026-08-12T13:24:57.338899Z'));
  });

  it.each([
    ['no offset', '2026-08-12T13:24:58.123'],
    ['ten fraction digits', '2026-08-12T13:24:58.1234567890Z'],
    ['an empty fraction', '2026-08-12T13:24:58.Z'],
    ['month 13', '2026-13-12T13:24:58Z'],
    ['February 30', '2026-02-30T13:24:58Z'],
    ['hour 24', '2026-08-12T24:00:00Z'],
    ['minute 60', '2026-08-12T13:60:00Z'],
    ['offset hour 24', '2026-08-12T13:24:58+24:00'],
    ['a date only', '2026-08-12'],
    ['a number', '1786541098'],
    ['surrounding space', ' 2026-08-12T13:24:58Z'],
  ])('rejects %s', (_name, text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it('tells two instants 1 µs apart', () => {
    const a = parseRfc3339('2026-08-12T13:24:58.999999Z')!;
    const b = parseRfc3339('2026-08-12T13:24:59Z')!;
    expect(b - a).toBe(1n);
  });

  it('accepts a leap-year day', () => {
    expect(parseRfc3339('2028-02-29T00:00:00Z')).toBeDefined();
  });

  it('reads a year below 100 as that year, not as 19xx', () => {
    expect(formatRfc3339(parseRfc3339('0050-03-01T00:00:00Z')!)).toBe('0050-03-01T00:00:00.000000Z');
  });

  it('rolls a leap second into the next minute, as PostgreSQL does', () => {
    expect(parseRfc3339('2026-08-12T23:59:60Z')).toBe(parseRfc3339('2026-08-13T00:00:00Z'));
  });

  it.each(['0000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00', '0001-01-01T00:00:00+01:00'])(
    'rejects %s, outside the years 1-9999 every stored form can hold',
    (text) => {
      expect(parseRfc3339(text)).toBeUndefined();
    },
  );
});

describe('parseStoredTimestamp', () => {
  it.each([
    ['the host SQLite form', '2026-08-12 13:24:58.123456+00:00', T],
    ['the host SQLite form, trimmed', '2026-08-12 13:24:58.1+00:00', T - 23_456n],
    ['the host SQLite form, whole second', '2026-08-12 13:24:58+00:00', T - 123_456n],
    ['PostgreSQL timestamp text', '2026-08-12 13:24:58.123456', T],
    ['PostgreSQL timestamp text, whole second', '2026-08-12 13:24:58', T - 123_456n],
    ['a key', '2026-08-12T13:24:58.123456000Z', T],
    ['a second-precision key', '2026-08-12T13:24:58Z', T - 123_456n],
  ])('reads %s', (_name, text, expected) => {
    expect(parseStoredTimestamp(text)).toBe(expected);
  });

  it('reads a value without an offset as UTC', () => {
    expect(parseStoredTimestamp('2026-08-12 13:24:58.123456')).toBe(parseRfc3339('2026-08-12T13:24:58.123456Z'));
  });

  it('never parses the empty-string key sentinel', () => {
    expect(parseStoredTimestamp('')).toBeUndefined();
  });
});

describe('formats', () => {
  it.each([
    ['formatCanonical', formatCanonical(T), '2026-08-12 13:24:58.123456'],
    ['formatHostSqlite', formatHostSqlite(T), '2026-08-12 13:24:58.123456+00:00'],
    ['formatRfc3339', formatRfc3339(T), '2026-08-12T13:24:58.123456Z'],
    ['formatKey', formatKey(T), '2026-08-12T13:24:58.123456000Z'],
  ])('%s writes the documented form', (_name, actual, expected) => {
    expect(actual).toBe(expected);
  });

  it.each([
    [T - 23_456n, '2026-08-12 13:24:58.1+00:00'],
    [T - 123_456n, '2026-08-12 13:24:58+00:00'],
    [T - 123_406n, '2026-08-12 13:24:58.00005+00:00'],
  ])('formatHostSqlite trims trailing fraction zeros as the host driver does (%s)', (us, expected) => {
    expect(formatHostSqlite(us)).toBe(expected);
  });

  it('formatCanonical keeps six digits for a whole second', () => {
    expect(formatCanonical(T - 123_456n)).toBe('2026-08-12 13:24:58.000000');
  });

  it('formats an instant before 1970 without borrowing a second wrongly', () => {
    expect(formatRfc3339(-1n)).toBe('1969-12-31T23:59:59.999999Z');
  });

  // 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999Z
  const instant = fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n });

  it.each([
    ['formatCanonical', formatCanonical],
    ['formatHostSqlite', formatHostSqlite],
    ['formatRfc3339', formatRfc3339],
    ['formatKey', formatKey],
  ])('%s round-trips through parseStoredTimestamp to the microsecond', (_name, format) => {
    fc.assert(fc.property(instant, (us) => parseStoredTimestamp(format(us)) === us));
  });

  it('formatRfc3339 output is what parseRfc3339 reads back', () => {
    fc.assert(fc.property(instant, (us) => parseRfc3339(formatRfc3339(us)) === us));
  });

  it('fixed-width canonical text orders exactly as the instants do', () => {
    fc.assert(fc.property(instant, instant, (a, b) => a < b === formatCanonical(a) < formatCanonical(b)));
  });
});

describe('nowMicros', () => {
  it('agrees with the wall clock to the millisecond', () => {
    const before = BigInt(Date.now()) * 1000n;
    const now = nowMicros();
    const after = BigInt(Date.now()) * 1000n + 1000n;
    expect(now >= before - 1000n && now <= after).toBe(true);
  });
});

describe('R2-9: the microsecond clock never goes backwards', () => {
  /** Sources that replay scripted readings, one pair per call. */
  const scripted = (readings: readonly (readonly [wall: number, monotonic: number])[]) => {
    let i = 0;
    let current = readings[0]!;
    return monotonicClock({
      wall: () => {
        current = readings[Math.min(i++, readings.length - 1)]!;
        return current[0];
      },
      monotonic: () => current[1],
    });
  };

  it('R2-9: a re-anchor onto a wall clock 1 ms behind does not step back', () => {
    // 1001.9 ms is given, then the monotonic source is 1 ms ahead of the wall clock: re-anchoring
    // would give 1001.0 ms, 0.9 ms before the last reading.
    const clock = scripted([
      [1_000, 0],
      [1_001, 1.9],
      [1_001, 2],
    ]);
    const readings = [clock(), clock(), clock()];
    expect(readings[1]! > readings[0]!).toBe(true);
    expect(readings[2]! > readings[1]!).toBe(true);
  });

  it('R2-9: a wall clock stepped back by a minute never moves the clock back; it resumes once the wall passes it', () => {
    const clock = scripted([
      [60_000, 0],
      [0, 1],
      [60_002, 2],
    ]);
    const [a, b, c] = [clock(), clock(), clock()];
    expect(b).toBe(a! + 1n);
    expect(c).toBe(60_002_000n);
  });

  it('R2-9: any readings give a strictly increasing sequence', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.double({ min: 0, max: 1e9, noNaN: true })), {
          minLength: 2,
          maxLength: 50,
        }),
        (readings) => {
          const clock = scripted(readings);
          const values = readings.map(() => clock());
          for (let i = 1; i < values.length; i += 1) expect(values[i]! > values[i - 1]!).toBe(true);
        },
      ),
    );
  });

  it.each([
    // the origin's fraction is kept: 1000.123 + 0.5 ms is 1,000,623 µs, not 1,000,000
    [1_000, 0.5, 1_000.123, 1_000_623n],
    // an origin the wall clock contradicts (more than 1 ms behind, or ahead) is moved into [wall, wall + 1 ms)
    [1_005, 0.5, 1_000.123, 1_005_000n],
    [1_000, 0.5, 1_003.5, 1_000_999n],
  ])(
    'R2-9: the first reading is microsecond-true (wall %d, monotonic %d, origin %d → %d µs)',
    (wall, monotonic, origin, expected) => {
      const clock = monotonicClock({ wall: () => wall, monotonic: () => monotonic, origin: () => origin });
      expect(clock()).toBe(expected);
    },
  );

  it('R2-9: the process clock is strictly increasing over many calls', () => {
    let previous = nowMicros();
    for (let i = 0; i < 20_000; i += 1) {
      const next = nowMicros();
      expect(next > previous).toBe(true);
      previous = next;
    }
  });
});
