/**
 * Bounded time (docs/ingest.md R2-5): every connect, statement and SQS call of an invocation ends
 * before the Lambda does, so the records not done are reported as batch item failures in time
 * instead of the whole batch timing out. A deadline is an epoch time in milliseconds.
 */

import type { DeadlineOwner } from './hints.js';

/** What the handlers read from the Lambda context. */
export interface RemainingTime {
  getRemainingTimeInMillis(): number;
}

/** Kept back from the Lambda's remaining time: answering SQS, publishing metrics, logging. */
export const RESPONSE_MARGIN_MS = 1000;

/** The invocation's deadline, or undefined when there is no Lambda context (CLI, local poller). */
export function deadlineFrom(
  context: RemainingTime | undefined,
  marginMs = RESPONSE_MARGIN_MS,
  now = Date.now(),
): number | undefined {
  const remaining = context?.getRemainingTimeInMillis?.();
  if (remaining === undefined || !Number.isFinite(remaining)) return undefined;
  return now + Math.max(0, remaining - marginMs);
}

/**
 * An earlier deadline for one phase, keeping `share` of what is left (at most `maxReserveMs`) for
 * the phases after it: the database writes leave time for parking on the DLQ.
 */
export function phaseDeadline(
  deadline: number | undefined,
  options: { share: number; maxReserveMs: number },
  now = Date.now(),
): number | undefined {
  if (deadline === undefined) return undefined;
  const left = Math.max(0, deadline - now);
  return deadline - Math.min(options.maxReserveMs, left * options.share);
}

/** Milliseconds until `deadline` (never negative); Infinity without one. */
export function msUntil(deadline: number | undefined, now = Date.now()): number {
  return deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, deadline - now);
}

/**
 * `work` raced against the deadline: when the deadline comes first, `onTimeout` runs (close the
 * socket that hangs) and the returned promise rejects with `timeoutError()`. Without a deadline
 * this is `work` itself.
 */
export async function beforeDeadline<T>(
  work: Promise<T>,
  deadline: number | undefined,
  timeoutError: (waitedMs: number) => Error,
  onTimeout?: () => void,
): Promise<T> {
  if (deadline === undefined) return work;
  const waitMs = msUntil(deadline);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(timeoutError(waitMs));
    }, waitMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** An AbortSignal that fires at the deadline (SDK calls), or undefined without one. */
export function signalAt(deadline: number | undefined): AbortSignal | undefined {
  return deadline === undefined ? undefined : AbortSignal.timeout(Math.max(1, msUntil(deadline)));
}

/** The part of a database this module sets (lib/db/database.ts `setDeadline`). */
interface Deadlined {
  setDeadline(deadline: number, owner: DeadlineOwner): void;
  setDeadline(deadline: undefined): void;
}

/**
 * Runs one invocation's database work bounded by the Lambda context's remaining time (migrate,
 * health): a statement past it fails, and the caller's error names the step it was in.
 */
export async function withinInvocation<D extends Deadlined, T>(
  db: D,
  context: RemainingTime | undefined,
  work: (db: D) => Promise<T>,
): Promise<T> {
  const deadline = deadlineFrom(context);
  if (deadline === undefined) return work(db);
  db.setDeadline(deadline, { caller: 'function', work: 'other' });
  try {
    return await work(db);
  } finally {
    db.setDeadline(undefined);
  }
}
