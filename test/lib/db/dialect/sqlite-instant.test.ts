import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sqliteDialect } from '../../../../lib/db/dialect/sqlite.js';
import { parseStoredTimestamp } from '../../../../lib/time.js';
import { useTestDatabase } from '../../../support/targets.js';

/*
 * R4-3 on SQLite: `readableInstant` is a function of the connection (lib/db/dialect/sqlite.ts
 * readInstant, R4-12: ~2.5× cheaper than SQL). The oracle is the SQL it replaced, SQLite's own date
 * parser: for any text without a NUL both give the same instant or both none. A NUL is where they
 * part on purpose: that SQL read `…:00.5\0x` as an instant holding the NUL (length() and GLOB
 * stop at a NUL, substr does not), which no reader of the report could parse back.
 */

const UTC_ORACLE = (x: string) =>
  `(CASE WHEN typeof(${x}) = 'text' AND substr(${x}, 1, 4) >= '0001' AND substr(${x}, 12, 2) <= '23'` +
  ` AND strftime('%Y-%m-%d %H:%M:%S', ${x}) = replace(substr(${x}, 1, 19), 'T', ' ')` +
  ` AND NOT substr(${x}, 20) GLOB '*[^0-9.Z+:]*' AND length(rtrim(replace(substr(${x}, 20), '+00:00', ''), 'Z')) <= 10` +
  ` THEN ${sqliteDialect.comparable(x)} END)`;

/**
 * Issue 48: another offset (`±HH:MM`, as SQLite's date functions read it: hours up to 14), read as
 * the UTC instant SQLite's own strftime converts it to, the fraction's first six digits kept.
 */
const OFFSET_ORACLE = (x: string) =>
  `(CASE WHEN typeof(${x}) = 'text' AND ${x} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][ T][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*[+-][0-9][0-9]:[0-9][0-9]'` +
  ` AND substr(${x}, 1, 4) >= '0001' AND substr(${x}, 12, 2) <= '23' AND substr(${x}, -6) <> '+00:00'` +
  ` AND strftime('%Y-%m-%d %H:%M:%S', substr(${x}, 1, 19)) = replace(substr(${x}, 1, 19), 'T', ' ')` +
  ` AND (length(${x}) = 25 OR (substr(${x}, 20, 1) = '.' AND length(${x}) BETWEEN 27 AND 35 AND NOT substr(${x}, 21, length(${x}) - 26) GLOB '*[^0-9]*'))` +
  ` AND strftime('%Y', ${x}) BETWEEN '0001' AND '9999'` +
  ` THEN strftime('%Y-%m-%d %H:%M:%S', ${x}) || '.' || substr(CASE WHEN length(${x}) > 25 THEN substr(${x}, 21, length(${x}) - 26) ELSE '' END || '000000', 1, 6) END)`;

const ORACLE = (x: string) => `COALESCE(${UTC_ORACLE(x)}, ${OFFSET_ORACLE(x)})`;

const digits = (n: number, min: number, max: number) => fc.integer({ min, max }).map((v) => String(v).padStart(n, '0'));
/** Mostly a readable field, sometimes one at or past its edges (a readable value needs every field). */
const field = (usual: fc.Arbitrary<string>, odd: string[]) =>
  fc.oneof({ weight: 9, arbitrary: usual }, { weight: 1, arbitrary: fc.constantFrom(...odd) });

