import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';

export interface BatchEntry {
  Id: string;
  MessageBody: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
}

/** One SendMessageBatch call as it reached the proxy (1-based `n`). */
export interface BatchCall {
  n: number;
  entries: BatchEntry[];
}

/** What the proxy does with one SendMessageBatch call. */
export interface Fault {
  /**
   * The whole call: `throttle` (400 ThrottlingException), `server-error` (500), `stall` (never
   * answered, SQS never sees it), `stall-after-forward` (SQS enqueues it, the answer never comes).
   */
  call?: 'throttle' | 'server-error' | 'stall' | 'stall-after-forward';
  /** entries (by Id) SQS is told nothing about and reported as Failed with this kind */
  entries?: Record<string, 'throttle' | 'internal'>;
}

export interface SqsFaultProxy {
  /** point an SQS client here */
  readonly endpoint: string;
  /** every SendMessageBatch call seen, in order */
  readonly calls: BatchCall[];
  close(): Promise<void>;
}

const JSON_TYPE = 'application/x-amz-json-1.0';

/**
 * A real HTTP proxy in front of an SQS endpoint (fauxqs) that injects the faults SQS produces under
 * load into SendMessageBatch calls (AWS JSON protocol), as `plan` decides per call: whole-call
 * throttling and 5xx, partial batch failures, and calls that are never answered. Every other call
 * passes through unchanged. Nothing in the client is mocked: the SDK parses what comes back.
 */
export async function startSqsFaultProxy(target: string, plan: (call: BatchCall) => Fault): Promise<SqsFaultProxy> {
  const calls: BatchCall[] = [];
  const sockets = new Set<Socket>();

  const forward = async (
    req: IncomingMessage,
    body: string,
  ): Promise<{ status: number; headers: Headers; text: string }> => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
    }
    const res = await fetch(new URL(req.url ?? '/', target), {
      method: req.method,
      headers,
      body: req.method === 'GET' ? undefined : body,
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  const reply = (res: ServerResponse, status: number, text: string, headers?: Headers) => {
    res.statusCode = status;
    res.setHeader('content-type', headers?.get('content-type') ?? JSON_TYPE);
    for (const name of ['x-amzn-requestid', 'x-amzn-query-error']) {
      const value = headers?.get(name);
      if (value) res.setHeader(name, value);
    }
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.headers['x-amz-target'] !== 'AmazonSQS.SendMessageBatch') {
      const r = await forward(req, body);
      return reply(res, r.status, r.text, r.headers);
    }
    const input = JSON.parse(body) as { QueueUrl: string; Entries: BatchEntry[] };
    const call: BatchCall = { n: calls.length + 1, entries: input.Entries };
    calls.push(call);
    const fault = plan(call);
    if (fault.call === 'throttle') {
      return reply(
        res,
        400,
        JSON.stringify({ __type: 'com.amazonaws.sqs#ThrottlingException', message: 'Rate exceeded' }),
      );
    }
    if (fault.call === 'server-error') {
      return reply(
        res,
        500,
        JSON.stringify({ __type: 'com.amazonaws.sqs#InternalError', message: 'injected server error' }),
      );
    }
    if (fault.call === 'stall') return; // never answered; the client must give up
    const failing = fault.entries ?? {};
    const kept = input.Entries.filter((e) => !(e.Id in failing));
    let result: { Successful?: unknown[]; Failed?: unknown[] } = { Successful: [], Failed: [] };
    if (kept.length > 0) {
      const r = await forward(req, JSON.stringify({ ...input, Entries: kept }));
      if (r.status !== 200) return reply(res, r.status, r.text, r.headers);
      result = JSON.parse(r.text) as typeof result;
    }
    if (fault.call === 'stall-after-forward') return; // SQS has it; the answer is lost
    const injected = Object.entries(failing)
      .filter(([id]) => input.Entries.some((e) => e.Id === id))
      .map(([Id, kind]) =>
        kind === 'throttle'
          ? { Id, SenderFault: true, Code: 'ThrottlingException', Message: 'Rate exceeded' }
          : { Id, SenderFault: false, Code: 'InternalError', Message: 'injected entry failure' },
      );
    reply(res, 200, JSON.stringify({ ...result, Failed: [...(result.Failed ?? []), ...injected] }));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: unknown) => {
        if (!res.headersSent)
          reply(res, 500, JSON.stringify({ __type: 'com.amazonaws.sqs#InternalError', message: String(err) }));
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A TCP listener that accepts connections and never answers (a hung endpoint): tests and bench/producer.ts. */
export async function startSilentEndpoint(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
