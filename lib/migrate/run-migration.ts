import type { Logger } from '@aws-lambda-powertools/logger';
import { interruptedAtBoundary } from '../boundary.js';
import type { Database, Queryable } from '../db/database.js';
import { DatabaseError, type FailureKind, failureFields } from '../db/errors.js';
import { SubagentContextError } from '../errors.js';
import { auditHistory } from '../health/check.js';
import { BACKFILL_THROUGH_KEY, CAPTURE_SINCE_KEY, readMetaKeys } from '../store/meta.js';
import { describeShape, HOST_TABLES, hostShape } from '../store/probe.js';
import { ensureSubagentTable } from '../store/schema.js';
import { formatCanonical, formatKey, type Micros, nowMicros, parseStoredTimestamp } from '../time.js';
import { backfillInsertSql, highWaterSql } from './backfill-sql.js';
import { CREATE_META_TABLE, writeKeyOnce } from './keys.js';

/** The migration's name in logs and errors. */
export const MIGRATION_NAME = 'task_session_subagents.backfill';

/** The steps of docs/migrate.md, in order; a failure names the one that failed. */
export type MigrationStep =
  | 'schema'
  | 'guard'
  | 'high_water'
  | 'insert'
  | 'capture_since_key'
  | 'backfill_through_key'
  | 'commit';

export interface MigrationReport {
  /**
   * `completed`: the one backfill ran and wrote the keys; `skipped`: both keys were there;
   * `rerun`: both keys were there and `rerunBackfill` inserted the history again (keys untouched)
   */
  backfill: 'completed' | 'skipped' | 'rerun';
  /** rows the backfill inserted (0 when skipped) */
  inserted: number;
  /** qualifying messages it read, before keeping the newest per key (0 when skipped) */
  matched: number;
  /** the key values now in kandev_meta, byte-identical, or null when absent */
  captureSince: string | null;
  backfillThrough: string | null;
  /**
   * R3-4, when both keys were there: qualifying messages created before capture_since whose key
   * has no row (a lost backfill: a re-created table, deleted rows), after a rerun the ones still
   * without a row; null when the backfill just ran (it covered them) or capture_since is not an instant
   */
  historyMissing: number | null;
  durationMs: number;
}

export interface MigrationOptions {
  /**
   * Called inside the transaction just before each of its steps; throwing fails that step for
   * real (the transaction rolls back). Tests force failures and observe timing with it.
   */
  beforeStep?: (step: MigrationStep) => void | Promise<void>;
  /**
   * R3-4: when both keys exist, run the backfill's insert again over the messages created before
   * capture_since (`ON CONFLICT DO NOTHING`: rows already there, live or backfilled, are kept;
   * the keys are never touched). For a store whose backfilled rows are gone.
   */
  rerunBackfill?: boolean;
  /** where the outcome is logged (INFO skipped/completed, WARN failed); none when absent */
  logger?: Pick<Logger, 'info' | 'warn'>;
  /**
   * Ctrl-C (the CLI's interrupt, issue 58 #11): asked at each step's boundary, after a turn of the
   * event loop, so a signal that came during a synchronous SQLite statement is seen there too.
   * Aborted: the migration throws MigrationInterrupted at that boundary; inside the backfill's
   * transaction it rolls back first, so nothing of the backfill is committed.
   */
  signal?: AbortSignal;
}

const SILENT: Pick<Logger, 'info' | 'warn'> = { info() {}, warn() {} };

export class MigrationError extends SubagentContextError {
  override readonly name = 'MigrationError';
  /** R2-4's class of the cause (system: the database or its configuration; row: a host row) */
  readonly failureClass: FailureKind;
  readonly sqlstate: string | undefined;
  constructor(
    readonly migration: string,
    readonly step: MigrationStep,
    cause: unknown,
  ) {
    const fields = failureFields(cause);
    super(
      `${migration} failed at step "${step}": ${cause instanceof Error ? cause.message : String(cause)}. ` +
        'The transaction was rolled back and no kandev_meta key was written; fix the cause and invoke the migrate function again to retry.',
      { cause },
    );
    this.failureClass = fields.failure_class;
    this.sqlstate = fields.sqlstate;
  }
}

