import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

/*
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (docs/otlp.md#testing): it accepts
 * `POST /v1/traces` as http/json or http/protobuf (gzip or not), decodes protobuf with the official
 * OTLP definitions (local/otlp-proto, through protobufjs: not the exporter's serializer),
 * and answers as a test scripts (default 200; a status, a partial success in the request's
 * encoding, a Retry-After, a body, the request's headers echoed). Spans of 2xx requests only are
 * `spans` (a partial success's included: the receiver does not pick which it rejected); every
 * request is in `requests`.
 */

const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), 'otlp-proto');

let serviceRoot: protobuf.Root | undefined;
function traceService(): protobuf.Root {
  if (!serviceRoot) {
    serviceRoot = new protobuf.Root();
    serviceRoot.resolvePath = (_origin, target) => join(PROTO_DIR, target);
    serviceRoot.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  }
  return serviceRoot;
}
const exportRequestType = () =>
  traceService().lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const exportResponseType = () =>
  traceService().lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');

/**
 * A scripted answer: a status (default 200), a partial success (a 2xx whose body says spans were
 * rejected, in the request's own encoding, as the OTLP specification has it), a Retry-After, a
 * body of its own, or `echoHeaders`: the body lists the request's headers, as some collectors'
 * error pages do (a test that credentials never reach any output).
 */
export interface ScriptedAnswer {
  status?: number;
  partialSuccess?: { rejectedSpans: number; errorMessage?: string };
  retryAfter?: string;
  body?: string;
  echoHeaders?: boolean;
  /**
   * a hostile collector (issue 48): after the status and headers, `chunk` is written again and
   * again without end (every `everyMs`, or as fast as the socket takes it when 0) until the client
   * closes the connection
   */
  endless?: { chunk: string; everyMs: number };
}

