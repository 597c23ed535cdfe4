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

/** 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999999Z: what every stored and key form can write. */
const MIN_INSTANT: Micros = -62_135_596_800_000_000n;
const MAX_INSTANT: Micros = 253_402_300_799_999_999n;

function toMicros(m: RegExpExecArray): Micros | undefined {
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) return undefined;
  // A leap second (:60) rolls into the next minute, as PostgreSQL reads it.
  const ms = date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000;
  const fraction = BigInt((m[7] ?? '').padEnd(6, '0').slice(0, 6));
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const hours = Number(m[10]);
    const minutes = Number(m[11]);
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const us = BigInt(ms) * 1000n + fraction - BigInt(offsetMinutes) * 60_000_000n;
  return us < MIN_INSTANT || us > MAX_INSTANT ? undefined : us;
}

function parts(us: Micros): { date: string; time: string; fraction: string } {
  const ms = Number(us / 1000n) - (us % 1000n < 0n ? 1 : 0);
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  const micro = ((us % 1_000_000n) + 1_000_000n) % 1_000_000n;
  return { date: iso.slice(0, 10), time: iso.slice(11, 19), fraction: micro.toString().padStart(6, '0') };
}

/** `2026-08-12 13:24:58.123456`: fixed width, what PostgreSQL binds and what SQLite compares. */
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

/** A clock's two sources, in milliseconds: the wall clock and a monotonic one. */
export interface ClockSources {
  wall: () => number;
  monotonic: () => number;
}

/**
 * A wall clock with microsecond resolution that never goes backwards within a process (R2-9,
 * docs/time.md). The monotonic source gives the microseconds (Date.now() alone is millisecond-true);
 * it drifts from the wall clock over a long-lived process (a warm Lambda, a long benchmark), so it is
 * re-anchored whenever the two are 1 ms apart. Re-anchoring can step back (the wall clock was behind,
 * or NTP slewed it), so the result is floored at the last value given plus 1 µs: `updated_at` and
 * `capture_since` only ever move forward, and two calls never return the same instant.
 */
export function monotonicClock(sources: ClockSources): () => Micros {
  let offset: number | undefined; // wall ms minus monotonic ms
  let last: Micros | undefined;
  return () => {
    const wall = sources.wall();
    const monotonic = sources.monotonic();
    if (offset === undefined || Math.abs(monotonic + offset - wall) >= 1) offset = wall - monotonic;
    const candidate = BigInt(Math.floor((monotonic + offset) * 1000));
    last = last === undefined || candidate > last ? candidate : last + 1n;
    return last;
  };
}

/** The process's clock: see `monotonicClock`. */
export const nowMicros: () => Micros = monotonicClock({ wall: () => Date.now(), monotonic: () => performance.now() });
