import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OtlpConfigError, resolveOtlpTarget } from '../../../lib/export/otlp/config.js';
import { rowSpanIdOf, traceIdOf, turnSpanIdOf } from '../../../lib/export/otlp/ids.js';
import { FIXED_IDS, ZERO_BYTE_IDS } from '../../support/otlp-ids.js';

describe('OTLP target (flags, then OTEL_EXPORTER_OTLP_* variables, then defaults)', () => {
  it.each([
    ['a bare --otlp origin gets /v1/traces', { url: 'http://c:4318' }, {}, 'http://c:4318/v1/traces'],
    [
      'a --otlp path is used as given',
      { url: 'https://x/api/public/otel/v1/traces' },
      {},
      'https://x/api/public/otel/v1/traces',
    ],
    [
      'the general variable gets /v1/traces',
      {},
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://x/api/public/otel' },
      'https://x/api/public/otel/v1/traces',
    ],
    [
      'the traces variable is used as given and wins over the general one',
      {},
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/custom' },
      'http://b:4318/custom',
    ],
    [
      'the flag wins over both',
      { url: 'http://f:4318' },
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/x' },
      'http://f:4318/v1/traces',
    ],
    [
      'credentials in the URL are kept for the request',
      { url: 'http://u:p@c:4318' },
      {},
      'http://u:p@c:4318/v1/traces',
    ],
  ] as const)('R3-10: %s', (_, flags, env, url) => {
    expect(resolveOtlpTarget(flags, env).url).toBe(url);
  });

  it('R3-10: protocol defaults to http/protobuf, gzip on; the _TRACES_ variable wins over the general one, the flag over both', () => {
    expect(resolveOtlpTarget({ url: 'http://c' }, {})).toMatchObject({
      protocol: 'http/protobuf',
      compression: 'gzip',
    });
    const env = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' };
    expect(resolveOtlpTarget({ url: 'http://c' }, env).protocol).toBe('http/json');
    expect(resolveOtlpTarget({ url: 'http://c', protocol: 'http/protobuf' }, env).protocol).toBe('http/protobuf');
  });

  it('R3-10: headers merge general < traces < --header; values may hold = and percent-escapes', () => {
    const target = resolveOtlpTarget(
      { url: 'http://c', headers: ['x-b=flag', 'x-token=a=b'] },
      {
        OTEL_EXPORTER_OTLP_HEADERS: 'x-a=1,x-b=2',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-b=3,authorization=Basic%20YWJj',
      },
    );
    expect(target.headers).toEqual({ 'x-a': '1', 'x-b': 'flag', authorization: 'Basic YWJj', 'x-token': 'a=b' });
  });

  it.each([
    [{}, {}, /no OTLP endpoint/],
    [{ url: 'grpc://c:4317' }, {}, /only OTLP\/HTTP/],
    [{ url: 'not a url' }, {}, /is not a URL/],
    [{ url: 'http://c', protocol: 'grpc' }, {}, /http\/protobuf or http\/json/],
    [{ url: 'http://c', headers: ['Bearer s3cret'] }, {}, /--header needs name=value/],
  ] as const)('R3-10: %j is refused with a message saying what to give', (flags, env, message) => {
    const error = (() => {
      try {
        resolveOtlpTarget(flags, env);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OtlpConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('s3cret');
  });
});

describe('ids derived from the rows', () => {
  const text = fc.string({ maxLength: 20 }).filter((s) => !s.includes('\u0000'));

  it.each([
    ['trace', () => traceIdOf('s1', 'u0'), ZERO_BYTE_IDS.trace_s1_u0],
    ['turn span', () => turnSpanIdOf('s1', 'u10'), ZERO_BYTE_IDS.turn_s1_u10],
    ['row span', () => rowSpanIdOf('s1', 'e1', 't73'), ZERO_BYTE_IDS.row_s1_e1_t73],
  ])('R3-10: a %s id holding a zero byte is the digest as it is: only an all-zero id is changed', (_, id, expected) => {
    expect(id()).toBe(expected);
  });

  it('R3-10: the same identity always gives the same valid ids (16-byte trace, 8-byte span, never all zero)', () => {
    fc.assert(
      fc.property(text, text, text, (session, turn, call) => {
        expect(traceIdOf(session, turn)).toMatch(/^[0-9a-f]{32}$/);
        expect(turnSpanIdOf(session, turn)).toMatch(/^[0-9a-f]{16}$/);
        expect(rowSpanIdOf(session, 'e1', call)).toBe(rowSpanIdOf(session, 'e1', call));
        expect(traceIdOf(session, turn)).not.toMatch(/^0+$/);
      }),
    );
  });

  it('R3-10: ids are the same in another process and equal the values computed outside the code (docs/otlp.md#ids)', () => {
    const here = {
      trace_s1_u1: traceIdOf('s1', 'u1'),
      trace_s1_none: traceIdOf('s1', ''),
      turn_s1_u1: turnSpanIdOf('s1', 'u1'),
      row_s1_e1_a: rowSpanIdOf('s1', 'e1', 'a'),
    };
    const child = JSON.parse(
      execFileSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(new URL('../../support/ids-child.ts', import.meta.url))],
        { encoding: 'utf8' },
      ),
    );
    expect(child).toEqual(here);
    expect(here).toEqual(FIXED_IDS);
  });

  it('R3-10: every part of the identity changes the id (session, execution, tool call; session, turn)', () => {
    const ids = new Set([
      rowSpanIdOf('s1', 'e1', 'c1'),
      rowSpanIdOf('s2', 'e1', 'c1'),
      rowSpanIdOf('s1', 'e2', 'c1'),
      rowSpanIdOf('s1', 'e1', 'c2'),
      turnSpanIdOf('s1', 'c1'),
    ]);
    expect(ids.size).toBe(5);
    expect(traceIdOf('s1', 'u1')).not.toBe(traceIdOf('s1', 'u2'));
    expect(traceIdOf('s1', '')).not.toBe(traceIdOf('s2', ''));
    // the separator keeps ("ab","c") and ("a","bc") apart
    expect(traceIdOf('ab', 'c')).not.toBe(traceIdOf('a', 'bc'));
  });
});
