import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { gzipSync } from 'node:zlib';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { EXPORT_DEFAULTS } from '../../defaults.js';
import { SubagentContextError } from '../../errors.js';
import { describeEndpoint, peerBody, secretsOf } from '../../peer.js';
import { terminalSafe } from '../../terminal-text.js';
import type { OtlpTarget } from './config.js';

/*
 * One OTLP/HTTP request per batch (docs/otlp.md#transport). The OpenTelemetry serializers
 * (@opentelemetry/otlp-transformer, the code the SDK's exporters use) write the body, JSON or
 * protobuf, and read the collector's answer; the request itself is made here, because what the
 * SDK's exporters keep to themselves is what this export must show: each retry as it happens
 * (attempt, status or error, next wait), the last HTTP status of a batch that never got through,
 * the collector's body, and the answer's `partialSuccess` (rejected spans), which the SDK only
 * passes to `diag.warn`.
 *
 * Retried with a doubling pause (Retry-After honoured, up to EXPORT_DEFAULTS.maxRetryAfterMs): 429
 * and every 5xx, a timeout before the answer's status, a connection error. Never retried: any other
 * 4xx, and a 2xx (the OTLP specification: the client MUST NOT retry a request the server answered
 * with partial success, and a 2xx may be one).
 *
 * Every wait is bounded (issue 48): one attempt, from connecting to the answer's last byte, takes at
 * most `timeoutMillis` whatever the collector sends or how slowly, and at most `answerBytes` of the
 * answer are read, then the connection is closed. A 2xx answer that was cut there, or that is not an
 * ExportTraceServiceResponse, says nothing of what was accepted: its outcome is unknown, never
 * success (R4-8: the run stops before that batch, its position kept, exit 3).
 */

export interface SendResult {
  /** spans the collector answered it did not accept (its partialSuccess.rejectedSpans; 0: all accepted) */
  rejectedSpans: number;
  /** its partialSuccess.errorMessage, as a message may show it (masked, terminal-safe, cut) */
  errorMessage?: string;
  /**
   * set when the collector answered 2xx but its answer could not be read (cut at a bound, or not an
   * ExportTraceServiceResponse): what it accepted is unknown (R4-8), and this says why
   */
  unknown?: string;
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
  /** one attempt's whole bound: connecting, sending, the answer's headers and body */
  timeoutMillis: number;
  /** bytes of an answer read at most (default EXPORT_DEFAULTS.answerBytes); then the connection is closed */
  answerBytes?: number;
  /** further attempts of a request that failed retryably */
  retries: number;
  /** the first pause before such an attempt; doubles each time (Retry-After wins when longer) */
  backoffMillis: number;
  /** told before each pause */
  onRetry?: (notice: RetryNotice) => void;
}

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
  /** the answer's body, as far as it was read */
  body: Buffer;
  /** why the body was not read to its end (a bound), if it was not */
  cut?: string;
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
  // R4-8: a cut answer may have held a partialSuccess; what was accepted is not known
  if (answer.cut !== undefined) return { rejectedSpans: 0, unknown: answer.cut };
  // An empty body is the empty ExportTraceServiceResponse: no partialSuccess, all accepted.
  if (answer.body.length === 0) return { rejectedSpans: 0 };
  const type = String(answer.headers['content-type'] ?? '');
  const asJson = type.includes('json') || (type === '' && json);
  let response: { partialSuccess?: { rejectedSpans?: unknown; errorMessage?: unknown } };
  try {
    // JSON read here: the serializer's JSON reader answers `{}` (all accepted) for text that is not JSON
    response = asJson
      ? JSON.parse(answer.body.toString('utf8'))
      : ProtobufTraceSerializer.deserializeResponse(answer.body);
    if (typeof response !== 'object' || response === null || Array.isArray(response))
      throw new TypeError('not an object');
  } catch {
    // R4-8 (issue 48): a 2xx whose body is not an ExportTraceServiceResponse may be a partial
    // success this reader cannot see: unknown, never taken as all accepted.
    return {
      rejectedSpans: 0,
      unknown: `the answer (${answer.body.length} bytes, ${type === '' ? 'no Content-Type' : terminalSafe(type.slice(0, 80))}) is not an OTLP ExportTraceServiceResponse`,
    };
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
    ...(message === undefined ? {} : { errorMessage: peerBody(message, secrets) }),
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

  const maxBytes = options.answerBytes ?? EXPORT_DEFAULTS.answerBytes;
  const attempt = (body: Buffer) =>
    new Promise<Answer>((resolve, reject) => {
      let req: ReturnType<typeof request>;
      let settled = false;
      /** The answer so far, once its status arrived (a bound hit after it cuts the body, it does not fail). */
      let answer: Answer | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (cut?: string) => {
        if (settled || answer === undefined) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...answer, body: Buffer.concat(chunks), ...(cut === undefined ? {} : { cut }) });
      };
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      };
      // The whole attempt's bound: before the status it is a timeout (retried); after it, the body is cut there.
      const timer = setTimeout(() => {
        const reason = `timed out after ${options.timeoutMillis} ms`;
        if (answer !== undefined) finish(`the answer's body was still arriving when the request ${reason}`);
        else fail(new Error(reason));
        req.destroy();
      }, options.timeoutMillis);
      try {
        req = request(
          url,
          { method: 'POST', headers: { ...headers, 'Content-Length': String(body.length) } },
          (res) => {
            answer = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0) };
            res.on('data', (chunk: Buffer) => {
              if (settled) return;
              const room = maxBytes - size;
              chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
              size += Math.min(chunk.length, room);
              if (chunk.length > room) {
                // Read no further: the connection is closed, whatever the collector still sends.
                finish(`the answer was cut after ${maxBytes} bytes`);
                req.destroy();
              }
            });
            res.on('end', () => finish());
            res.on('error', fail);
          },
        );
      } catch (error) {
        // Refused by Node before anything was sent (a header value it cannot send): local, not the collector's.
        clearTimeout(timer);
        throw new OtlpExportError(
          `the export could not make its request to ${endpoint}: ${networkReason(error)}; check --header and OTEL_EXPORTER_OTLP_HEADERS`,
          undefined,
          false,
          { cause: error },
        );
      }
      req.on('error', fail);
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
          if (err instanceof OtlpExportError) throw err;
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
          // A refusal's body is its text as far as it was read (an endless one is cut at the bound).
          const text = peerBody(answer.body.toString('utf8'), secrets);
          if (answer.status !== 429 && answer.status < 500)
            throw new OtlpExportError(
              `the OTLP collector at ${endpoint} refused the batch with HTTP ${answer.status}${text === '' ? '' : `: ${text}`}; ${hint(answer.status)}`,
              answer.status,
              false,
            );
          lastReason = `HTTP ${answer.status}${text === '' ? '' : `: ${text}`}`;
          const after = retryAfterMillis(answer.headers['retry-after']);
          if (after !== undefined) wait = Math.max(wait, Math.min(after, EXPORT_DEFAULTS.maxRetryAfterMs));
        }
        if (n >= attempts)
          throw new OtlpExportError(
            `the OTLP collector at ${endpoint} did not accept the batch after ${attempts} attempt(s) (last: ${lastReason}); run the export again later`,
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
