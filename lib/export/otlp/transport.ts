import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { gzipSync } from 'node:zlib';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SubagentContextError } from '../../errors.js';
import { terminalSafe } from '../../terminal-text.js';
import { collectorBody, secretsOf } from './body.js';
import { describeEndpoint, type OtlpTarget } from './config.js';

/*
 * One OTLP/HTTP request per batch (docs/otlp.md#transport). The OpenTelemetry serializers
 * (@opentelemetry/otlp-transformer, the code the SDK's exporters use) write the body, JSON or
 * protobuf, and read the collector's answer; the request itself is made here, because what the
 * SDK's exporters keep to themselves is what this export must show: each retry as it happens
 * (attempt, status or error, next wait), the last HTTP status of a batch that never got through,
 * the collector's body, and the answer's `partialSuccess` (rejected spans), which the SDK only
 * passes to `diag.warn`.
 *
 * Retried with a doubling pause (Retry-After honoured, up to MAX_WAIT_MS): 429 and every 5xx, a
 * timeout, a connection error. Never retried: any other 4xx, and a partial success (the OTLP
 * specification: the client MUST NOT retry a request the server answered with partial success).
 */

export interface SendResult {
  /** spans the collector answered it did not accept (its partialSuccess.rejectedSpans; 0: all accepted) */
  rejectedSpans: number;
  /** its partialSuccess.errorMessage, as a message may show it (masked, terminal-safe, cut) */
  errorMessage?: string;
}

export interface SpanSink {
  /** Resolves once the collector answered 2xx (with what it rejected, if anything); rejects with an OtlpExportError. */
  send(spans: ReadableSpan[]): Promise<SendResult>;
  shutdown(): Promise<void>;
}

