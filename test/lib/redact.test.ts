import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, redactError, redactingReplacer, redactText } from '../../lib/redact.js';

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
  ['a URL without a scheme in parentheses', '(app:Pa55w0rd@db.example)', '(***@db.example)'],
  ['a URL without a scheme after =', 'url=app:Pa55w0rd@db.example:5432', 'url=***@db.example:5432'],
  ['a URL without a scheme, then more text', 'app:Pa55w0rd@db.example failed', '***@db.example failed'],
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
    'a Bearer token (R4-9: a collector body echoing our headers)',
    'got Bearer SECRET123 from you',
    'got Bearer *** from you',
  ],
  ['an echoed Authorization line', 'Authorization: Bearer abc.def\nHost: h', 'Authorization: ***\nHost: h'],
  ['an echoed Cookie line', 'cookie: sid=s3cr3t; theme=dark\nx', 'cookie: ***\nx'],
  [
    'a JSON dump of headers',
    '{"authorization":"Basic dXNlcjpwYXNz","accept":"*/*"}',
    '{"authorization":"***","accept":"*/*"}',
  ],
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
  [
    'a URL without a password, then a CommonJS stack frame',
    'connect postgres://db.example:5432/x failed\n    at /w/node_modules/@neondatabase/serverless/index.js:1:1',
  ],
  ['a word joined to user:x@ (not a URL of its own)', 'ab,cd-ef:gh'],
  ['an identifier named like a secret', 'client_secret_id=abc-123 token_id: 42'],
  ['a host followed by a character that ends no host', 'user:pass@host!'],
  ['an SQLite URL', 'sqlite:./kandev.db'],
  ['token counts', 'input_tokens: 1234, output_tokens=56, tokens: 7'],
  ['an access key id', 'aws_access_key_id=AKIAIOSFODNN7EXAMPLE'],
  ['prose about a password', 'password authentication failed for user "app"'],
  ['plain text', 'no secret here'],
];

/** `piece` repeated to 1 MiB (2^20 UTF-16 code units, whole pieces). */
const mib = (piece: string) => piece.repeat(Math.floor(2 ** 20 / piece.length));

// R4-1: inputs that made the old expressions backtrack for minutes or overflow the stack, with what
// redaction must make of them (written by hand: most hold no secret, so they pass unchanged).
const ADVERSARIAL: [string, string, string][] = [
  ['a:// repeated', mib('a://'), mib('a://')],
  ['x: repeated', mib('x:'), mib('x:')],
  ['an @ run', mib('@'), mib('@')],
  ['one long word', mib('a'), mib('a')],
  ['a.b.c… (a scheme start at every letter)', mib('a.'), mib('a.')],
  ['=x: repeated (a bare user:password start at every =)', mib('=x:'), mib('=x:')],
  ['s://u: repeated (user info that never ends)', mib('s://u:'), mib('s://u:')],
  ['newlines after a user info', `s://u:${mib('\n')}`, `s://u:${mib('\n')}`],
  ['%3A%2F%2F repeated', mib('a%3A%2F%2F'), mib('a%3A%2F%2F')],
  ['password= repeated (one value to the end)', mib('password='), 'password=***'],
  // 209,715 pieces: each second one is the value of the one before; the last has no value
  ['pwd: repeated', mib('pwd: '), `${'pwd: *** '.repeat(104_857)}pwd: `],
  ['an escaped quote run', `"token":"${mib('\\"')}"`, '"token":"***"'],
  ['bare user info repeated', mib(' a:b@h'), mib(' ***@h')],
  ['URLs with a password repeated', mib('postgres://u:p@h/ '), mib('postgres://***@h/ ')],
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

  it.each(ADVERSARIAL)(
    'R4-1: a 1 MiB input, %s, is redacted correctly (linear time: npm run bench)',
    (_f, input, out) => {
      expect(redactText(input)).toBe(out);
    },
  );

  it('R4-1: any text around a URL with a password: the password is hidden and the rest kept', () => {
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    // text that cannot join the URL: it ends in white space, and its own words cannot start user info
    const around = fc.string({ unit, maxLength: 40 }).filter((t) => !/[:@%=]/.test(t));
    fc.assert(
      fc.property(around, around, (before, after) => {
        const out = redactText(`${before} postgres://app:S3cr3t@db.example/x ${after}`);
        expect(out).toBe(`${before} postgres://***@db.example/x ${after}`);
      }),
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

  it('R2-6: redact copies plain objects and arrays, keeps other objects as they are, and ends cycles', () => {
    const url = 'postgres://u:Pa55w0rd@h/d';
    const date = new Date(0);
    const cyclic: Record<string, unknown> = { url };
    cyclic.self = cyclic;
    const out = redact({ list: [url, 1, null], date, cyclic, n: 2n });
    expect(out).toEqual({
      list: ['postgres://***@h/d', 1, null],
      date,
      cyclic: { url: 'postgres://***@h/d', self: '[circular]' },
      n: 2n,
    });
    expect(out.date).toBe(date);
    expect(redact(null)).toBe(null);
    expect(redact(undefined)).toBe(undefined);
  });

  it('R2-6: redactError redacts own properties and a thrown non-Error, and ends a cause cycle', () => {
    const url = 'postgres://u:Pa55w0rd@h/d';
    const error = Object.assign(new Error('x'), { input: url, nested: { url } });
    const cycle = new Error('loop');
    (cycle as { cause?: unknown }).cause = cycle;
    expect(redactError(error)).toMatchObject({
      name: 'Error',
      message: 'x',
      input: 'postgres://***@h/d',
      nested: { url: 'postgres://***@h/d' },
    });
    expect(redactError(url)).toBe('postgres://***@h/d');
    expect(redactError({ url })).toEqual({ url: 'postgres://***@h/d' });
    expect(redactError(cycle)).toMatchObject({ message: 'loop', cause: '[circular]' });
    expect(redactError(new Error('no cause'))).not.toHaveProperty('cause');
  });

  it('R2-6: the logger replacer redacts strings and passes other values through', () => {
    expect(redactingReplacer('k', 'postgres://u:Pa55w0rd@h/d')).toBe('postgres://***@h/d');
    expect(redactingReplacer('k', 5)).toBe(5);
  });

  it('R2-6: redactError walks the cause chain (a password three causes deep is hidden)', () => {
    const deep = new Error('a', { cause: new Error('b', { cause: new Error('c postgres://u:Pa55w0rd@h/d') }) });
    const out = redactError(deep) as { cause: { cause: { message: string; stack: string } } };
    expect(out.cause.cause.message).toBe('c postgres://***@h/d');
    expect(out.cause.cause.stack).not.toContain('Pa55w0rd');
  });
});
