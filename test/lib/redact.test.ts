import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, redactError, redactText } from '../../lib/redact.js';

// R2-6 (docs/security.md): every form a secret takes in this project's output, with what the one
// redaction step makes of it; and the forms that hold no secret, which it must leave whole.
const REDACTED: [string, string, string][] = [
  ['a URL with a password', 'postgres://app:Pa55w0rd@db.example:5432/neondb', 'postgres://***@db.example:5432/neondb'],
  [
    'a password holding @, : and /',
    'postgresql://app:p@ss:w/rd@db.example/neondb?sslmode=require',
    'postgresql://***@db.example/neondb?sslmode=require',
  ],
  [
    'a malformed URL',
    'connect to postgres://app:Pa55w0rd@@:notaport/db failed',
    'connect to postgres://***@:notaport/db failed',
  ],
  ['a host that is not a host', 'postgres://acc:Pa55w0rd@%zz:5432/db', 'postgres://***@%zz:5432/db'],
  ['a password holding a space', 'Invalid URL postgres://app:pa ss@db/x', 'Invalid URL postgres://***@db/x'],
  ['a password holding a double quote', 'postgres://app:pa"ss@db/x', 'postgres://***@db/x'],
  ['a password holding a single quote', "postgres://app:pa'ss@db/x", 'postgres://***@db/x'],
  ['a password holding <', 'postgres://app:pa<ss@db/x', 'postgres://***@db/x'],
  ['a password holding a backtick', 'postgres://app:pa`ss@db/x', 'postgres://***@db/x'],
  ['a password holding a newline', 'postgres://app:pa\nss@db/x', 'postgres://***@db/x'],
  ['a URL without a scheme', 'app:Pa55w0rd@db.example:5432/neondb', '***@db.example:5432/neondb'],
  ['a scheme-relative URL', 'see //app:Pa55w0rd@db.example/neondb', 'see //***@db.example/neondb'],
  ['a token as the user', 'https://ghp_T0ken@github.com/o/r.git', 'https://***@github.com/o/r.git'],
  ['a websocket URL', 'wss://u:Pa55w0rd@proxy/v1?address=h:5432', 'wss://***@proxy/v1?address=h:5432'],
  [
    'a percent-encoded URL',
    'next=postgres%3A%2F%2Fapp%3APa55w0rd%40db.example%2Fneondb',
    'next=postgres%3A%2F%2F***%40db.example%2Fneondb',
  ],
  [
    'a percent-encoded password parameter',
    'q=password%3DPa55w0rd%26sslmode%3Drequire',
    'q=password%3D***%26sslmode%3Drequire',
  ],
  [
    'a password query parameter',
    'postgres://db.example/neondb?password=Pa55w0rd&sslmode=require',
    'postgres://db.example/neondb?password=***&sslmode=require',
  ],
  ['libpq key=value', 'host=db user=app password=Pa55w0rd dbname=x', 'host=db user=app password=*** dbname=x'],
  ["libpq key='quoted value'", "host=db password='pa ss' dbname=x", "host=db password='***' dbname=x"],
  ['PGPASSWORD=', 'PGPASSWORD=Pa55w0rd psql', 'PGPASSWORD=*** psql'],
  ['PASSWORD: x', 'PASSWORD: Pa55w0rd', 'PASSWORD: ***'],
  ['JSON "password":"x"', '{"user":"app","password":"Pa\\"55w0rd"}', '{"user":"app","password":"***"}'],
  ['JSON with spaces', '{ "aws_secret_access_key" : "wJalr/K7MDENG" }', '{ "aws_secret_access_key" : "***" }'],
  ['aws_secret_access_key=', 'aws_secret_access_key=wJalr/K7MDENG+bPxR', 'aws_secret_access_key=***'],
  ['AWS_SESSION_TOKEN=', 'AWS_SESSION_TOKEN=FQoGZXIvYXdz', 'AWS_SESSION_TOKEN=***'],
  [
    'X-Amz-Security-Token',
    'https://h/?X-Amz-Security-Token=FQoG%2Fx&X-Amz-Date=1',
    'https://h/?X-Amz-Security-Token=***&X-Amz-Date=1',
  ],
  ['X-Amz-Signature', 'https://h/x?X-Amz-Signature=abcdef&a=1', 'https://h/x?X-Amz-Signature=***&a=1'],
  [
    'an Authorization header',
    'AWS4-HMAC-SHA256 Credential=AKIA/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=ab12',
    'AWS4-HMAC-SHA256 Credential=***, SignedHeaders=host, Signature=***',
  ],
];

const UNCHANGED: [string, string][] = [
  ['a node_modules stack frame', '    at file:///work/node_modules/@neondatabase/serverless/index.mjs:1:2'],
  ['a pnpm path with a version', '    at file:///w/node_modules/.pnpm/pkg@1.2.3/node_modules/pkg/x.js:3:4'],
  [
    'a URL without a password, then a stack frame',
    'connect postgres://db.example:5432/x failed\n    at file:///w/node_modules/@neondatabase/serverless/index.mjs:1:1',
  ],
  ['a URL with a user and no password', 'postgres://db.example:5432/neondb?sslmode=require'],
  ['an SQLite URL', 'sqlite:./kandev.db'],
  ['token counts', 'input_tokens: 1234, output_tokens=56, tokens: 7'],
  ['an access key id', 'aws_access_key_id=AKIAIOSFODNN7EXAMPLE'],
  ['prose about a password', 'password authentication failed for user "app"'],
  ['plain text', 'no secret here'],
];

describe('redact.ts: the one redaction step (docs/security.md R2-6)', () => {
  it.each(REDACTED)('R2-6: %s is redacted', (_form, input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it.each(UNCHANGED)('R2-6: %s is left whole', (_form, input) => {
    expect(redactText(input)).toBe(input);
  });

  it('R2-6: any password of printable characters and newlines is hidden in a URL', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(...'abcXYZ019 !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~\n'.split('')),
          minLength: 1,
        }),
        (password) => {
          // a password holding a URL's `scheme://` of its own, or a stack frame's `\n    at `, is out of reach
          fc.pre(!/[a-z]:\/\/|\n\s*at\s/i.test(password));
          const out = redactText(`connect postgres://app:${password}@db.example:5432/neondb failed`);
          expect(out).toBe('connect postgres://***@db.example:5432/neondb failed');
        },
      ),
    );
  });

  it('R2-6: walks objects, arrays and error cause chains', () => {
    const url = 'postgres://app:Pa55w0rd@db/x';
    const root = new Error('outer', { cause: new TypeError(`Invalid URL: ${url}`, { cause: { input: url } }) });
    Object.assign(root, { input: url });
    const out = JSON.stringify([redactError(root), redact({ nested: [url] })]);
    expect(out).not.toContain('Pa55w0rd');
    expect(out).toContain('postgres://***@db/x');
  });

  it('R2-6: redactError walks the cause chain (a password three causes deep is hidden)', () => {
    const deep = new Error('a', { cause: new Error('b', { cause: new Error('c postgres://u:Pa55w0rd@h/d') }) });
    const out = redactError(deep) as { cause: { cause: { message: string; stack: string } } };
    expect(out.cause.cause.message).toBe('c postgres://***@h/d');
    expect(out.cause.cause.stack).not.toContain('Pa55w0rd');
  });
});
