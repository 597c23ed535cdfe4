import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { SubagentContextError } from '../../errors.js';
import { redactText } from '../../redact.js';
import { describeEndpoint, type OtlpTarget } from './config.js';

/*
 * The OpenTelemetry JS exporters carry the spans (docs/otlp.md#transport): serialization (JSON or
 * protobuf), gzip, and the OTLP spec's retries (429, 502, 503, 504, honouring Retry-After, with
 * exponential back-off) within each request's timeout. Around that, this file adds what the SDK
 * leaves to its caller: a request that still failed for a reason that may pass (another 5xx, a
 * timeout, a connection error) is sent again after a growing pause, a bounded number of times; a
 * 4xx other than 429 never is, and stops the export with the endpoint named (credentials removed).
 */

export interface SpanSink {
  /** Resolves once the collector accepted all the spans; rejects with an OtlpExportError. */
  send(spans: ReadableSpan[]): Promise<void>;
  shutdown(): Promise<void>;
}

export class OtlpExportError extends SubagentContextError {
  override readonly name = 'OtlpExportError';
  constructor(
    message: string,
    /** the HTTP status, when the collector answered */
    readonly status: number | undefined,
    /** false: sending the same request again cannot succeed (a 4xx) */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface SinkOptions {
  /** one request's bound, the SDK's own retries included */
  timeoutMillis: number;
  /** further attempts of a request that failed retryably (after the SDK's own) */
  retries: number;
  /** the first pause before such an attempt; doubles each time */
  backoffMillis: number;
}

function hint(status: number): string {
  if (status === 401 || status === 403) return 'check the credentials headers (--header, OTEL_EXPORTER_OTLP_HEADERS)';
  if (status === 404) return 'check the endpoint path: OTLP/HTTP traces go to …/v1/traces (docs/otlp.md)';
  if (status === 413) return 'send smaller batches (--batch-spans)';
  if (status === 415) return 'check --protocol (http/protobuf or http/json) against what the collector accepts';
  return 'check the endpoint, --protocol and the headers (docs/otlp.md)';
}

function classify(error: unknown, url: string): OtlpExportError {
  const endpoint = describeEndpoint(url);
  const e = error as { code?: unknown; data?: unknown; message?: unknown } | undefined;
  const status = typeof e?.code === 'number' ? e.code : undefined;
  if (status !== undefined && status >= 400 && status < 500 && status !== 429) {
    // The collector's own words help; they never hold a credential of ours, but pass redaction anyway.
    const body =
      typeof e?.data === 'string' && e.data.trim() !== '' ? `: ${redactText(e.data.trim().slice(0, 300))}` : '';
    return new OtlpExportError(
      `the OTLP collector at ${endpoint} refused the batch with HTTP ${status}${body}; ${hint(status)}. Nothing was lost: the export position was not moved`,
      status,
      false,
      { cause: error },
    );
  }
  const reason = status === undefined ? String(e?.message ?? error) : `HTTP ${status}`;
  return new OtlpExportError(
    `the OTLP collector at ${endpoint} did not accept the batch (${redactText(reason)}) after retries; run the export again later: it resumes from its position`,
    status,
    true,
    { cause: error },
  );
}

export function createOtlpSink(target: OtlpTarget, options: SinkOptions): SpanSink {
  const config = {
    url: target.url,
    headers: target.headers,
    // The SDK's CompressionAlgorithm enum has exactly these string values ('gzip', 'none').
    compression: target.compression as never,
    timeoutMillis: options.timeoutMillis,
    concurrencyLimit: 1,
  };
  const exporter: SpanExporter =
    target.protocol === 'http/json' ? new JsonExporter(config) : new ProtobufExporter(config);
  const once = (spans: ReadableSpan[]) =>
    new Promise<void>((resolve, reject) => {
      exporter.export(spans, (result: ExportResult) => {
        if (result.code === 0) resolve();
        else reject(classify(result.error, target.url));
      });
    });
  return {
    async send(spans) {
      if (spans.length === 0) return;
      for (let attempt = 0; ; attempt++) {
        try {
          return await once(spans);
        } catch (err) {
          const failure = err as OtlpExportError;
          if (!failure.retryable || attempt >= options.retries) throw failure;
          await new Promise((resolve) => setTimeout(resolve, options.backoffMillis * 2 ** attempt));
        }
      }
    },
    shutdown: () => exporter.shutdown(),
  };
}
