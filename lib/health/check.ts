import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../db/database.js';
import { CAPTURE_SINCE_KEY, readMetaKeys } from '../store/meta.js';
import { formatCanonical, formatRfc3339, nowMicros, parseStoredTimestamp, type Micros } from '../time.js';
import { DEFAULT_CONFIRM_DELAY_SECONDS } from './config.js';
import { excessSql, rowFactsSql, shortfallSql } from './queries.js';
import type { HealthReport, HealthStatus, MissingKey } from './report.js';
import { SubagentContextError } from '../errors.js';


export interface HealthCheckOptions {
  /** messages newer than this are not yet expected to have rows (frames wait in the queue) */
  graceSeconds: number;
  /** the check's clock; defaults to the process clock */
  now?: Micros;
  /** pause between a non-zero shortfall and its re-evaluation (AC-28b); default DEFAULT_CONFIRM_DELAY_SECONDS */
  confirmDelayMs?: number;
  /** replaces that pause (tests make the in-flight write land here) */
  beforeConfirm?: () => Promise<void>;
}

export class HealthCheckError extends SubagentContextError {
  override readonly name = 'HealthCheckError';
  constructor(
    message: string,
    readonly key: string,
    readonly value: string,
  ) {
    super(message);
  }
}

interface Shortfall {
  total: number;
  missing: MissingKey[];
}

/**
 * docs/health.md: compares the host's subagent messages since activation with our rows. Never nets the
 * two directions into one number: shortfall alarms, excess and collisions are only reported.
 */
export async function runHealthCheck(db: Queryable, options: HealthCheckOptions): Promise<HealthReport> {
  const { graceSeconds } = options;
  if (!Number.isFinite(graceSeconds) || graceSeconds < 0) {
    throw new RangeError(`graceSeconds must be a non-negative number of seconds (got ${graceSeconds})`);
  }
  const now = options.now ?? nowMicros();
  const checkedAt = formatRfc3339(now);
  const captureSince = activationInstant((await readMetaKeys(db)).captureSince);
  if (captureSince === undefined) {
    // The missing key is the signal (AC-28a): without an activation instant there is nothing to compare.
    return { status: 'not_activated', shortfall: null, excess: null, collisions: null, lastObservedAt: null, captureSince: null, missing: [], checkedAt };
  }

  const { dialect } = db;
  const since = formatCanonical(captureSince);
  const cutoff = formatCanonical(now - BigInt(Math.round(graceSeconds * 1_000_000)));
  const evaluateShortfall = async (): Promise<Shortfall> => {
    const rows = await db.query<{ task_session_id: string; tool_call_id: string; total: number }>(shortfallSql(dialect), [since, cutoff]);
    return {
      total: Number(rows[0]?.total ?? 0),
      missing: rows.map(({ task_session_id, tool_call_id }) => ({ task_session_id, tool_call_id })),
    };
  };
  // Independent statements: on PostgreSQL they run side by side on pooled connections.
  const evaluate = () =>
    Promise.all([
      evaluateShortfall(),
      db.query<{ excess: number }>(excessSql(dialect)),
      db.query<{ row_count: number; key_count: number; last_observed: string | null }>(rowFactsSql(dialect), [since]),
    ]);

  let [shortfall, excessRows, factRows] = await evaluate();
  if (shortfall.total > 0) {
    // A batch still being written when the first statement read its snapshot is not a loss, so
    // the whole report is taken again after a pause and only that one counts (AC-28b).
    await (options.beforeConfirm ?? (() => sleep(options.confirmDelayMs ?? DEFAULT_CONFIRM_DELAY_SECONDS * 1000)))();
    [shortfall, excessRows, factRows] = await evaluate();
  }

  const facts = factRows[0]!;
  const lastObserved = facts.last_observed === null ? undefined : parseStoredTimestamp(String(facts.last_observed));
  const status: HealthStatus = shortfall.total > 0 ? 'shortfall' : lastObserved === undefined ? 'silent' : 'healthy';
  return {
    status,
    shortfall: shortfall.total,
    excess: Number(excessRows[0]!.excess),
    collisions: Number(facts.row_count) - Number(facts.key_count),
    lastObservedAt: lastObserved === undefined ? null : formatRfc3339(lastObserved),
    captureSince: formatRfc3339(captureSince),
    missing: shortfall.missing,
    checkedAt,
  };
}

/** The capture_since key as an instant; absent or the '' sentinel (never parsed, AC-24f) → undefined. */
function activationInstant(value: string | undefined): Micros | undefined {
  if (value === undefined || value === '') return undefined;
  const us = parseStoredTimestamp(value);
  if (us === undefined) {
    throw new HealthCheckError(
      `kandev_meta key ${CAPTURE_SINCE_KEY} holds ${JSON.stringify(value)}, which is not an RFC 3339 instant; ` +
        `set it to the activation time (e.g. 2026-08-12T13:24:58.123456000Z) or delete it and re-invoke migrate`,
      CAPTURE_SINCE_KEY,
      value,
    );
  }
  return us;
}
