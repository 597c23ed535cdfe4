/** Every string of a JSON document with its path (`$.checkpoint.after`). */
function stringsOf(value: unknown, path = '$'): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringsOf(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringsOf(v, `${path}.${k}`));
  return [];
}

/** RFC 3339 UTC with microseconds; nine digits where a kandev_meta key is printed as stored. */
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(?:000)?Z$/;

/**
 * What issue 25 forbids in a `--json` document, by path: an instant written as a string of
 * microseconds (13 digits or more), or a date and time that is not RFC 3339 UTC (a day key, a
 * date alone, is not an instant).
 */
export function badInstants(doc: unknown): string[] {
  return stringsOf(doc)
    .filter(([, s]) => /^\d{13,}$/.test(s) || (/^\d{4}-\d{2}-\d{2}[T ]\d/.test(s) && !RFC3339_UTC.test(s)))
    .map(([path, s]) => `${path}: ${s}`);
}

/** The instants of a document (RFC 3339 UTC strings), so a test can see it checked some. */
export function instantsIn(doc: unknown): string[] {
  return stringsOf(doc)
    .map(([, s]) => s)
    .filter((s) => RFC3339_UTC.test(s));
}
