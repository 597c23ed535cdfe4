import { redactText } from '../../redact.js';
import { terminalSafe } from '../../terminal-text.js';

/*
 * A collector's answer as a message may show it (R4-9, R4-2, docs/otlp.md#transport): a collector
 * may echo the request back (a 401 page listing the headers it got), so the body is a diagnostic
 * that can carry our credentials, and host-controlled bytes a terminal would obey. In order:
 * bounded, every value this run sent as a header or in the URL's query or userinfo replaced by
 * `***` (exact values: whatever the collector's format), the credential-shaped text lib/redact.ts
 * does not cover (Authorization/Cookie header lines, `Bearer …`/`Basic …` tokens) masked, then
 * cut to BODY_SHOWN characters (the full length stated), then lib/redact.ts, then terminalSafe.
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

// Header lines that carry credentials, whatever the rest of the line (HTTP/1 echo, a JSON dump).
const HEADER_LINE = /\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key)(["']?\s*[:=]\s*["']?)[^\r\n"]*/gi;
// A token scheme and its token.
const TOKEN = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi;

function mask(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('***');
  return out.replace(HEADER_LINE, '$1$2***').replace(TOKEN, '$1 ***');
}

/** The first `n` UTF-16 units, never half a surrogate pair. */
function cut(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** The body as a message shows it: masked, redacted, terminal-safe, cut with its full length stated. */
export function collectorBody(body: string, secrets: readonly string[]): string {
  const trimmed = body.trim();
  // Masked before any cut (a secret across the cut cannot leave a part); redacted once cut, so
  // lib/redact.ts sees at most BODY_SHOWN characters whatever the collector sent.
  const masked = mask(trimmed.slice(0, BODY_READ), secrets);
  const safe = terminalSafe(redactText(cut(masked, BODY_SHOWN)));
  return masked.length <= BODY_SHOWN && trimmed.length <= BODY_READ
    ? safe
    : `${cut(safe, BODY_SHOWN)}… (${trimmed.length} characters in all)`;
}
