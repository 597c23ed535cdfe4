/**
 * Trace and span ids for fixed identities, by docs/otlp.md#ids (the first 16 / 8 bytes of SHA-256
 * over the labelled, NUL-separated identity), computed outside the code under test, e.g.
 * `printf 'subagent-context/trace\0s1\0u1' | sha256sum | cut -c1-32`.
 */
export const FIXED_IDS = {
  /** traceIdOf('s1', 'u1') */
  trace_s1_u1: 'ce215f2a162df9ed1f63754cb1d65573',
  /** traceIdOf('s1', ''): the rows of session s1 without a turn */
  trace_s1_none: 'bb4a66e2792a1b2aa98c8dfcc7be2d84',
  /** turnSpanIdOf('s1', 'u1') */
  turn_s1_u1: '777a9da94d85bbe7',
  /** rowSpanIdOf('s1', 'e1', 'a') */
  row_s1_e1_a: '3c11628762466e45',
} as const;

/** Ids holding a zero byte (not all zero, so kept as the digest gives them), computed the same way. */
export const ZERO_BYTE_IDS = {
  /** traceIdOf('s1', 'u0'): byte 11 is 00 */
  trace_s1_u0: '10054735a43dd2e39370002397e06b02',
  /** turnSpanIdOf('s1', 'u10'): byte 2 is 00 */
  turn_s1_u10: '02002a543681703c',
  /** rowSpanIdOf('s1', 'e1', 't73'): byte 6 is 00 */
  row_s1_e1_t73: 'c8e911a328006bc0',
} as const;
