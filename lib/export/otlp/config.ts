import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import { SubagentContextError } from '../../errors.js';
import { describeEndpoint } from '../../peer.js';
import { terminalSafe } from '../../terminal-text.js';

/*
 * Where and how spans go (docs/otlp.md#configuration): the flags win, then the standard
 * OpenTelemetry variables (signal-specific `_TRACES_` forms before the general ones), then the
 * OTLP defaults. Only OTLP/HTTP: `http/protobuf` (the OTLP default) or `http/json`.
 */

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

export interface OtlpTarget {
  /** the full traces URL the requests go to */
  url: string;
  protocol: OtlpProtocol;
  /** sent with every request; never printed (credentials) */
  headers: Record<string, string>;
  compression: 'gzip' | 'none';
}

export interface OtlpFlags {
  /** `--otlp <url>`: a bare origin (no path) gets `/v1/traces`, as the general variable does; a path is used as given */
  url?: string;
  /** `--header k=v`, repeatable */
  headers?: readonly string[];
  protocol?: string;
  compression?: string;
}

export class OtlpConfigError extends SubagentContextError {
  override readonly name = 'OtlpConfigError';
}

function withTracesPath(base: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}v1/traces`;
}

function resolveUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw =
    flag === undefined
      ? (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
        (env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : withTracesPath(env.OTEL_EXPORTER_OTLP_ENDPOINT)))
      : flag;
  if (raw === undefined || raw.trim() === '')
    throw new OtlpConfigError(
      'no OTLP endpoint: pass --otlp http://collector:4318 (or the full traces URL), or set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    );
  // issue 58 #13: `localhost:4318` parses as a URL of scheme "localhost:"; it is a host and port
  // without a scheme, said so as typed, with the URL it most likely means
  const hostPort = /^[\w.-]+:\d{1,5}(?:\/\S*)?$/.exec(raw.trim())?.[0];
  if (hostPort !== undefined)
    throw new OtlpConfigError(
      `the OTLP endpoint ${describeEndpoint(JSON.stringify(raw))} has no scheme: give the URL with http:// or https://, e.g. http://${hostPort}`,
    );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OtlpConfigError(
      `the OTLP endpoint ${describeEndpoint(JSON.stringify(raw))} is not a URL; give e.g. http://127.0.0.1:4318`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OtlpConfigError(
      `the OTLP endpoint ${describeEndpoint(raw)} is not http(s): only OTLP/HTTP is supported (gRPC is not); use the collector's HTTP port (4318)`,
    );
  if (flag === undefined || (url.pathname !== '/' && url.pathname !== '')) return raw;
  url.pathname = '/v1/traces'; // keeps any user:password and query the URL carries
  return url.toString();
}

function resolveProtocol(flag: string | undefined, env: NodeJS.ProcessEnv): OtlpProtocol {
  const raw = flag ?? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if ((OTLP_PROTOCOLS as readonly string[]).includes(raw)) return raw as OtlpProtocol;
  throw new OtlpConfigError(
    `OTLP protocol "${raw}" is not supported: use http/protobuf or http/json (--protocol, OTEL_EXPORTER_OTLP_PROTOCOL)`,
  );
}

/** An HTTP field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * An HTTP field value as Node sends it (RFC 9110 field-value: visible ASCII, space, tab, obs-text
 * as single bytes): anything else (`Ωmega`, a line feed) Node refuses at the request, which would
 * otherwise look like a collector's failure and be retried (issue 48).
 */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Refuses a header Node could not send, naming where it came from; never its value (a credential). */
function checkHeader(name: string, value: string, from: string): void {
  if (name === '' || !HEADER_NAME.test(name))
    throw new OtlpConfigError(`${from} needs name=value with a valid HTTP header name (the value is not shown)`);
  if (!HEADER_VALUE.test(value))
    throw new OtlpConfigError(
      `${from} ${terminalSafe(name)}: the value is not a valid HTTP header value (visible ASCII, spaces and tabs only; percent-encode anything else); the value is not shown`,
    );
}

function resolveHeaders(flags: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'])
    for (const [name, value] of Object.entries(parseKeyPairsIntoRecord(env[variable]))) {
      checkHeader(name, value, variable);
      headers[name] = value;
    }
  for (const flag of flags) {
    const at = flag.indexOf('=');
    const name = at < 0 ? '' : flag.slice(0, at).trim();
    // Never echo the value: a header is usually a credential.
    checkHeader(name, flag.slice(at + 1), '--header');
    headers[name] = flag.slice(at + 1);
  }
  return headers;
}

function resolveCompression(flag: string | undefined, env: NodeJS.ProcessEnv): 'gzip' | 'none' {
  const raw = flag ?? env.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION ?? env.OTEL_EXPORTER_OTLP_COMPRESSION ?? 'gzip';
  if (raw === 'gzip' || raw === 'none') return raw;
  throw new OtlpConfigError(`OTLP compression "${raw}" is not supported: use gzip or none`);
}

export function resolveOtlpTarget(flags: OtlpFlags, env: NodeJS.ProcessEnv): OtlpTarget {
  return {
    url: resolveUrl(flags.url, env),
    protocol: resolveProtocol(flags.protocol, env),
    headers: resolveHeaders(flags.headers ?? [], env),
    compression: resolveCompression(flags.compression, env),
  };
}
