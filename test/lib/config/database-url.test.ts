import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DatabaseUrlConfigError,
  forgetDatabaseUrl,
  loadDatabaseUrl,
  refreshingCredentials,
} from '../../../lib/config/database-url.js';
import { DatabaseError } from '../../../lib/db/errors.js';

// The deployed functions hold only the SSM parameter's name (serverless.yml); these tests drive
// the real SSM client against a local endpoint speaking the SSM JSON protocol.
interface SsmRequest {
  target: string;
  body: { Name?: string; WithDecryption?: boolean };
}

let server: Server;
let endpoint: string;
let requests: SsmRequest[] = [];
let parameters: Record<string, string> = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const request = { target: String(req.headers['x-amz-target']), body: JSON.parse(raw) as SsmRequest['body'] };
      requests.push(request);
      const value = parameters[request.body.Name ?? ''];
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      if (value === undefined) {
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: 'ParameterNotFound', message: 'parameter not found' }));
        return;
      }
      res.end(
        JSON.stringify({ Parameter: { Name: request.body.Name, Type: 'SecureString', Value: value, Version: 1 } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SSM: endpoint,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_SSM;
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests = [];
  parameters = { '/subagent-context/test/database-url': 'postgres://app:secret@db.example/neondb' };
});

describe('loadDatabaseUrl', () => {
  it('fetches the named SecureString with decryption and sets DATABASE_URL', async () => {
    const env: NodeJS.ProcessEnv = { DATABASE_URL_SSM_PARAMETER: '/subagent-context/test/database-url' };
    await loadDatabaseUrl({ env });
    expect(env.DATABASE_URL).toBe('postgres://app:secret@db.example/neondb');
    expect(requests).toEqual([
      { target: 'AmazonSSM.GetParameter', body: { Name: '/subagent-context/test/database-url', WithDecryption: true } },
    ]);
  });

  it('leaves an explicitly set DATABASE_URL alone and does not call SSM', async () => {
    const env: NodeJS.ProcessEnv = {
      DATABASE_URL: 'sqlite:./local.db',
      DATABASE_URL_SSM_PARAMETER: '/subagent-context/test/database-url',
    };
    await loadDatabaseUrl({ env });
    expect(env.DATABASE_URL).toBe('sqlite:./local.db');
    expect(requests).toHaveLength(0);
  });

  it('does nothing when neither DATABASE_URL nor the parameter name is set', async () => {
    const env: NodeJS.ProcessEnv = {};
    await loadDatabaseUrl({ env });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(requests).toHaveLength(0);
  });

  it('fetches once for concurrent cold-start callers', async () => {
    const env: NodeJS.ProcessEnv = { DATABASE_URL_SSM_PARAMETER: '/subagent-context/test/database-url' };
    await Promise.all([loadDatabaseUrl({ env }), loadDatabaseUrl({ env }), loadDatabaseUrl({ env })]);
    expect(requests).toHaveLength(1);
  });

  it('fails with the parameter name and how to fix it, and retries on the next call', async () => {
    const env: NodeJS.ProcessEnv = { DATABASE_URL_SSM_PARAMETER: '/subagent-context/missing' };
    const failure = await loadDatabaseUrl({ env }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DatabaseUrlConfigError);
    expect(failure).toMatchObject({ parameterName: '/subagent-context/missing' });
    expect((failure as Error).message).toMatch(/SecureString.*ssm:GetParameter/);
    parameters['/subagent-context/missing'] = 'postgres://late@db.example/neondb';
    await loadDatabaseUrl({ env });
    expect(env.DATABASE_URL).toBe('postgres://late@db.example/neondb');
    expect(requests).toHaveLength(2);
  });
});

describe('R2-4: a stale secret is read again', () => {
  it('R2-4: after forgetDatabaseUrl the next load reads the rotated secret from SSM', async () => {
    const env: NodeJS.ProcessEnv = { DATABASE_URL_SSM_PARAMETER: '/subagent-context/test/database-url' };
    await loadDatabaseUrl({ env });
    parameters['/subagent-context/test/database-url'] = 'postgres://app:rotated@db.example/neondb';
    await loadDatabaseUrl({ env });
    expect(env.DATABASE_URL).toBe('postgres://app:secret@db.example/neondb'); // warm: no fetch
    expect(forgetDatabaseUrl(env)).toBe(true);
    await loadDatabaseUrl({ env });
    expect(env.DATABASE_URL).toBe('postgres://app:rotated@db.example/neondb');
    expect(requests).toHaveLength(2);
  });

  it('R2-4: an explicitly set DATABASE_URL is never forgotten', () => {
    const env: NodeJS.ProcessEnv = { DATABASE_URL: 'sqlite:./local.db' };
    expect(forgetDatabaseUrl(env)).toBe(false);
    expect(env.DATABASE_URL).toBe('sqlite:./local.db');
  });

  it('R2-4: refreshingCredentials forgets the URL on 28xxx and 3D000 only, and rethrows', async () => {
    for (const [sqlstate, forgets] of [
      ['28P01', true],
      ['3D000', true],
      ['42P01', false],
    ] as const) {
      const env: NodeJS.ProcessEnv = { DATABASE_URL_SSM_PARAMETER: '/subagent-context/test/database-url' };
      await loadDatabaseUrl({ env });
      const failure = new DatabaseError('rejected', 'system', sqlstate, undefined);
      await expect(
        refreshingCredentials(() => Promise.reject(new Error('wrapped', { cause: failure })), env),
      ).rejects.toThrow('wrapped');
      expect(env.DATABASE_URL === undefined).toBe(forgets);
    }
  });
});
