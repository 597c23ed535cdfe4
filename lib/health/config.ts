/** SPEC §9: frames wait in the queue, so messages newer than this are not yet expected to have rows. */
export const DEFAULT_GRACE_SECONDS = 900;

/** HEALTH_GRACE_SECONDS: unset or '' → the default; anything but a non-negative number is refused. */
export function graceSecondsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HEALTH_GRACE_SECONDS?.trim();
  if (!raw) return DEFAULT_GRACE_SECONDS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new RangeError(
      `HEALTH_GRACE_SECONDS must be a non-negative number of seconds (got ${JSON.stringify(raw)}); unset it for the default ${DEFAULT_GRACE_SECONDS}`,
    );
  }
  return seconds;
}
