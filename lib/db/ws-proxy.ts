import { createConnection, type Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * A plain (no TLS) WebSocket → TCP proxy in the shape of Neon's wsproxy: a client connects to
 * `ws://host:port/v1?address=pghost:pgport` and its binary frames are piped to that TCP address.
 * It lets the real Neon driver reach a local PostgreSQL or PGlite socket server; production
 * never uses it. `interrupt()` and `setAvailable(false)` are how tests cut the database off.
 */
export interface WsProxy {
  /** `host:port`, the value for DATABASE_WS_PROXY */
  readonly address: string;
  /** destroys every open connection, as a network drop or a frozen Lambda would */
  interrupt(): void;
  /** while unavailable, new connections are refused and open ones dropped */
  setAvailable(available: boolean): void;
  readonly connectionCount: number;
  close(): Promise<void>;
}

export async function startWsProxy(
  options: {
    host?: string;
    port?: number;
    /**
     * Tests: sees each message a client sends before it is forwarded; a promise it returns holds
     * that message (and the client's later ones) until it settles, so a test can act while a
     * given statement is on its way (a signal to the client mid-transaction).
     */
    hold?: (message: Buffer) => Promise<void> | undefined;
  } = {},
): Promise<WsProxy> {
  const host = options.host ?? '127.0.0.1';
  const server = new WebSocketServer({ host, port: options.port ?? 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const pairs = new Set<{ ws: WebSocket; tcp: Socket }>();
  let available = true;

  server.on('connection', (ws, request) => {
    const target = new URL(request.url ?? '/', 'ws://proxy').searchParams.get('address');
    const match = target ? /^(.+):(\d+)$/.exec(target) : null;
    if (!available || !match) {
      ws.close(available ? 1008 : 1013, available ? 'expected ?address=host:port' : 'database unavailable');
      return;
    }
    const tcp = createConnection({ host: match[1]!, port: Number(match[2]) });
    const pair = { ws, tcp };
    pairs.add(pair);
    const pending: Buffer[] = [];
    let connected = false;
    tcp.on('connect', () => {
      connected = true;
      for (const chunk of pending.splice(0)) tcp.write(chunk);
    });
    const forward = (data: Buffer) => {
      if (!connected) return void pending.push(data);
      tcp.write(data);
      // PostgreSQL closes the connection after a client's Terminate; PGlite's socket server does
      // not, so every closed pool would hold one of its connection slots forever.
      if (isTerminate(data)) tcp.end();
    };
    // in order: a held message holds the ones after it
    let held: Promise<void> | undefined;
    ws.on('message', (data: Buffer) => {
      const wait = held ?? options.hold?.(data);
      if (wait === undefined) return forward(data);
      held = wait.then(
        () => forward(data),
        () => forward(data),
      );
      const mine = held;
      void mine.then(() => {
        if (held === mine) held = undefined;
      });
    });
    tcp.on('data', (data) => ws.readyState === ws.OPEN && ws.send(data));
    const end = () => {
      pairs.delete(pair);
      tcp.destroy();
      ws.terminate();
    };
    ws.on('close', end);
    ws.on('error', end);
    tcp.on('close', end);
    tcp.on('error', end);
  });

  const interrupt = () => {
    for (const { ws, tcp } of pairs) {
      tcp.destroy();
      ws.terminate();
    }
    pairs.clear();
  };
  const port = (server.address() as { port: number }).port;
  return {
    address: `${host}:${port}`,
    interrupt,
    setAvailable(value) {
      available = value;
      if (!value) interrupt();
    },
    get connectionCount() {
      return pairs.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        interrupt();
        server.close(() => resolve());
      }),
  };
}

/** The frontend Terminate message: 'X' and length 4, sent alone as a client's last write. */
function isTerminate(data: Buffer): boolean {
  return data.length === 5 && data[0] === 0x58 && data.readInt32BE(1) === 4;
}
