import { describe, expect, it } from 'vitest';
import { MigrationError, runMigration } from '../../../lib/migrate/run-migration.js';
import { logger } from '../../../lib/observability.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';
import { captureOutput } from '../ingest/support.js';

describe.each(TARGETS)('R2-4 classes in the migrate report on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  it('R2-4: a missing host table fails migrate with the step, the system class and the SQLSTATE, logged (AC-20: WARN)', async () => {
    await t.db.query('DROP TABLE task_session_messages');
    const { result: failure, lines } = await captureOutput(() =>
      runMigration(t.db, { logger }).catch((err: unknown) => err),
    );
    expect(failure).toBeInstanceOf(MigrationError);
    // Found before any DDL (AC-20: nothing is created), as 42P01 on both dialects.
    expect(failure).toMatchObject({ step: 'schema', failureClass: 'system', sqlstate: '42P01' });
    expect(lines.find((l) => l.level === 'WARN')).toMatchObject({ step: 'schema', failure_class: 'system' });
  });
});
