import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { startWsProxy, type WsProxy } from '../lib/db/ws-proxy.js';

/**
 * Embedded PostgreSQL reachable by the real Neon driver: PGlite → its TCP socket server (which
 * multiplexes connections onto PGlite's single backend) → the local ws→TCP proxy.
 */
export interface EmbeddedPostgres {
  /** `postgres://…` for DATABASE_URL */
  readonly url: string;
  /** `host:port` for DATABASE_WS_PROXY */
  readonly wsProxy: string;
  readonly proxy: WsProxy;
  readonly pglite: PGlite;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(
  options: { dataDir?: string; maxConnections?: number } = {},
): Promise<EmbeddedPostgres> {
  const pglite = await PGlite.create(options.dataDir);
  const server = new PGLiteSocketServer({
    db: pglite,
    port: 0,
    host: '127.0.0.1',
    maxConnections: options.maxConnections ?? 32,
  });
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  const proxy = await startWsProxy();
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    wsProxy: proxy.address,
    proxy,
    pglite,
    async stop() {
      await proxy.close();
      await server.stop();
      await pglite.close();
    },
  };
}