/** The migration stopped at a step's boundary because `signal` aborted (Ctrl-C); not a failure. */
export class MigrationInterrupted extends SubagentContextError {
  override readonly name = 'MigrationInterrupted';
  constructor(
    /** the step it did not start */
    readonly step: MigrationStep,
    /** whether the schema's own transaction (idempotent) had committed before it stopped */
    readonly schemaCommitted: boolean,
  ) {
    super(
      `${MIGRATION_NAME} stopped before step "${step}" (interrupted): ` +
        (step === 'schema'
          ? 'nothing was written'
          : 'the backfill was rolled back; no row and no kandev_meta key of it was committed'),
    );
  }
}

/** Throws MigrationInterrupted at a step's boundary once `signal` aborted (a turn of the event loop first). */
async function stopIfAsked(
  signal: AbortSignal | undefined,
  step: MigrationStep,
  schemaCommitted: boolean,
): Promise<void> {
  if (await interruptedAtBoundary(signal)) throw new MigrationInterrupted(step, schemaCommitted);
}

/**
 * docs/migrate.md: schema (idempotent), then — unless both keys exist — one transaction that reads the
 * high-water mark, inserts every qualifying message's row, samples capture_since after the insert
 * and writes both keys once. Safe to run any number of times.
 */
export async function runMigration(db: Database, options: MigrationOptions = {}): Promise<MigrationReport> {
  const started = performance.now();
  const duration = () => Math.round(performance.now() - started);
  let step: MigrationStep = 'schema';
  const logger = options.logger ?? SILENT;
  const { signal } = options;
  try {
    await stopIfAsked(signal, 'schema', false);
    // All of the schema or none of it (docs/migrate.md#1-schema): a failure here leaves no
    // kandev_meta, table, column, index or function behind. Its own transaction, not the
    // backfill's: holding its locks (ADD COLUMN's is exclusive) through a long backfill would block
    // the host's own writer for as long.
    await db.transaction(async (tx) => {
      await requireHostTables(tx);
      await tx.query(CREATE_META_TABLE);
      await ensureSubagentTable(tx);
      await options.beforeStep?.('schema');
    });
    step = 'guard';
    await stopIfAsked(signal, step, true);
    const present = await readMetaKeys(db);
    if (present.captureSince !== undefined && present.backfillThrough !== undefined) {
      const captureSince = parseStoredTimestamp(present.captureSince);
      let inserted = 0;
      if (options.rerunBackfill && captureSince !== undefined) {
        step = 'insert';
        inserted = await db.transaction(async (tx) => {
          const count = await insertHistory(tx, captureSince);
          await stopIfAsked(signal, 'commit', true);
          return count;
        });
      }
      step = 'guard';
      const historyMissing = captureSince === undefined ? null : (await auditHistory(db, captureSince)).shortfall;
      const report: MigrationReport = {
        backfill: options.rerunBackfill && captureSince !== undefined ? 'rerun' : 'skipped',
        inserted,
        matched: 0,
        captureSince: present.captureSince,
        backfillThrough: present.backfillThrough,
        historyMissing,
        durationMs: duration(),
      };
      if (report.backfill === 'rerun') {
        logger.info('subagent backfill run again over the history before capture_since; keys untouched', {
          migration: MIGRATION_NAME,
          ...report,
        });
      } else if ((historyMissing ?? 0) > 0) {
        logger.warn(
          `subagent backfill skipped, but ${historyMissing} backfilled subagent invocations have no row ` +
            '(a re-created table, deleted rows): run migrate with --rerun-backfill (function input {"rerunBackfill": true}) to insert them again',
          { migration: MIGRATION_NAME, ...report },
        );
      } else {
        logger.info('subagent backfill skipped: both kandev_meta keys present', {
          migration: MIGRATION_NAME,
          ...report,
        });
      }
      return report;
    }
    const result = await db.transaction(async (tx) => {
      const enter = async (next: MigrationStep) => {
        step = next;
        await stopIfAsked(signal, next, true);
        await options.beforeStep?.(next);
      };
      return backfill(tx, enter);
    });
    const report: MigrationReport = { backfill: 'completed', ...result, historyMissing: null, durationMs: duration() };
    logger.info('subagent backfill completed', { migration: MIGRATION_NAME, ...report });
    return report;
  } catch (err) {
    if (err instanceof MigrationInterrupted) {
      logger.info('migration interrupted; nothing of the backfill was committed, run migrate again', {
        migration: MIGRATION_NAME,
        step: err.step,
      });
      throw err;
    }
    const error = err instanceof MigrationError ? err : new MigrationError(MIGRATION_NAME, step, err);
    logger.warn('migration failed; nothing was committed, run migrate again to retry', {
      migration: MIGRATION_NAME,
      step: error.step,
      ...failureFields(err),
      error: err as Error,
    });
    throw error;
  }
}

