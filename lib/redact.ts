/**
 * The one redaction step (docs/security.md R2-6, R4-1). It applies to diagnostics only: every log
 * line (the logger's JSON replacer), what each function throws and returns (lib/edge.ts), DLQ
 * reasons, the CLI's error messages, notes and hints, and collector bodies. The report's data
 * (table, CSV, JSON, page) is never passed through it (R4-1, docs/report.md#output-is-data). It
 * removes what must never leave: the user:password part of any URL (with or without a scheme,
 * percent-encoded, malformed, a password holding spaces, quotes, `<`, backticks or newlines) and the
 * value of any secret-named key (`password=`, `PGPASSWORD=`, `PASSWORD: x`, JSON `"password":"x"`,
 * `aws_secret_access_key=`, `X-Amz-Security-Token=`…) wherever they occur in a string, and walks
 * objects and error `cause` chains. It leaves file paths alone (`file:///…/node_modules/@scope/…`
 * has no user info). It does not recognise prompt text: reasons never quote it in the first place.
 * The table of forms it recognises is test/lib/redact.test.ts.
 *
 * Linear time (R4-1): each expression starts with a literal (`://`, `%3A%2F%2F`, `@`, a secret
 * word), so the engine only tries where one occurs; everything around it is a bounded quantifier
 * (the scheme before `://` at most 32 characters, looked up behind), every alternation is over
 * disjoint first characters, and a secret's value is found by a plain scan, not a regular
 * expression. A 1 MiB input of any shape costs a few milliseconds (`npm run bench`, "redaction").
 */

const HIDDEN = '***';

/** A scheme of at most 32 characters right before `://` (looked up behind, so no start is tried twice). */
const SCHEME_BEHIND = '(?<=[a-z][a-z0-9+.-]{0,31}:\\/\\/)';

/**
 * A URL's user info: `scheme://user:password@`. The password runs to the LAST `@` within 256
 * characters that is followed by something (a password may hold `@`, `/`, `:`, white space, quotes,
 * `<`, backticks, newlines), never across another `scheme://` nor into a stack frame's `\n    at `:
 * `file:///…/node_modules/@scope` after a URL without a password stays whole, and a `file:///` URL
 * has no user (its `//` is followed by `/`). Over-redacting a later `x@y` on the same line is the
 * price of never printing a password. The password's characters are four disjoint cases: not `:`
 * or a newline; a `:` not before `//`; a `:` before `//` that ends no scheme; a newline that starts
 * no stack frame.
 */
const URL_USERINFO = new RegExp(
  `:\\/\\/${SCHEME_BEHIND}[^\\s/?#@'"<>\`:]{0,256}:(?:[^:\\n]|:(?!\\/\\/)|(?<![a-z][a-z0-9+.-]{0,31}):(?=\\/\\/)|\\n(?!\\s{0,64}at\\s)){0,256}@(?=[^\\s@])`,
  'gi',
);
/** `scheme://token@host`: a user name alone can be the credential (a token, an access key). */
const URL_USER_ONLY = new RegExp(`:\\/\\/${SCHEME_BEHIND}[^\\s/?#@:'"<>\`]{1,4096}@(?=[\\w[])`, 'gi');
/**
 * `user:password@host…` without a scheme (a URL pasted without `postgres://`, or `//u:p@h`), found
 * from its `@`: behind it a password (no `@`, no white space or quote) after a `user:`, which starts
 * a line or follows a delimiter; after it a host. Group 1 is the user info to hide.
 */