function answerBody(answer: ScriptedAnswer, status: number, json: boolean, req: IncomingMessage): string | Buffer {
  if (answer.echoHeaders)
    return Object.entries(req.headers)
      .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`)
      .join('\r\n');
  if (answer.body !== undefined) return answer.body;
  if (status >= 300) return status === 400 ? 'invalid span: trace_id' : 'unavailable';
  if (answer.partialSuccess === undefined) return json ? '{}' : '';
  const partial = answer.partialSuccess;
  if (json)
    // OTLP/JSON: int64 as a decimal string is what the proto3 JSON mapping writes
    return JSON.stringify({
      partialSuccess: { rejectedSpans: String(partial.rejectedSpans), errorMessage: partial.errorMessage ?? '' },
    });
  const type = exportResponseType();
  return Buffer.from(type.encode(type.fromObject({ partialSuccess: partial })).finish());
}

export type AttributeValue = string | number | boolean;

/** One received span, the same shape whichever encoding carried it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, AttributeValue>;
  status: { code: number; message: string };
  resource: Record<string, AttributeValue>;
  scope: string;
  /** the resource's and the scope's schema_url ('' when absent) */
  resourceSchemaUrl: string;
  scopeSchemaUrl: string;
}

export interface ReceivedRequest {
  contentType: string;
  contentEncoding: string | undefined;
  headers: IncomingMessage['headers'];
  answered: number;
  /** the rejectedSpans this request was answered with (0: none) */
  rejected: number;
  spans: ReceivedSpan[];
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port> (the base; traces go to /v1/traces) */
  readonly origin: string;
  readonly requests: ReceivedRequest[];
  /** spans of the requests answered 2xx */
  readonly spans: ReceivedSpan[];
  /** request bodies received, as sent (compressed) */
  readonly bytes: number;
  /** the answers to the next requests, in order (then 200): a status or a ScriptedAnswer */
  respond(...answers: (number | ScriptedAnswer)[]): void;
  /** forgets the requests, spans and answers not yet given (a test's next case starts clean) */
  reset(): void;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}

function value(v: AnyValue): AttributeValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  throw new Error(`unsupported attribute value ${JSON.stringify(v)}`);
}

const attributes = (list: { key: string; value: AnyValue }[] | undefined) =>
  Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

/** OTLP/JSON ids are hex; protobufjs's toObject gives base64 for bytes, converted here. */
const hex = (id: string | undefined, encoding: 'hex' | 'base64') =>
  id === undefined || id === ''
    ? ''
    : encoding === 'hex'
      ? id.toLowerCase()
      : Buffer.from(id, 'base64').toString('hex');

// biome-ignore lint/suspicious/noExplicitAny: both decoders' plain-object output, normalized right here
function normalize(request: any, encoding: 'hex' | 'base64'): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: hex(s.traceId, encoding),
          spanId: hex(s.spanId, encoding),
          parentSpanId: hex(s.parentSpanId, encoding),
          name: s.name,
          kind: typeof s.kind === 'number' ? s.kind : Number(s.kind ?? 0),
          startTimeUnixNano: BigInt(s.startTimeUnixNano),
          endTimeUnixNano: BigInt(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          resource,
          scope: ss.scope?.name ?? '',
          resourceSchemaUrl: rs.schemaUrl ?? '',
          scopeSchemaUrl: ss.schemaUrl ?? '',
        });
      }
    }
  }
  return out;
}

function decode(body: Buffer, contentType: string): ReceivedSpan[] {
  if (contentType.startsWith('application/json')) return normalize(JSON.parse(body.toString('utf8')), 'hex');
  if (contentType.startsWith('application/x-protobuf')) {
    const type = exportRequestType();
    const message = type.decode(body);
    return normalize(
      type.toObject(message, { longs: String, bytes: String, enums: Number, defaults: false }),
      'base64',
    );
  }
  throw new Error(`unexpected content type ${contentType}`);
}

/**
 * `decode: false` (the benchmark): accept every request without decoding it, counting only
 * requests and bytes, so the receiver's own work does not weigh on the exporter being measured.
 */
export async function startOtlpReceiver(options: { decode?: boolean } = {}): Promise<OtlpReceiver> {
  const decodeBodies = options.decode ?? true;
  let bytes = 0;
  const requests: ReceivedRequest[] = [];
  const spans: ReceivedSpan[] = [];
  const script: ScriptedAnswer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = script.shift() ?? {};
      const status = answer.status ?? 200;
      try {
        if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://x').pathname !== '/v1/traces') {
          res.writeHead(404).end('not found');
          return;
        }
        let body = Buffer.concat(chunks);
        bytes += body.length;
        if (!decodeBodies) {
          res.writeHead(status).end();
          return;
        }
        const encoding = req.headers['content-encoding'];
        if (encoding === 'gzip') body = gunzipSync(body);
        const contentType = String(req.headers['content-type'] ?? '');
        const decoded = decode(body, contentType);
        requests.push({
          contentType,
          contentEncoding: encoding,
          headers: req.headers,
          answered: status,
          rejected: answer.partialSuccess?.rejectedSpans ?? 0,
          spans: decoded,
        });
        if (status >= 200 && status < 300) spans.push(...decoded);
        const json = contentType.startsWith('application/json');
        const headers: Record<string, string> = {
          'content-type':
            answer.echoHeaders || answer.body !== undefined
              ? 'text/plain'
              : json
                ? 'application/json'
                : 'application/x-protobuf',
        };
        if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
        if (answer.endless !== undefined) {
          const { chunk, everyMs } = answer.endless;
          res.writeHead(status, headers);
          const more = () => {
            if (res.destroyed || res.writableEnded) return;
            if (everyMs === 0) res.write(chunk, more);
            else {
              res.write(chunk);
              setTimeout(more, everyMs).unref();
            }
          };
          more();
          return;
        }
        res.writeHead(status, headers).end(answerBody(answer, status, json, req));
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    spans,
    get bytes() {
      return bytes;
    },
    respond: (...answers) => script.push(...answers.map((a) => (typeof a === 'number' ? { status: a } : a))),
    reset: () => {
      requests.length = 0;
      spans.length = 0;
      script.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
