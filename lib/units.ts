/**
 * Human units for text a person reads (issue 34): the one duration formatter for the CLI's
 * messages and summaries, the local stack's summary, the report table and the page (issue 58
 * #19: `lib/report/render/units.ts` re-exports it, so `migrate` and the page never disagree on
 * one duration). Data outputs (`--json`, CSV) keep their exact integers; this is for prose and
 * tables meant to be read.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const count = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

/**
 * A duration in milliseconds as a person says it, at most two units, rounded at the smaller
 * one: `850 ms`, `4.1 s`, `48.2 s`, `2 min 5 s`, `3 h 12 min`, `1 day 3 h`, `111 days`
 * (9,606,141,869 ms). Seconds keep a tenth up to a minute (the page's `48.2 s`, docs/page.md#units);
 * a lag of days is said in days (issue 34). Below a millisecond it keeps three decimals
 * (`0.125 ms`). Negative durations keep their sign; a non-finite value is printed as JavaScript
 * spells it.
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${humanDuration(-ms)}`;
  if (ms < 1) return `${Number(ms.toFixed(3))} ms`;
  if (Math.round(ms) < SECOND) return `${Math.round(ms)} ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${tenths % 10 === 0 ? tenths / 10 : (tenths / 10).toFixed(1)} s`;
  const seconds = Math.round(ms / SECOND);
  if (seconds < 3600) {
    const s = seconds % 60;
    return `${Math.floor(seconds / 60)} min${s === 0 ? '' : ` ${s} s`}`;
  }
  const minutes = Math.round(ms / MINUTE);
  if (minutes < 24 * 60) {
    const m = minutes % 60;
    return `${Math.floor(minutes / 60)} h${m === 0 ? '' : ` ${m} min`}`;
  }
  const hours = Math.round(ms / HOUR);
  const days = Math.floor(hours / 24);
  if (days < 10) {
    const h = hours % 24;
    return `${plural(days, 'day', 'days')}${h === 0 ? '' : ` ${h} h`}`;
  }
  return plural(Math.round(ms / DAY), 'day', 'days');
}