const BARE_USERINFO =
  /@(?<=(?:^|[\s'"(<=,;`]|\/\/)([\w.~-]{1,128}:(?!\/\/)[^\s@'"<>`]{1,256})@)(?=[\w[][\w.-]{0,255}(?:[:/?#\s'"`),;]|$))/gm;
/** The same, percent-encoded: `postgres%3A%2F%2Fu%3Ap%40host` (to the last `%40` of its token). */
const ENCODED_USERINFO = /%3A%2F%2F(?<=[a-z][a-z0-9+.-]{0,31}%3A%2F%2F)(?:[^\s&'"<>`%]|%(?!2F)){0,1024}%40/gi;

/**
 * A secret-named key, as a word of its own or the end of one (`PGPASSWORD`, `aws_secret_access_key`,
 * `X-Amz-Security-Token`, `sslpassword`), optionally quoted (JSON), then `=`, `:` or `%3D`. `tokens`
 * (a count) is not a secret name; `token`, `access_token`, `session_token` are. The match starts at
 * the secret word (a longer word's start stays as it is); the value after it is found by
 * `valueEnd`.
 */
const SECRET_KEY =
  /(?:password|passwd|pwd|secret|token|api[_-]?key|credential|signature)(?:[_-]?(?:access[_-]?key|key|id))?(?![\w-])["']?\s{0,64}(?:=|:|%3D)\s{0,64}/gi;

/** Secret-looking names that name an identifier, not a secret (`client_secret_id`, `token_id`). */
const NOT_SECRET = /^[^"'=:%\s]*[_-]id["']?\s*(?:=|:|%3D)/i;

/** Where an unquoted value ends: white space, `&` (or `%26`), a quote, `,` `;` `}` `]` `)`. */
const UNQUOTED_END = /[&\s'",;}\])]|%26/g;

/**
 * The end of the value that starts at `start` (exclusive), or `start` when there is none. A quoted
 * value runs to its closing quote (one after an even run of backslashes: a backslash escapes the
 * next character); one that is never closed runs to the end of the text (a cut message still hides
 * it). Plain scans: each character is looked at a bounded number of times.
 */
function valueEnd(text: string, start: number): number {
  const quote = text[start];
  if (quote === '"' || quote === "'") {
    for (let at = text.indexOf(quote, start + 1); at !== -1; at = text.indexOf(quote, at + 1)) {
      let backslashes = 0;
      while (text.charCodeAt(at - 1 - backslashes) === 0x5c && at - 1 - backslashes > start) backslashes++;
      if (backslashes % 2 === 0) return at + 1;
    }
    return text.length;
  }
  UNQUOTED_END.lastIndex = start;
  const found = UNQUOTED_END.exec(text);
  return found === null ? text.length : found.index;
}

function hideSecretValues(text: string): string {
  let out = '';
  let kept = 0;
  SECRET_KEY.lastIndex = 0;
  for (let key = SECRET_KEY.exec(text); key !== null; key = SECRET_KEY.exec(text)) {
    const start = key.index + key[0].length;
    const end = valueEnd(text, start);
    if (end === start) {
      SECRET_KEY.lastIndex = start; // no value: not a secret parameter
      continue;
    }
    SECRET_KEY.lastIndex = end;
    if (NOT_SECRET.test(key[0])) continue;
    const quote = text[start] === '"' || text[start] === "'" ? text[start]! : '';
    const closed = quote !== '' && end - start >= 2 && text[end - 1] === quote;
    out += `${text.slice(kept, start)}${quote}${HIDDEN}${closed ? quote : ''}`;
    kept = end;
  }
  return kept === 0 ? text : out + text.slice(kept);
}

function hideBareUserinfo(text: string): string {
  let out = '';
  let kept = 0;
  BARE_USERINFO.lastIndex = 0;
  for (let at = BARE_USERINFO.exec(text); at !== null; at = BARE_USERINFO.exec(text)) {
    out += `${text.slice(kept, at.index - at[1]!.length)}${HIDDEN}`;
    kept = at.index;
  }
  return kept === 0 ? text : out + text.slice(kept);
}

/**
 * Header lines that carry credentials, whatever the rest of the line: an HTTP/1 echo of the request
 * (a collector's 401 page), a JSON dump of headers. Starts at its literal name; linear.
 */
const CREDENTIAL_HEADER =
  /\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key)(["']?\s{0,64}[:=]\s{0,64}["']?)[^\r\n"]*/gi;
/** An HTTP auth scheme and its token, anywhere (`Bearer eyJ…`, `Basic dXNlcjpw…`). */
const AUTH_TOKEN = /\b(bearer|basic)\s{1,16}[A-Za-z0-9._~+/=-]{1,8192}/gi;

export function redactText(text: string): string {
  const urls = text
    .replace(CREDENTIAL_HEADER, `$1$2${HIDDEN}`)
    .replace(AUTH_TOKEN, `$1 ${HIDDEN}`)
    .replace(ENCODED_USERINFO, (match) => `${match.slice(0, 9)}${HIDDEN}%40`)
    .replace(URL_USERINFO, `://${HIDDEN}@`)
    .replace(URL_USER_ONLY, `://${HIDDEN}@`);
  return hideSecretValues(hideBareUserinfo(urls));
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
  for (const [key, value] of Object.entries(error)) own[key] = redact(value, seen);
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
