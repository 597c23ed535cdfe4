const MAX_QUOTED = 60;

/** A value quoted for an error message, cut short so a huge field cannot flood a log line. */
export function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/** What a JSON value is, for an error message a producer's author can act on: `a number (5)`, `null`. */
export function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  // R2-6: a string may be prompt text: its length, never its content (docs/security.md)
  if (typeof value === 'string') return `a string (${value.length} characters)`;
  return `a ${typeof value} (${quote(value)})`;
}
