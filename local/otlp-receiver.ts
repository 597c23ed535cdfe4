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
 * and answers with the statuses a test scripts (default 200). Spans of accepted requests only are
 * `spans`; every request is in `requests`.
 */

const PROTO_DIR = join(dirname(fileURLToPath(import.meta.url)), 'otlp-proto');

let requestType: protobuf.Type | undefined;
function exportRequestType(): protobuf.Type {
  if (!requestType) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(PROTO_DIR, target);
    root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
    requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  }
  return requestType;
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
}

export interface ReceivedRequest {
  contentType: string;
  contentEncoding: string | undefined;
  headers: IncomingMessage['headers'];
  answered: number;
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
  /** the statuses of the next requests, in order (then 200) */
  respond(...statuses: number[]): void;
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
  const script: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = script.shift() ?? 200;
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
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
          spans: decoded,
        });
        if (status >= 200 && status < 300) spans.push(...decoded);
        const json = contentType.startsWith('application/json');
        res
          .writeHead(status, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
          .end(status < 300 ? (json ? '{}' : '') : status === 400 ? 'invalid span: trace_id' : 'unavailable');
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
    respond: (...statuses) => script.push(...statuses),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