/**
 * A database without the host's tables is not the host's store (a mistyped path or URL), and one
 * whose tables lack a column the backfill reads is not the host's shape (issue 51): migrate creates
 * nothing there and says so, rather than failing half-way through. A catalog read (lib/store/probe.ts
 * `hostShape`): inside a PostgreSQL transaction a failed statement would abort it (the function
 * path has no CLI preflight before this).
 */
async function requireHostTables(tx: Queryable): Promise<void> {
  const shape = await hostShape(tx);
  if (shape.missingTables.length > 0) {
    // 42P01 (undefined_table) on both dialects, as the first statement to read them would raise: R2-4's system class.
    throw new DatabaseError(
      `this database has no ${HOST_TABLES.join(' / ')} (the host's tables), so it is not the host's store: ` +
        'check DATABASE_URL / --database-url (migrate created nothing)',
      'system',
      '42P01',
      undefined,
    );
  }
  const problem = describeShape(shape);
  if (problem !== undefined) {
    // 42703 (undefined_column), as the backfill's read would raise, but before anything is written (issue 51)
    throw new DatabaseError(`this database ${problem}: migrate created nothing`, 'system', '42703', undefined, {
      hintClass: 'host_shape',
    });
  }
}

/** The backfill's insert over the messages created before capture_since; the number of rows it added. */
async function insertHistory(tx: Queryable, captureSince: Micros): Promise<number> {
  let inserted = 0;
  for (const statement of tx.dialect.countInserted(backfillInsertSql(tx.dialect, { createdBefore: 1 }))) {
    const rows = await tx.query<{ inserted: number | string }>(statement, [formatCanonical(captureSince)]);
    if (rows[0]) inserted = Number(rows[0].inserted);
  }
  return inserted;
}

async function backfill(
  tx: Queryable,
  enter: (step: MigrationStep) => Promise<void>,
): Promise<Omit<MigrationReport, 'backfill' | 'durationMs' | 'historyMissing'>> {
  const { dialect } = tx;
  await enter('high_water');
  const [mark] = await tx.query<{ newest: string | null; matched: number | string }>(highWaterSql(dialect));
  const newest = mark?.newest == null ? undefined : parseStoredTimestamp(String(mark.newest));
  if (mark?.newest != null && newest === undefined) {
    throw new Error(`unreadable MAX(created_at) ${JSON.stringify(mark.newest)} in task_session_messages`);
  }

  await enter('insert');
  let inserted = 0;
  for (const statement of dialect.countInserted(backfillInsertSql(dialect))) {
    const rows = await tx.query<{ inserted: number | string }>(statement);
    if (rows[0]) inserted = Number(rows[0].inserted);
  }

  // Sampled only now, after the insert (never at transaction start, docs/migrate.md#3-the-backfill-transaction, step c).
  await enter('capture_since_key');
  await writeKeyOnce(tx, CAPTURE_SINCE_KEY, formatKey(nowMicros()));
  await enter('backfill_through_key');
  await writeKeyOnce(tx, BACKFILL_THROUGH_KEY, newest === undefined ? '' : formatKey(newest));
  await enter('commit');
  const keys = await readMetaKeys(tx);
  return {
    inserted,
    matched: Number(mark?.matched ?? 0),
    captureSince: keys.captureSince ?? null,
    backfillThrough: keys.backfillThrough ?? null,
  };
}