export class OtlpExportError extends SubagentContextError {
  override readonly name = 'OtlpExportError';
  constructor(
    message: string,
    /** the last HTTP status, when the collector answered */
    readonly status: number | undefined,
    /** false: sending the same request again cannot succeed (a 4xx) */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a retry line says (the CLI prints it on stderr as it happens). */
export interface RetryNotice {
  /** the attempt that failed, from 1 */
  attempt: number;
  /** attempts in all */
  attempts: number;
  /** `HTTP 503` or the connection error (`ECONNREFUSED`, `timed out after 10000 ms`) */
  reason: string;
  /** the pause before the next attempt */
  waitMillis: number;
}

export interface SinkOptions {
  /** one attempt's bound */
  timeoutMillis: number;
  /** further attempts of a request that failed retryably */
  retries: number;
  /** the first pause before such an attempt; doubles each time (Retry-After wins when longer) */
  backoffMillis: number;
  /** told before each pause */
  onRetry?: (notice: RetryNotice) => void;
}

/** The longest pause a Retry-After may ask for: beyond it the run fails and resumes later instead. */
const MAX_WAIT_MS = 60_000;
/** Bytes of an answer read at all (a partialSuccess or an error page is small). */
const MAX_ANSWER_BYTES = 1 << 20;

function hint(status: number): string {
  if (status === 401 || status === 403) return 'check the credentials headers (--header, OTEL_EXPORTER_OTLP_HEADERS)';
  if (status === 404) return 'check the endpoint path: OTLP/HTTP traces go to …/v1/traces (docs/otlp.md)';
  if (status === 413) return 'send smaller batches (--batch-spans)';
  if (status === 415) return 'check --protocol (http/protobuf or http/json) against what the collector accepts';
  return 'check the endpoint, --protocol and the headers (docs/otlp.md)';
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Seconds or an HTTP date (RFC 9110, section 10.2.3); undefined when absent or unreadable. */
function retryAfterMillis(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The answer's partialSuccess, from either encoding (the serializers' own readers). */
function partialSuccess(answer: Answer, json: boolean, secrets: readonly string[]): SendResult {
  if (answer.body.length === 0) return { rejectedSpans: 0 };
  const type = String(answer.headers['content-type'] ?? '');
  const asJson = type.includes('json') || (type === '' && json);
  let response: { partialSuccess?: { rejectedSpans?: unknown; errorMessage?: unknown } };
  try {
    response = (asJson ? JsonTraceSerializer : ProtobufTraceSerializer).deserializeResponse(answer.body) as never;
  } catch {
    // A 2xx whose body is not an ExportTraceServiceResponse: accepted, as the SDK would take it.
    return { rejectedSpans: 0 };
  }
  const partial = response?.partialSuccess;
  if (partial === undefined || partial === null) return { rejectedSpans: 0 };
  // int64: a number, a decimal string (OTLP/JSON) or a Long-like from the protobuf reader
  const raw = partial.rejectedSpans;
  const rejected = raw === undefined || raw === null ? 0 : Number(String(raw));
  const message =
    typeof partial.errorMessage === 'string' && partial.errorMessage !== '' ? partial.errorMessage : undefined;
  return {
    rejectedSpans: Number.isFinite(rejected) && rejected > 0 ? rejected : 0,
    ...(message === undefined ? {} : { errorMessage: collectorBody(message, secrets) }),
  };
}

/** The connection error's code where Node gives one (ECONNREFUSED), else its message. */
/** A TLS client that met a plain-HTTP server: OpenSSL's "wrong version number" (EPROTO, or the ERR_SSL code). */
function plainHttpAnswer(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return (
    e?.code === 'EPROTO' ||
    e?.code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    /wrong version number/i.test(String(e?.message))
  );
}

function networkReason(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  return terminalSafe(typeof e?.code === 'string' ? e.code : String(e?.message ?? error));
}

export function createOtlpSink(target: OtlpTarget, options: SinkOptions): SpanSink {
  const json = target.protocol === 'http/json';
  const url = new URL(target.url);
  const endpoint = describeEndpoint(target.url);
  const secrets = secretsOf(target.url, target.headers);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const headers: Record<string, string> = {
    ...target.headers,
    'Content-Type': json ? 'application/json' : 'application/x-protobuf',
    'User-Agent': 'subagent-context',
  };
  if (target.compression === 'gzip') headers['Content-Encoding'] = 'gzip';
  // A URL's user:password is sent as Basic authentication by Node's own http.request (decoded, and
  // only where no Authorization header is given, in any case): `url` goes to it as it is.

  const attempt = (body: Buffer) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'Content-Length': String(body.length) },
          timeout: options.timeoutMillis,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
          });
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timed out after ${options.timeoutMillis} ms`)));
      req.on('error', reject);
      req.end(body);
    });

  return {
    async send(spans) {
      if (spans.length === 0) return { rejectedSpans: 0 };
      const serialized = (json ? JsonTraceSerializer : ProtobufTraceSerializer).serializeRequest(spans);
      if (serialized === undefined) throw new OtlpExportError('the spans could not be serialized', undefined, false);
      const raw = Buffer.from(serialized);
      const body = target.compression === 'gzip' ? gzipSync(raw) : raw;
      const attempts = options.retries + 1;
      let lastStatus: number | undefined;
      let lastReason = '';
      for (let n = 1; ; n++) {
        let answer: Answer | undefined;
        let wait = options.backoffMillis * 2 ** (n - 1);
        try {
          answer = await attempt(body);
        } catch (err) {
          lastReason = networkReason(err);
          lastStatus = undefined;
          // issue 51: https to a plain-HTTP receiver fails the TLS handshake the same way every time
          if (url.protocol === 'https:' && plainHttpAnswer(err))
            throw new OtlpExportError(
              `the OTLP collector at ${endpoint} answered the TLS handshake in plain HTTP (${lastReason}): it speaks http, not https; use --otlp http://${url.host}${url.pathname === '/v1/traces' ? '' : url.pathname}`,
              undefined,
              false,
            );
        }
        if (answer !== undefined) {
          lastStatus = answer.status;
          if (answer.status >= 200 && answer.status < 300) return partialSuccess(answer, json, secrets);
          const text = collectorBody(answer.body.toString('utf8'), secrets);
          if (answer.status !== 429 && answer.status < 500)
            throw new OtlpExportError(
              `the OTLP collector at ${endpoint} refused the batch with HTTP ${answer.status}${text === '' ? '' : `: ${text}`}; ${hint(answer.status)}`,
              answer.status,
              false,
            );
          lastReason = `HTTP ${answer.status}${text === '' ? '' : `: ${text}`}`;
          const after = retryAfterMillis(answer.headers['retry-after']);
          if (after !== undefined) wait = Math.max(wait, Math.min(after, MAX_WAIT_MS));
        }
        if (n >= attempts)
          throw new OtlpExportError(
            `the OTLP collector at ${endpoint} did not accept the batch after ${attempts} attempt(s) (last: ${lastReason}); run the export again later: it resumes from its position`,
            lastStatus,
            true,
          );
        options.onRetry?.({
          attempt: n,
          attempts,
          reason: lastStatus === undefined ? lastReason : `HTTP ${lastStatus}`,
          waitMillis: wait,
        });
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    },
    shutdown: async () => {},
  };
}
