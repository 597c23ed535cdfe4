import { SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';

export interface LocalSqs {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** a client for this emulator (any credentials are accepted) */
  client(): SQSClient;
  stop(): Promise<void>;
}

/** An in-process SQS emulator (fauxqs) for tests and the local stack; `port: 0` picks a free port. */
export async function startLocalSqs(options: { port?: number } = {}): Promise<LocalSqs> {
  const server = await startFauxqs({ port: options.port ?? 0, logger: false });
  const clients: SQSClient[] = [];
  return {
    endpoint: server.address,
    client() {
      const client = sqsClientFor(server.address);
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients.splice(0)) client.destroy();
      await server.stop();
    },
  };
}

export function sqsClientFor(endpoint: string): SQSClient {
  return new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}
