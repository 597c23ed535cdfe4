import {
  HEALTH_CATCH_UP_SECONDS,
  HEALTH_CONFIRM_DELAY_SECONDS,
  HEALTH_GRACE_SECONDS,
  HEALTH_MAX_WINDOW_SECONDS,
  HEALTH_MIN_CATCH_UP_SECONDS,
  HEALTH_MIN_WINDOW_SECONDS,
  HEALTH_OVERLAP_SECONDS,
  HEALTH_TIMEOUT_SECONDS,
} from '../defaults.js';

/** docs/health.md: frames wait in the queue, so messages newer than this are not yet expected to have rows. */
export const DEFAULT_GRACE_SECONDS = HEALTH_GRACE_SECONDS;

/**
 * The scheduled check starts each window this long before its checkpoint, so a message whose
 * row-less state was decided at the window's edge (a commit later than the grace period) is
 * looked at again (docs/health.md).
 */
export const DEFAULT_OVERLAP_SECONDS = HEALTH_OVERLAP_SECONDS;

/** Pause before a non-zero shortfall is re-evaluated (AC-28b), so in-flight batches can land. */
export const DEFAULT_CONFIRM_DELAY_SECONDS = HEALTH_CONFIRM_DELAY_SECONDS;

/** The longest slice one evaluation covers (docs/health.md#catching-up). */
export const DEFAULT_MAX_WINDOW_SECONDS = HEALTH_MAX_WINDOW_SECONDS;

/** A scheduled run starts no further catch-up slice after this long (docs/health.md#catching-up). */
export const DEFAULT_CATCH_UP_SECONDS = HEALTH_CATCH_UP_SECONDS;

/** HEALTH_GRACE_SECONDS (docs/health.md grace period). */
export function graceSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return secondsFromEnv(env, 'HEALTH_GRACE_SECONDS', DEFAULT_GRACE_SECONDS);
}

/** HEALTH_CONFIRM_DELAY_SECONDS. */
export function confirmDelaySecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return secondsFromEnv(env, 'HEALTH_CONFIRM_DELAY_SECONDS', DEFAULT_CONFIRM_DELAY_SECONDS);
}

/** HEALTH_OVERLAP_SECONDS (the scheduled check's overlap before its checkpoint). */
export function overlapSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return secondsFromEnv(env, 'HEALTH_OVERLAP_SECONDS', DEFAULT_OVERLAP_SECONDS);
}

/**
 * HEALTH_MAX_WINDOW_SECONDS: at least HEALTH_MIN_WINDOW_SECONDS (D9: a tiny window verifies nothing
 * and reports nothing missing, silently).
 */
export function maxWindowSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = secondsFromEnv(env, 'HEALTH_MAX_WINDOW_SECONDS', DEFAULT_MAX_WINDOW_SECONDS);
  if (seconds < HEALTH_MIN_WINDOW_SECONDS)
    throw new RangeError(
      `HEALTH_MAX_WINDOW_SECONDS must be at least ${HEALTH_MIN_WINDOW_SECONDS} seconds (got ${seconds}); unset it for the default ${DEFAULT_MAX_WINDOW_SECONDS}`,
    );
  return seconds;
}

/**
 * HEALTH_CATCH_UP_SECONDS: 0 (one slice per run), or from HEALTH_MIN_CATCH_UP_SECONDS to the health
 * function's timeout (a run still starting slices then is cut off by Lambda mid-slice).
 */
export function catchUpSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = secondsFromEnv(env, 'HEALTH_CATCH_UP_SECONDS', DEFAULT_CATCH_UP_SECONDS);
  if (seconds !== 0 && (seconds < HEALTH_MIN_CATCH_UP_SECONDS || seconds >= HEALTH_TIMEOUT_SECONDS))
    throw new RangeError(
      `HEALTH_CATCH_UP_SECONDS must be 0 (one slice per run) or from ${HEALTH_MIN_CATCH_UP_SECONDS} to under the health function's ${HEALTH_TIMEOUT_SECONDS} s timeout (got ${seconds}); unset it for the default ${DEFAULT_CATCH_UP_SECONDS}`,
    );
  return seconds;
}

/** Every HEALTH_* setting of the scheduled check, as runHealthCheck takes them. */
export function healthOptionsFromEnv(env: NodeJS.ProcessEnv = process.env) {
  return {
    graceSeconds: graceSecondsFromEnv(env),
    overlapSeconds: overlapSecondsFromEnv(env),
    maxWindowSeconds: maxWindowSecondsFromEnv(env),
    catchUpSeconds: catchUpSecondsFromEnv(env),
    confirmDelayMs: confirmDelaySecondsFromEnv(env) * 1000,
  };
}

/** Unset or '' → the default; anything but a non-negative number is refused with how to fix it. */
function secondsFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new RangeError(
      `${name} must be a non-negative number of seconds (got ${JSON.stringify(raw)}); unset it for the default ${fallback}`,
    );
  }
  return seconds;
}
