import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  checkDatabaseUrl,
  DatabaseUrlConfigError,
  type DatabaseUrlSource,
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

describe('checkDatabaseUrl: a refused value names its source and is never quoted (D1, R2-6)', () => {
  const SOURCES: [DatabaseUrlSource, string][] = [
    [{ kind: 'flag', name: '--database-url' }, '--database-url'],
    [{ kind: 'env', name: 'DATABASE_URL' }, 'DATABASE_URL'],
    [
      { kind: 'ssm', name: '/subagent-context/prod/database-url' },
      'SSM parameter "/subagent-context/prod/database-url"',
    ],
  ];
  const VALUES: [string, string][] = [
    ['hunter2-secret', 'the value is not a URL and is not shown'],
    ['PGPASSWORD=hunter2-secret', 'the value is not a URL and is not shown'],
    ['host=db password=hunter2-secret dbname=x', 'the value is not a URL and is not shown'],
    ['hunter2-secret:x', 'the value is not a URL and is not shown'],
    ['mysql://app:hunter2-secret@db/x', 'got "mysql://…"'],
    ['', 'it is empty'],
  ];
  it.each(SOURCES.flatMap(([source, named]) => VALUES.map(([value, got]) => [named, value, got, source] as const)))(
    'R2-6: from %s, %j is refused with (%s)',
    (named, value, got, source) => {
      let error: unknown;
      try {
        checkDatabaseUrl(value, source);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(DatabaseUrlConfigError);
      const message = (error as Error).message;
      expect(message.startsWith(`${named} must start with postgres://, postgresql:// or sqlite: (${got})`)).toBe(true);
      expect(message).not.toContain('hunter2');
      expect(error).toMatchObject({ parameterName: source.name });
    },
  );

  it.each(['postgres://u@h/db', 'postgresql://u:p@h/db', 'sqlite:./x.db'])('accepts %s', (url) => {
    expect(() => checkDatabaseUrl(url, { kind: 'env', name: 'DATABASE_URL' })).not.toThrow();
  });

  it('R2-6: loadDatabaseUrl refuses a DATABASE_URL that is not one, naming DATABASE_URL', async () => {
    await expect(loadDatabaseUrl({ env: { DATABASE_URL: 'hunter2-secret' } })).rejects.toThrow(
      /^DATABASE_URL must start with .*\(the value is not a URL and is not shown\)/,
    );
  });

  it('R2-6: loadDatabaseUrl refuses an SSM value that is not a URL, naming the parameter, and does not keep it', async () => {
    const env: NodeJS.ProcessEnv = { DATABASE_URL_SSM_PARAMETER: '/p/db' };
    await expect(loadDatabaseUrl({ env, readParameter: async () => 'hunter2-secret' })).rejects.toThrow(
      /^SSM parameter "\/p\/db" must start with .*\(the value is not a URL and is not shown\)/,
    );
    expect(env.DATABASE_URL).toBeUndefined();
  });
});
