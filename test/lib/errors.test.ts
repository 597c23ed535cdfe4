import { describe, expect, it } from 'vitest';
import { DatabaseUrlConfigError } from '../../lib/config/database-url.js';
import { DatabaseError } from '../../lib/db/errors.js';
import { SubagentContextError } from '../../lib/errors.js';
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

  it('keeps the cause chain', () => {
    expect(new DatabaseUrlConfigError('no url', '/p', { cause }).cause).toBe(cause);
    expect(new MigrationError('m', 'insert', cause).cause).toBe(cause);
  });
});
