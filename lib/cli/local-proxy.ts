import { startWsProxy } from '../db/ws-proxy.js';

export interface ProxyChoice {
  /** `host:port` for openDatabase's wsProxy, or undefined to connect as in production */
  wsProxy: string | undefined;
  close(): Promise<void>;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * The Neon driver speaks WebSocket; a PostgreSQL on this machine speaks plain TCP. For a local
 * `postgres://` URL (and no DATABASE_WS_PROXY given) a proxy is started for the command's
 * lifetime, so `--database-url postgres://postgres@127.0.0.1:5432/db` just works.
 */
export async function proxyFor(url: string, env: NodeJS.ProcessEnv): Promise<ProxyChoice> {
  const none: ProxyChoice = { wsProxy: env.DATABASE_WS_PROXY || undefined, close: async () => undefined };
  if (none.wsProxy || !/^postgres(ql)?:\/\//.test(url)) return none;
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return none;
  }
  if (!LOCAL_HOSTS.has(host)) return none;
  const proxy = await startWsProxy();
  return { wsProxy: proxy.address, close: () => proxy.close() };
}
