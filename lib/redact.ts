/**
 * The one redaction helper (docs/security.md R2-6): every log line (the logger's JSON replacer),
 * error report, DLQ reason and CLI output passes through it. It removes what must never leave the
 * process — the user:password part of any URL (even a malformed one) and secret-looking query or
 * key=value parameters — wherever they occur in a string, and walks objects and error `cause`
 * chains. It does not recognise prompt text: reasons never quote it in the first place.
 */

const HIDDEN = '***';

/** scheme://<anything up to the last @ of the token>@ → scheme://***@ (a password may hold @, / or :) */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s'"<>`]*@/gi;
/** ?password=…, &token=…, sslpassword=… (libpq key=value too) */
const SECRET_PARAMETER =
  /\b(password|passwd|pwd|sslpassword|secret|token|api[_-]?key|access[_-]?token|x-amz-signature|x-amz-credential|x-amz-security-token)(\s*=\s*)[^&\s'"]+/gi;

export function redactText(text: string): string {
  return text.replace(URL_USERINFO, `$1${HIDDEN}@`).replace(SECRET_PARAMETER, `$1$2${HIDDEN}`);
}

/** A JSON-safe copy of an error with every string redacted, `cause` included (recursively, cycle-safe). */
export function redactError(error: unknown, seen = new WeakSet<object>()): Record<string, unknown> | string {
  if (!(error instanceof Error))
    return typeof error === 'string' ? redactText(error) : (redact(error, seen) as Record<string, unknown>);
  if (seen.has(error)) return '[circular]';
  seen.add(error);
  const own: Record<string, unknown> = { name: error.name, message: redactText(error.message) };
  for (const [key, value] of Object.entries(error)) if (key !== 'cause') own[key] = redact(value, seen);
  if (error.stack) own.stack = redactText(error.stack);
  if (error.cause !== undefined) own.cause = redactError(error.cause, seen);
  return own;
}

/** Any value with every string in it redacted (objects and arrays copied; errors via redactError). */
export function redact<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (value instanceof Error) return redactError(value, seen) as T;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]' as T;
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, seen)) as T;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redact(item, seen)])) as T;
}

/**
 * For Powertools Logger's `jsonReplacerFn`: JSON.stringify calls it for every value of every log
 * line, nested ones and formatted errors' messages, stacks and causes included, so redacting each
 * string covers them all.
 */
export function redactingReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? redactText(value) : value;
}
