import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../lib/db/open.js';
import { runHealthCheck } from '../../../lib/health/check.js';
import {
  catchUpSecondsFromEnv,
  confirmDelaySecondsFromEnv,
  DEFAULT_GRACE_SECONDS,
  graceSecondsFromEnv,
  healthOptionsFromEnv,
  maxWindowSecondsFromEnv,
} from '../../../lib/health/config.js';

describe('health configuration', () => {
  it.each([
    [undefined, DEFAULT_GRACE_SECONDS],
    ['', DEFAULT_GRACE_SECONDS],
    ['60', 60],
    [' 0 ', 0],
    ['1.5', 1.5],
  ])('HEALTH_GRACE_SECONDS=%j gives %d seconds', (value, expected) => {
    expect(graceSecondsFromEnv({ HEALTH_GRACE_SECONDS: value })).toBe(expected);
  });

  it('the grace period defaults to 15 minutes (docs/health.md)', () => {
    expect(DEFAULT_GRACE_SECONDS).toBe(900);
  });

  it.each(['-1', 'fifteen minutes', 'Infinity'])('refuses HEALTH_GRACE_SECONDS=%j and says how to fix it', (value) => {
    expect(() => graceSecondsFromEnv({ HEALTH_GRACE_SECONDS: value })).toThrow(
      /HEALTH_GRACE_SECONDS must be a non-negative number.*unset it/,
    );
  });

  it('refuses a negative HEALTH_CONFIRM_DELAY_SECONDS', () => {
    expect(() => confirmDelaySecondsFromEnv({ HEALTH_CONFIRM_DELAY_SECONDS: '-5' })).toThrow(
      /HEALTH_CONFIRM_DELAY_SECONDS/,
    );
  });
});

describe('health window and catch-up bounds (issue 20 D9)', () => {
  it.each([
    [undefined, 3600],
    ['3600', 3600],
    ['30', 30],
    ['86400', 86_400],
  ])('HEALTH_MAX_WINDOW_SECONDS=%j gives %d seconds', (value, expected) => {
    expect(maxWindowSecondsFromEnv({ HEALTH_MAX_WINDOW_SECONDS: value })).toBe(expected);
  });

  it.each(['1e-7', '0', '0.5', '29.9', '-1', 'an hour'])(
    'D9: HEALTH_MAX_WINDOW_SECONDS=%j is refused with the floor, never obeyed silently',
    (value) => {
      expect(() => maxWindowSecondsFromEnv({ HEALTH_MAX_WINDOW_SECONDS: value })).toThrow(
        /HEALTH_MAX_WINDOW_SECONDS must be (at least 30 seconds|a non-negative number)/,
      );
    },
  );

  it.each([
    [undefined, 30],
    ['0', 0],
    ['1', 1],
    ['90', 90],
  ])('HEALTH_CATCH_UP_SECONDS=%j gives %d seconds', (value, expected) => {
    expect(catchUpSecondsFromEnv({ HEALTH_CATCH_UP_SECONDS: value })).toBe(expected);
  });

  it.each(['1e-7', '0.5', '120', '3600', '-1'])(
    'D9: HEALTH_CATCH_UP_SECONDS=%j is refused (0, or 1 s to under the function timeout)',
    (value) => {
      expect(() => catchUpSecondsFromEnv({ HEALTH_CATCH_UP_SECONDS: value })).toThrow(
        /HEALTH_CATCH_UP_SECONDS must be/,
      );
    },
  );

  it.each([
    [{ maxWindowSeconds: 1e-7 }, /maxWindowSeconds must be at least 30 seconds/],
    [{ maxWindowSeconds: 0 }, /maxWindowSeconds must be at least 30 seconds/],
    [{ catchUpSeconds: 1e-7 }, /catchUpSeconds must be 0 .* or at least 1 second/],
  ])('D9: runHealthCheck refuses %j before reading anything', async (options, message) => {
    const db = openDatabase('sqlite::memory:');
    try {
      await expect(runHealthCheck(db, { kind: 'scheduled', ...healthOptionsFromEnv({}), ...options })).rejects.toThrow(
        message,
      );
    } finally {
      await db.close();
    }
  });
});
