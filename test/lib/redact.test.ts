import { describe, expect, it } from 'vitest';
import { redact, redactError, redactText } from '../../lib/redact.js';

describe('redact.ts: the one redaction helper (docs/security.md R2-6)', () => {
  it.each([
    ['postgres://app:Pa55w0rd@db.example:5432/neondb', 'postgres://***@db.example:5432/neondb'],
    [
      'postgresql://app:p@ss:w/rd@db.example/neondb?sslmode=require',
      'postgresql://***@db.example/neondb?sslmode=require',
    ],
    ['connect to postgres://app:Pa55w0rd@@:notaport/db failed', 'connect to postgres://***@:notaport/db failed'],
    ['wss://u:Pa55w0rd@proxy/v1?address=h:5432', 'wss://***@proxy/v1?address=h:5432'],
    ['https://h/x?X-Amz-Signature=abcdef&a=1', 'https://h/x?X-Amz-Signature=***&a=1'],
    [
      'postgres://db.example/neondb?password=Pa55w0rd&sslmode=require',
      'postgres://db.example/neondb?password=***&sslmode=require',
    ],
    ['host=db user=app password=Pa55w0rd dbname=x', 'host=db user=app password=*** dbname=x'],
    ['sqlite:./kandev.db', 'sqlite:./kandev.db'],
    ['no secret here', 'no secret here'],
  ])('R2-6: %s', (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  it('R2-6: walks objects, arrays and error cause chains', () => {
    const url = 'postgres://app:Pa55w0rd@db/x';
    const root = new Error('outer', { cause: new TypeError(`Invalid URL: ${url}`, { cause: { input: url } }) });
    Object.assign(root, { input: url });
    const out = JSON.stringify([redactError(root), redact({ nested: [url] })]);
    expect(out).not.toContain('Pa55w0rd');
    expect(out).toContain('postgres://***@db/x');
  });
});
