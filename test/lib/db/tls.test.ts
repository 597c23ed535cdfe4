import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../lib/db/open.js';
import { runCliJson, testProxyEnv } from '../../support/cli-run.js';
import { POSTGRES_TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R4-5: a TLS mode the database URL asks for is honoured or refused, never silently dropped. The
 * CLI reaches a local server through its own plain WebSocket proxy (and tests through theirs):
 * there, a mode that asks for encryption is refused before anything is sent. A remote name is
 * reached over wss://, where Node verifies the certificate.
 */

const withParams = (url: string, params: string) => `${url}${url.includes('?') ? '&' : '?'}${params}`;

describe.each(POSTGRES_TARGETS)('R4-5: TLS modes of the database URL on %s', (name) => {
  const t = useTestDatabase(name);
  const report = (url: string) => runCliJson(['report', '--database-url', url, '--json'], testProxyEnv());

  it.each(['require', 'verify-ca', 'verify-full'])(
    'R4-5: sslmode=%s through the plain local proxy is refused (exit 1), never sent in plaintext',
    async (mode) => {
      const run = await report(withParams(t.url, `sslmode=${mode}`));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `subagent-context: the database URL asks for sslmode=${mode}, but this connection goes through a plain WebSocket proxy`,
      );
    },
  );

  it.each(['disable', 'prefer'])('R4-5: sslmode=%s, which allows plaintext, reads the local server', async (mode) => {
    const run = await report(withParams(t.url, `sslmode=${mode}`));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  // issue 48: each of these gave a full report from a server with ssl=off; psql refuses every one
  it.each([
    ['sslmode=disable&sslmode=require', {}, /asks for sslmode=require, but this connection goes through a plain/],
    ['sslmode=REQUIRE', {}, /sslmode "REQUIRE" is not an sslmode: use one of disable, allow, prefer, require/],
    ['sslmode=Require', {}, /sslmode "Require" is not an sslmode/],
    ['sslmode=require%20', {}, /sslmode "require " is not an sslmode/],
    ['ssl=true', {}, /asks for ssl=true, but this connection goes through a plain/],
    ['ssl=1', {}, /asks for ssl=1, but this connection goes through a plain/],
    ['SSLMODE=require', {}, /asks for sslmode=require, but/],
    ['ssl=yes', {}, /ssl parameter "yes" is not understood/],
    ['', { PGSSLMODE: 'require' }, /PGSSLMODE=require asks for TLS, but this connection goes through a plain/],
    ['', { PGSSLMODE: 'REQUIRE' }, /PGSSLMODE "REQUIRE" is not an sslmode/],
  ] as const)(
    'R4-5 (issue 48): ?%s with env %j is refused (exit 1) before anything is read: no plaintext report',
    async (params, env, said) => {
      const url = params === '' ? t.url : withParams(t.url, params);
      const run = await runCliJson(['report', '--database-url', url, '--json'], { ...testProxyEnv(), ...env });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(said);
      // --json on a failure carries the error alone: no report document, no figure of the store
      expect(run.json).toEqual({ error: expect.any(String), name: 'TlsModeError' });
    },
  );

  it.each([
    ['sslmode=require&sslmode=disable', {}],
    ['sslmode=disable', { PGSSLMODE: 'require' }],
    ['ssl=false', {}],
    ['', { PGSSLMODE: 'prefer' }],
  ] as const)(
    'R4-5 (issue 48): ?%s with env %j allows plaintext (the last value, the URL before PGSSLMODE): the local server is read',
    async (params, env) => {
      const url = params === '' ? t.url : withParams(t.url, params);
      const run = await runCliJson(['report', '--database-url', url, '--json'], { ...testProxyEnv(), ...env });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    },
  );

  // issue 57 #10: GSSAPI encryption the driver cannot give; #20: the environment's certificate files
  // and sslnegotiation, read as libpq reads them (the URL before the variable)
  it.each([
    [
      'gssencmode=require',
      {},
      /the database URL asks for gssencmode=require for GSSAPI encryption, which the Neon driver cannot give/,
    ],
    [
      '',
      { PGGSSENCMODE: 'require' },
      /PGGSSENCMODE=require asks for GSSAPI encryption, which the Neon driver cannot give/,
    ],
    [
      'gssencmode=REQUIRE',
      {},
      /the database URL's gssencmode "REQUIRE" is not understood: use one of disable, prefer, require/,
    ],
    [
      '',
      { PGSSLROOTCERT: '/etc/ssl/certs/ca.pem' },
      /PGSSLROOTCERT \(libpq's sslrootcert\) is not supported: .*NODE_EXTRA_CA_CERTS/,
    ],
    ['', { PGSSLKEY: '/k.pem' }, /PGSSLKEY \(libpq's sslkey\) is not supported: .*client certificates cannot be used/],
    [
      'sslnegotiation=direct',
      {},
      /the database URL asks for sslnegotiation=direct, but this connection goes through a plain/,
    ],
    ['', { PGSSLNEGOTIATION: 'direct' }, /PGSSLNEGOTIATION=direct, but this connection goes through a plain/],
    ['sslnegotiation=tls', {}, /sslnegotiation "tls" is not understood: use one of postgres, direct/],
  ] as const)(
    'R4-5 / issue 57 #10, #20: ?%s with env %j is refused (exit 1) before anything is read',
    async (params, env, said) => {
      const url = params === '' ? t.url : withParams(t.url, params);
      const run = await runCliJson(['report', '--database-url', url, '--json'], { ...testProxyEnv(), ...env });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(said);
      expect(run.json).toEqual({ error: expect.any(String), name: 'TlsModeError' });
    },
  );

  it.each([
    ['gssencmode=prefer', {}],
    ['gssencmode=disable', { PGGSSENCMODE: 'require' }],
    ['sslnegotiation=postgres', {}],
  ] as const)(
    'R4-5 / issue 57 #10: ?%s with env %j asks nothing the driver cannot give: the local server is read',
    async (params, env) => {
      const run = await runCliJson(['report', '--database-url', withParams(t.url, params), '--json'], {
        ...testProxyEnv(),
        ...env,
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    },
  );

  it.each(['sslrootcert', 'sslcert', 'sslkey'])(
    'R4-5: %s is refused with what to do instead (NODE_EXTRA_CA_CERTS), not a crash in the driver',
    async (param) => {
      const run = await report(withParams(t.url, `${param}=/etc/ssl/certs/ca-certificates.crt`));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`the database URL's ${param} parameter is not supported`);
      expect(run.stderr).toContain('NODE_EXTRA_CA_CERTS');
      expect(run.stderr).not.toMatch(/readFileSync|\n\s+at /);
    },
  );
});

/**
 * A remote name (not local: no proxy) is reached over wss:// on port 443, the Neon driver's way.
 * A TLS listener on 127.0.0.2:443 with a self-signed certificate stands for a server whose
 * certificate Node cannot verify: the driver must speak TLS to it and refuse it.
 */
describe('R4-5: without a proxy the connection is TLS, its certificate verified', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-'));
  let server: Server | undefined;
  let unavailable: string | undefined;
  const handshakes: string[] = [];
  beforeAll(async () => {
    execFileSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=127.0.0.2',
      '-addext',
      'subjectAltName=IP:127.0.0.2',
      '-days',
      '1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) });
    // TLS 1.3: the server may finish its side of the handshake before the client checks the certificate
    server.on('tlsClientError', () => handshakes.push('handshake'));
    server.on('secureConnection', (socket) => {
      handshakes.push('handshake');
      socket.on('data', () => handshakes.push('data'));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => {
      server!.once('error', (err: NodeJS.ErrnoException) => {
        unavailable = `127.0.0.2:443 cannot be listened on here (${err.code})`;
        resolve();
      });
      server!.listen(443, '127.0.0.2', resolve);
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined)));
    rmSync(dir, { recursive: true, force: true });
  });

  it('R4-5: sslmode=verify-full to a server whose certificate does not verify fails on the certificate', async (ctx) => {
    if (unavailable) ctx.skip(unavailable);
    const db = openDatabase('postgres://app:secret@127.0.0.2/neondb?sslmode=verify-full', {});
    try {
      const failed = await db.query('SELECT 1').catch((err: Error) => err);
      expect(String(failed)).toMatch(/self[- ]signed|certificate/i);
    } finally {
      await db.close().catch(() => undefined);
    }
    // the client spoke TLS and refused the certificate: the listener saw a handshake, never a byte of the WebSocket upgrade
    await expect.poll(() => handshakes.length, { timeout: 2_000 }).toBeGreaterThan(0);
    expect(handshakes).not.toContain('data');
  });
});
