import { redactText } from './redact.js';
import { terminalSafe } from './terminal-text.js';

/*
 * How a peer this program talks to (an OTLP collector, S3) appears in what it prints: its endpoint
 * and its answers. One home for both (R4-9, R2-6, issue 57 #2 and #7), so the export's and the
 * publish's messages and results show a peer alike, on success as on failure.
 */

/**
 * An endpoint as every output shows it (R4-9): scheme://host:port/path only. Never the query (a
 * SAS `?sig=`, an Azure Functions `?code=`, a `?key=`: credentials by another name), never the
 * fragment, never `user:password@` (shown as `***@` so a reader knows the URL carried some).
 * Text that is not a URL is redacted first, then cut at its query or fragment, and made
 * terminal-safe: a password holding `#` or `?` makes the text no URL at all, and a cut before the
 * redaction would leave the password's prefix behind its `user:` (issue 48).
 */
export function describeEndpoint(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const redacted = redactText(url);
    const cut = redacted.search(/[?#]/);
    return terminalSafe(cut < 0 ? redacted : `${redacted.slice(0, cut)}?…`);
  }
  const credentials = parsed.username !== '' || parsed.password !== '' ? '***@' : '';
  const port =
    parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '') : parsed.port;
  const hostPort = port === '' ? parsed.hostname : `${parsed.hostname}:${port}`;
  return terminalSafe(`${parsed.protocol}//${credentials}${hostPort}${parsed.pathname}`);
}

/*
 * A peer's answer as a message may show it (a collector's body, S3's error text; R4-9, R4-2,
 * docs/otlp.md#transport, docs/publish.md): a peer may echo the request back (a 401 page listing the headers it got), so the body is a diagnostic
 * that can carry our credentials, and host-controlled bytes a terminal would obey. In order:
 * bounded, every value this run sent as a header or in the URL's query or userinfo replaced by
 * `***` (exact values: whatever the peer's format), then cut to BODY_SHOWN characters (the
 * full length stated), then lib/redact.ts (which also hides Authorization/Cookie header lines and
 * `Bearer …`/`Basic …` tokens), then terminalSafe.
 * The masking is linear (R4-1); redactText sees at most BODY_SHOWN characters.
 */

/** Characters of a body a message shows. */
export const BODY_SHOWN = 512;
/** Characters of a body read at all (a secret straddling the cut cannot survive: masking runs before it). */
const BODY_READ = 16_384;

/** Values shorter than this are not masked by value: `a`, `1` would blank the whole body. */
const MIN_SECRET = 4;

/** The values a body must never show: every header value sent, the URL's query values and userinfo. */
export function secretsOf(url: string, headers: Readonly<Record<string, string>>): string[] {
  const secrets = Object.values(headers);
  try {
    const parsed = new URL(url);
    secrets.push(decodeURIComponent(parsed.username), decodeURIComponent(parsed.password));
    for (const [, value] of parsed.searchParams) secrets.push(value);
    if (parsed.search.length > 1) secrets.push(parsed.search.slice(1));
  } catch {
    // not a URL: resolveOtlpTarget refuses those before any request
  }
  // Longest first: a value containing another is masked whole.
  return [...new Set(secrets.filter((s) => s.length >= MIN_SECRET))].sort((a, b) => b.length - a.length);
}

function mask(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out;
}

/** The first `n` UTF-16 units, never half a surrogate pair. */
function cut(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** The body as a message shows it: masked, redacted, terminal-safe, cut with its full length stated. */
export function peerBody(body: string, secrets: readonly string[]): string {
  const trimmed = body.trim();
  // Masked before any cut (a secret across the cut cannot leave a part); redacted once cut, so
  // lib/redact.ts sees at most BODY_SHOWN characters whatever the peer sent.
  const masked = mask(trimmed.slice(0, BODY_READ), secrets);
  const safe = terminalSafe(redactText(cut(masked, BODY_SHOWN)));
  return masked.length <= BODY_SHOWN && trimmed.length <= BODY_READ
    ? safe
    : `${cut(safe, BODY_SHOWN)}… (${trimmed.length} characters in all)`;
}
