/**
 * Instants are carried as bigint microseconds since the Unix epoch, UTC.
 * JavaScript `Date` is millisecond-true only, so it never carries a stored value (docs/time.md).
 */
export type Micros = bigint;

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/** Strict RFC 3339 with an offset: the form a frame's `observed_at` must have. */
export function parseRfc3339(text: string): Micros | undefined {
  const m = RFC3339.exec(text);
  if (!m || (m[8] === undefined && m[9] === undefined)) return undefined;
  return toMicros(m);
}

/**
 * Any stored form: RFC 3339 (keys), PostgreSQL `timestamp` text, or the host's SQLite text
 * (`2026-07-30 01:39:37.5+00:00`). A value without an offset is UTC by the host's convention.
 */
export function parseStoredTimestamp(text: string): Micros | undefined {
  const m = RFC3339.exec(text.trim());
  return m ? toMicros(m) : undefined;
}

/**
 * A host text instant with an offset other than UTC, in SQLite's and Go's layouts (mattn/go-sqlite3
 * writes `2006-01-02 15:04:05.999999999-07:00`; SQLite reads `±HH:MM` too): `T` or ' ' between
 * date and time, up to nine fraction digits, any offset `±HH:MM` up to ±14:59 (as far as SQLite's
 * own date functions read one).
 */
const OFFSET_TEXT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?()([+-])(\d{2}):(\d{2})$/;

/**
 * R4-3, issue 48: the host's text with an offset (`2026-12-03 18:20:00+02:00` is 16:20 UTC), as
 * fixed-width UTC `YYYY-MM-DD HH:MM:SS.ffffff` (further digits dropped, as SQLite's comparable
 * form drops them), else null: the slow path of the SQLite dialect's one
 * instant reader (lib/db/dialect/sqlite.ts readInstant), which reads UTC forms in place. A leap
 * second is no instant there, so none here.
 */
export function utcTextOfOffsetInstant(value: string): string | null {
  const m = OFFSET_TEXT.exec(value);
  if (m === null || m[6] === '60' || Number(m[10]) > 14) return null;
  const fraction = (m[7] ?? '').padEnd(9, '0');
  // the microseconds exactly: digits past them are dropped, never rounded up (as the fast path)
  const truncated = [...m] as unknown as RegExpExecArray;
  truncated[7] = fraction.slice(0, 6);
  const us = toMicros(truncated);
  if (us === undefined) return null;
  return formatCanonical(us);
}

/** 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999Z: what every stored and key form can write. */
export const MIN_INSTANT: Micros = -62_135_596_800_000_000n;
const MAX_INSTANT: Micros = 253_402_300_799_999_999n;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil), as `Date` counts them. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * Plain integer arithmetic (no `Date`, two BigInt conversions): every ingested frame's
 * `observed_at` comes through here, so it is on the ingest hot path (issue 14).
 */
function toMicros(m: RegExpExecArray): Micros | undefined {
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  if (day > (month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!)) return undefined;
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const hours = Number(m[10]);
    const minutes = Number(m[11]);
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  // A leap second (:60) rolls into the next minute, as PostgreSQL reads it. Whole seconds stay
  // far below 2^53, so only the final microseconds need a bigint.
  const seconds = daysFromCivil(year, month, day) * 86_400 + (hour * 60 + minute - offsetMinutes) * 60 + second;
  // Digits beyond the microsecond (the host's SQLite driver and Go's RFC3339Nano write up to nine)
  // round up to the next microsecond, never down: an instant read here is never earlier than the
  // one written (R3-2), so a key, a frame's observed_at or a high-water mark cannot move backwards.
  const digits = m[7];
  const fraction =
    digits === undefined
      ? 0
      : digits.length <= 6
        ? Number(digits.padEnd(6, '0'))
        : Number(digits.slice(0, 6)) + (/[1-9]/.test(digits.slice(6)) ? 1 : 0);
  const total = seconds * 1_000_000 + fraction;
  const us = Number.isSafeInteger(total) ? BigInt(total) : BigInt(seconds) * 1_000_000n + BigInt(fraction);
  return us < MIN_INSTANT || us > MAX_INSTANT ? undefined : us;
}

