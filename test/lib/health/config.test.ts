import { describe, expect, it } from 'vitest';
import { confirmDelaySecondsFromEnv, DEFAULT_GRACE_SECONDS, graceSecondsFromEnv } from '../../../lib/health/config.js';

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
