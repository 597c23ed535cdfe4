import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DatabaseUrlConfigError } from '../../lib/config/database-url.js';
import { DatabaseError } from '../../lib/db/errors.js';
import { asProjectError, ForeignError, SubagentContextError } from '../../lib/errors.js';
import { InvalidFrameError } from '../../lib/frame/parse.js';
import { HealthCheckError } from '../../lib/health/check.js';
import { MigrationError } from '../../lib/migrate/run-migration.js';

describe('one error base class', () => {
  const cause = new Error('underlying');
  it.each([
    ['DatabaseUrlConfigError', new DatabaseUrlConfigError('no url', '/p', { cause })],
    ['DatabaseError', new DatabaseError('lost', 'transient', '08006', undefined, { cause })],
    ['InvalidFrameError', new InvalidFrameError('version must be 1')],
    ['HealthCheckError', new HealthCheckError('bad key', 'subagent_context_capture_since', 'x')],
    ['MigrationError', new MigrationError('m', 'insert', cause)],
  ])('%s extends SubagentContextError and names itself', (name, error) => {
    expect(error).toBeInstanceOf(SubagentContextError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.constructor.name).toBe(name);
    expect(String(error)).toMatch(new RegExp(`^${name}: `));
  });

  it('keeps a project cause as it is', () => {
    const ours = new DatabaseError('lost', 'transient', '08006', undefined);
    expect(new MigrationError('m', 'insert', ours).cause).toBe(ours);
  });

  it('R2-6: keeps a third-party cause as a ForeignError: name, code and redacted text, no other own property', () => {
    const url = 'postgres://acc:Pa55w0rd@%zz:5432/db';
    const driver = Object.assign(new TypeError(`Invalid URL ${url}`, { cause: { input: url } }), {
      code: 'ERR_INVALID_URL',
      input: url,
    });
    const error = new DatabaseUrlConfigError('no url', '/p', { cause: driver });
    expect(error.cause).toBeInstanceOf(ForeignError);
    expect(error.cause).toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_URL',
      message: 'Invalid URL postgres://***@%zz:5432/db',
    });
    expect(Object.keys(error.cause as object)).toEqual(['name', 'code']);
    expect(inspect(error, { depth: Infinity })).not.toContain('Pa55w0rd');
  });

  it('R2-6: asProjectError keeps our errors (instanceof holds) and wraps any other thrown value', () => {
    const ours = new MigrationError('m', 'insert', cause);
    expect(asProjectError(ours)).toBe(ours);
    expect(asProjectError(new RangeError('x'))).toMatchObject({ name: 'RangeError', message: 'x' });
    expect(asProjectError('postgres://u:Pa55w0rd@h/d').message).toBe('postgres://***@h/d');
  });
});
