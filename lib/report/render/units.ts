/*
 * The page's human units (R4-10, docs/page.md#units): what a person reads next to a figure whose
 * exact value stays in its `value`/`datetime` attribute. Durations as "2 min 45 s", costs in
 * dollars (the ledger's unit, subcents, is named once on the page), instants as
 * "1 Dec 2026, 17:41 UTC" (dollars by lib/money.ts, R6-11), and host text cut to a length the page can carry with its full length
 * stated (R4-4), never splitting a character.
 */

/** R6-11: money has one rule, lib/money.ts; the page reads it from here as before. */
export { dollars, SUBCENTS_PER_DOLLAR } from '../../money.js';

/** Issue 58 #19: durations have one formatter, lib/units.ts (the CLI's text and the page alike). */
export { humanDuration } from '../../units.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "1 Dec 2026, 17:41 UTC" for the document's RFC 3339 UTC text (anything else is shown as it is). */
export function humanInstant(rfc3339: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(rfc3339);
  if (m === null || !rfc3339.endsWith('Z')) return rfc3339;
  const month = MONTHS[Number(m[2]) - 1];
  if (month === undefined) return rfc3339;
  return `${Number(m[3])} ${month} ${m[1]}, ${m[4]}:${m[5]} UTC`;
}

/** "1 Dec 2026" for a UTC day key (YYYY-MM-DD). */
export function humanDay(day: string): string {
  const at = humanInstant(`${day}T00:00Z`);
  return at === `${day}T00:00Z` ? day : at.slice(0, at.indexOf(','));
}

import { codePoints, cutText } from '../../text.js';

export { type Cut, codePoints, cutText } from '../../text.js';

/** A chart label: at most `max` characters, "…" where it was cut (the tables carry the full text). */
export function shortLabel(s: string, max: number): string {
  if (s.length <= max || codePoints(s) <= max) return s;
  return `${cutText(s, max - 1).text}…`;
}
