/**
 * The one redaction step (docs/security.md R2-6). Everything that leaves the process passes through
 * it at the edge: every log line (the logger's JSON replacer), what each function throws and returns
 * (lib/edge.ts), DLQ reasons, and what the CLI and `npm start` print. It removes what must never
 * leave — the user:password part of any URL (with or without a scheme, percent-encoded, malformed,
 * a password holding spaces, quotes, `<`, backticks or newlines) and the value of any secret-named
 * key (`password=`, `PGPASSWORD=`, `PASSWORD: x`, JSON `"password":"x"`, `aws_secret_access_key=`,
 * `X-Amz-Security-Token=`…) — wherever they occur in a string, and walks objects and error `cause`
 * chains. It leaves file paths alone (`file:///…/node_modules/@scope/…` has no user info). It does
 * not recognise prompt text: reasons never quote it in the first place. The table of forms it
 * recognises is test/lib/redact.test.ts.
 */

const HIDDEN = '***';

/**
 * A URL's user info: `scheme://user:password@`. The password runs to the LAST `@` within 256
 * characters that is followed by something (a password may hold `@`, `/`, `:`, white space, quotes,
 * `<`, backticks, newlines), never across another `scheme://` nor into a stack frame's `\n    at `:
 * `file:///…/node_modules/@scope` after a URL without a password stays whole, and a `file:///` URL
 * has no user (its `//` is followed by `/`). Over-redacting a later `x@y` on the same line is the
 * price of never printing a password.
 */
const URL_USERINFO =
  /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>`]*:(?:(?![a-z][a-z0-9+.-]*:\/\/|\n\s*at\s)[\s\S]){0,256}@(?=[^\s@])/gi;
/** `scheme://token@host`: a user name alone can be the credential (a token, an access key). */
const URL_USER_ONLY = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@:'"<>`]+@(?=[\w[])/gi;
/** `user:password@host…` without a scheme (a URL pasted without `postgres://`, or `//u:p@h`). */
const BARE_USERINFO = /(^|[\s'"(<=,;`]|\/\/)([\w.~-]+):(?!\/\/)[^\s@'"<>`]+@(?=[\w[][\w.-]*(?:[:/?#\s'"`]|$))/gim;
/** The same, percent-encoded: `postgres%3A%2F%2Fu%3Ap%40host` (to the last `%40` of its token). */
const ENCODED_USERINFO = /\b([a-z][a-z0-9+.-]*%3A%2F%2F)(?:(?!%2F)[^\s&'"<>`])*%40/gi;

/**
 * A secret-named key, as a word of its own or the end of one (`PGPASSWORD`, `aws_secret_access_key`,
 * `X-Amz-Security-Token`, `sslpassword`), optionally quoted (JSON), then `=`, `:` or `%3D`. `tokens`
 * (a count) is not a secret name; `token`, `access_token`, `session_token` are.
 */
const SECRET_KEY =
  /([\w-]*(?:password|passwd|pwd|secret|token|api[_-]?key|credential|signature)(?:[_-]?(?:access[_-]?key|key|id))?)(?![\w-])/i
    .source;
const SECRET_PARAMETER = new RegExp(
  `(${SECRET_KEY}(["']?)(\\s*(?:=|:|%3D)\\s*))("(?:\\\\.|[^"\\\\])*"|'(?:\\\\.|[^'\\\\])*'|(?:(?!%26)[^&\\s'",;}\\])])+)`,
  'gi',
);

/** Names that look like secret keys and are not (identifiers, not values). */
const NOT_SECRET = /^(?:[\w-]*_id|access[_-]?key[_-]?id|aws_access_key_id|tokens?_?count)$/i;

export function redactText(text: string): string {
  return text
    .replace(ENCODED_USERINFO, `$1${HIDDEN}%40`)
    .replace(URL_USERINFO, `$1${HIDDEN}@`)
    .replace(URL_USER_ONLY, (match, scheme: string) =>
      /^(?:file|data|blob):/i.test(scheme) ? match : `${scheme}${HIDDEN}@`,
    )
    .replace(BARE_USERINFO, (match, before: string, user: string) =>
      user === HIDDEN || user.endsWith('*') ? match : `${before}${HIDDEN}@`,
    )
    .replace(SECRET_PARAMETER, (match, head: string, key: string, _quote: string, _sep: string, value: string) => {
      if (NOT_SECRET.test(key) || value === HIDDEN || value.startsWith(`${HIDDEN}`)) return match;
      const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
      return `${head}${quote}${HIDDEN}${quote}`;
    });
}

/**
 * A JSON-safe copy of an error with every string redacted, `cause` included (recursively,
 * cycle-safe): its name, message and stack, and each own enumerable property.
 */
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

/** Any value with every string in it redacted (plain objects and arrays copied; errors via redactError). */
export function redact<T>(value: T, seen = new WeakSet<object>()): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (value instanceof Error) return redactError(value, seen) as T;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]' as T;
  seen.add(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, seen)) as T;
  // only plain records are copied: a Date, Map or class instance is returned as it is
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
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
