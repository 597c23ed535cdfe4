import { rowSpanIdOf, traceIdOf, turnSpanIdOf } from '../../lib/export/otlp/ids.js';

/*
 * Run as its own process (test/lib/export/otlp-config.test.ts): prints the ids of the fixed
 * identities of test/support/otlp-ids.ts, so a test can compare ids across processes (an id that
 * mixed in the process, its clock or a random seed would differ from the parent's).
 */
process.stdout.write(
  JSON.stringify({
    trace_s1_u1: traceIdOf('s1', 'u1'),
    trace_s1_none: traceIdOf('s1', ''),
    turn_s1_u1: turnSpanIdOf('s1', 'u1'),
    row_s1_e1_a: rowSpanIdOf('s1', 'e1', 'a'),
  }),
);