/** Text near an instant: every field at and past its edges, every separator and suffix SQLite parses. */
const nearInstant = fc
  .tuple(
    field(fc.constantFrom('0001', '1900', '1969', '2000', '2024', '2026', '2100', '9999'), [
      '0000',
      '+202',
      '-001',
      ' 202',
      '２０２',
      '20x6',
    ]),
    field(fc.constant('-'), ['/', '']),
    field(digits(2, 1, 12), ['00', '13', '1']),
    field(fc.constant('-'), ['/']),
    field(digits(2, 1, 31), ['00', '32', '3']),
    field(fc.constantFrom(' ', 'T'), ['t', '  ', '_', '', 'TT']),
    field(digits(2, 0, 23), ['24', '25', '9']),
    field(fc.constant(':'), ['.', '']),
    field(digits(2, 0, 59), ['60', '61']),
    field(fc.constant(':'), ['', '.']),
    field(digits(2, 0, 59), ['60', '61', '5', '']),
    fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,9}$/), fc.stringMatching(/^\.[0-9]{0,12}$/)),
    field(fc.constantFrom('', 'Z', '+00:00'), [
      'z',
      '-00:00',
      '+01:00',
      '+00:30',
      '+0000',
      '+00',
      'Z+00:00',
      '+00:00Z',
      'ZZ',
      ' ',
      '.',
      ':',
      '+',
      '\u0000',
      '\u0000x',
      '+00:00 ',
      'Z ',
      'é',
    ]),
    field(fc.constant(''), ['x', ' ', '0', 'Z', ':00']),
  )
  .map((parts) => parts.join(''));

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: nearInstant },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.uint8Array({ maxLength: 8 }).map(Buffer.from)),
  },
);

describe('R4-3 on sqlite: readableInstant reads what SQLite’s date parser reads', () => {
  const t = useTestDatabase('sqlite', { subagentTable: false });
  const read = async (value: unknown) =>
    (
      await t.db.query<{ js: string | null; sql: string | null }>(
        `SELECT ${sqliteDialect.readableInstant('$1')} AS js, ${ORACLE('$1')} AS sql`,
        [value],
      )
    )[0]!;

  it('gives the instant the SQL oracle gives, or none where it gives none, for any value without a NUL', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyValue.filter((v) => typeof v !== 'string' || !v.includes('\u0000')),
        async (value) => {
          const { js, sql } = await read(value);
          expect(js, JSON.stringify(value)).toBe(sql);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['the host’s form', '2026-08-12 13:24:58.3388988+00:00', '2026-08-12 13:24:58.338898'],
    ['RFC 3339 with Z', '2026-08-12T13:24:58.5Z', '2026-08-12 13:24:58.500000'],
    ['no fraction, no offset', '2026-08-12 13:24:58', '2026-08-12 13:24:58.000000'],
    ['29 February of a leap year', '2024-02-29 00:00:00+00:00', '2024-02-29 00:00:00.000000'],
    ['29 February of 2000 (a leap year: divisible by 400)', '2000-02-29 12:00:00Z', '2000-02-29 12:00:00.000000'],
    ['the last instant', '9999-12-31 23:59:59.999999999Z', '9999-12-31 23:59:59.999999'],
    ['29 February of 1900', '1900-02-29 00:00:00+00:00', null],
    ['another offset (issue 48)', '2026-08-12 13:24:58+01:00', '2026-08-12 12:24:58.000000'],
    ['a negative offset, nine digits', '2026-12-03 11:20:00.123456789-07:00', '2026-12-03 18:20:00.123456'],
    ['an offset past midnight', '2026-12-31 23:30:00-01:00', '2027-01-01 00:30:00.000000'],
    ['an offset SQLite does not read (15 hours)', '2026-08-12 13:24:58+15:00', null],
    ['ten fraction digits', '2026-08-12 13:24:58.1234567890Z', null],
    ['hour 24', '2026-08-12 24:00:00Z', null],
    ['year 0000', '0000-01-01 00:00:00Z', null],
    ['a NUL after the seconds', '2026-08-12 13:24:58.5\u0000x', null],
  ])('%s: %j reads as %j', async (_name, value, expected) => {
    expect((await read(value)).js).toBe(expected);
  });

  it('reads only instants lib/time.ts reads too, to the microsecond (digits past it dropped, not rounded up)', async () => {
    await fc.assert(
      fc.asyncProperty(nearInstant, async (value) => {
        const { js } = await read(value);
        if (js === null) return;
        const read6 = parseStoredTimestamp(js);
        const read9 = parseStoredTimestamp(value);
        expect(read6, value).toBeDefined();
        expect([0n, 1n], value).toContain(read9! - read6!);
      }),
      { numRuns: 1000 },
    );
  });
});