/** The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's civil_from_days). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Integer arithmetic, no `Date`: every written row formats two instants (issue 14, hot path). */
function parts(us: Micros): { date: string; time: string; fraction: string } {
  let seconds = Number(us / 1_000_000n);
  let micro = Number(us % 1_000_000n);
  if (micro < 0) {
    micro += 1_000_000;
    seconds -= 1;
  }
  const days = Math.floor(seconds / 86_400);
  const ofDay = seconds - days * 86_400;
  const [year, month, day] = civilFromDays(days);
  return {
    date: `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`,
    time: `${pad(Math.floor(ofDay / 3600), 2)}:${pad(Math.floor(ofDay / 60) % 60, 2)}:${pad(ofDay % 60, 2)}`,
    fraction: pad(micro, 6),
  };
}

/** `2026-08-12 13:24:58.123456`: fixed width, what PostgreSQL binds and what SQLite compares. */
/** The later of two instants (Math.max takes numbers, not bigint). */
export function latestOf(a: Micros, b: Micros): Micros {
  // biome-ignore lint/complexity/useMathMinMax: bigint
  return a > b ? a : b;
}

/** The earlier of two instants. */
export function earliestOf(a: Micros, b: Micros): Micros {
  // biome-ignore lint/complexity/useMathMinMax: bigint
  return a < b ? a : b;
}

export function formatCanonical(us: Micros): string {
  const p = parts(us);
  return `${p.date} ${p.time}.${p.fraction}`;
}

/** The host's SQLite text form: trailing zeros of the fraction trimmed, `+00:00` suffix. */
export function formatHostSqlite(us: Micros): string {
  const p = parts(us);
  const fraction = p.fraction.replace(/0+$/, '');
  return `${p.date} ${p.time}${fraction ? `.${fraction}` : ''}+00:00`;
}

/** `2026-08-12T13:24:58.123456Z`: what reports and reads return. */
export function formatRfc3339(us: Micros): string {
  const p = parts(us);
  return `${p.date}T${p.time}.${p.fraction}Z`;
}

/** `2026-08-12T13:24:58.123456000Z`: the `kandev_meta` key form (docs/migrate.md#6-the-keys). */
export function formatKey(us: Micros): string {
  const p = parts(us);
  return `${p.date}T${p.time}.${p.fraction}000Z`;
}

/** A clock's sources, in milliseconds: the wall clock, a monotonic one, and where the monotonic one starts. */
export interface ClockSources {
  /** whole milliseconds (`Date.now()`): the true instant is in [wall, wall + 1) */
  wall: () => number;
  monotonic: () => number;
  /**
   * the wall clock at the monotonic source's zero, with its fraction (`performance.timeOrigin`,
   * which Node reads once at start with microseconds): the first anchor, so even the first reading
   * is microsecond-true (docs/time.md#the-writers-clock), not a whole millisecond
   */
  origin?: () => number;
}

/**
 * A wall clock with microsecond resolution that never goes backwards within a process (R2-9,
 * docs/time.md). The monotonic source gives the microseconds (Date.now() alone is millisecond-true),
 * anchored to `origin`. It drifts from the wall clock over a long-lived process (a warm Lambda, a
 * long benchmark), so whenever the estimate leaves [wall, wall + 1 ms), the only range Date.now()
 * allows, it is moved to the nearest end of it. Moving back can step back (the wall clock was
 * behind, or NTP slewed it), so the result is floored at the last value given plus 1 µs:
 * `updated_at` and `capture_since` only ever move forward, and two calls never return the same instant.
 */
export function monotonicClock(sources: ClockSources): () => Micros {
  let offset: number | undefined; // wall ms minus monotonic ms
  let last: Micros | undefined;
  return () => {
    const wall = sources.wall();
    const monotonic = sources.monotonic();
    offset ??= sources.origin?.() ?? wall - monotonic;
    const estimate = monotonic + offset;
    if (estimate < wall) offset = wall - monotonic;
    else if (estimate >= wall + 1) offset = wall + 0.999 - monotonic;
    const candidate = BigInt(Math.floor((monotonic + offset) * 1000));
    last = last === undefined || candidate > last ? candidate : last + 1n;
    return last;
  };
}

/** The process's clock: see `monotonicClock`. */
export const nowMicros: () => Micros = monotonicClock({
  wall: () => Date.now(),
  monotonic: () => performance.now(),
  origin: () => performance.timeOrigin,
});
