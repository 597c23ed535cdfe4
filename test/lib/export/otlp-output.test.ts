import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OtlpConfigError, resolveOtlpTarget } from '../../../lib/export/otlp/config.js';
import { providerOf } from '../../../lib/export/otlp/provider.js';
import { BODY_SHOWN, describeEndpoint, peerBody, secretsOf } from '../../../lib/peer.js';

/*
 * R4-9's pure parts: the provider table, how an endpoint is printed, how a collector's body is
 * shown. Expected values written out by hand (docs/otlp.md#provider, #transport).
 */

describe('R4-9 gen_ai.provider.name from the model', () => {
  it.each([
    ['claude-opus-5[1m]', 'anthropic'],
    ['claude-sonnet-4-5-20250929', 'anthropic'],
    ['Claude-Haiku-4', 'anthropic'],
    ['gpt-5', 'openai'],
    ['gpt-4o-mini', 'openai'],
    ['o3', 'openai'],
    ['o4-mini', 'openai'],
    ['codex-mini-latest', 'openai'],
    ['gemini-2.5-pro', 'gcp.gemini'],
    ['grok-4', 'x_ai'],
    ['deepseek-chat', 'deepseek'],
    ['mistral-large-latest', 'mistral_ai'],
    ['anthropic/claude-sonnet-4', 'anthropic'],
    ['openai/gpt-5', 'openai'],
    ['google/gemini-2.5-flash', 'gcp.gemini'],
    ['amazon-bedrock/anthropic.claude-3-5-sonnet', 'aws.bedrock'],
    // every row of docs/otlp.md#provider's table
    ['claude', 'anthropic'],
    ['chatgpt-4o-latest', 'openai'],
    ['o1', 'openai'],
    ['gemini', 'gcp.gemini'],
    ['codestral-latest', 'mistral_ai'],
    ['devstral-small', 'mistral_ai'],
    ['magistral-medium', 'mistral_ai'],
    ['ministral-8b', 'mistral_ai'],
    ['pixtral-large', 'mistral_ai'],
    ['mistral', 'mistral_ai'],
    ['grok', 'x_ai'],
    ['deepseek', 'deepseek'],
    ['command-r-plus', 'cohere'],
    ['command', 'cohere'],
    ['sonar-pro', 'perplexity'],
    ['sonar', 'perplexity'],
    ['gemini/gemini-2.5-pro', 'gcp.gemini'],
    ['google-vertex/gemini-2.5-pro', 'gcp.vertex_ai'],
    ['vertex_ai/claude-sonnet-4', 'gcp.vertex_ai'],
    ['bedrock/anthropic.claude-3-haiku', 'aws.bedrock'],
    ['azure/gpt-4o', 'azure.ai.openai'],
    ['mistral/mistral-large', 'mistral_ai'],
    ['xai/grok-4', 'x_ai'],
    ['deepseek/deepseek-chat', 'deepseek'],
    ['groq/llama-3.1-8b', 'groq'],
    ['cohere/command-r', 'cohere'],
    ['perplexity/sonar', 'perplexity'],
    ['  Anthropic/Claude-Opus-4  ', 'anthropic'],
    // omitted rather than guessed
    ['openrouter/anthropic/claude-sonnet-4', undefined],
    ['llama-3.1-70b', undefined],
    ['claudette', undefined],
    ['o', undefined],
    ['oracle-1', undefined],
    ['o10', undefined],
    ['gpt', undefined],
    ['grokking', undefined],
    ['commander', undefined],
    ['sonarqube', undefined],
    ['/claude-sonnet-4', undefined],
    // a family is matched at the start of the name only
    ['ft-gpt-5', undefined],
    ['ft-gemini-pro', undefined],
    ['ft-mistral-7b', undefined],
    ['ft-grok-2', undefined],
    ['ft-deepseek-v3', undefined],
    ['ft-command-r', undefined],
    ['ft-sonar-pro', undefined],
    ['', undefined],
    [null, undefined],
  ] as const)('R4-9: model %j → %s', (model, provider) => {
    expect(providerOf(model)).toBe(provider);
  });
});

describe('R4-9 an endpoint as every output prints it', () => {
  it.each([
    ['http://127.0.0.1:4318/v1/traces', 'http://127.0.0.1:4318/v1/traces'],
    ['https://otel.example/v1/traces?key=K3Y&sig=S1G&code=C0DE&auth=AU7H', 'https://otel.example:443/v1/traces'],
    ['https://me:pa55@otel.example:8443/p/v1/traces?api_key=x#frag', 'https://***@otel.example:8443/p/v1/traces'],
    ['http://[::1]:4318/v1/traces?x=1', 'http://[::1]:4318/v1/traces'],
    ['not a url?key=K3Y', 'not a url?…'],
    // issue 48: `#` or `?` in a password makes the text no URL; redacted before the cut, not after
    ['http://admin:Sup3r#Secret@collector:4318/v1/traces', 'http://***@collector:4318/v1/traces'],
    ['http://admin:Sup3r?Secret@collector:4318/v1/traces', 'http://***@collector:4318/v1/traces'],
    ['"http://admin:Sup3r#Secret@collector:4318/v1/traces"', '"http://***@collector:4318/v1/traces"'],
  ])('R4-9: %s → %s', (url, shown) => {
    expect(describeEndpoint(url)).toBe(shown);
  });

  it('R4-9: no query value or userinfo of any URL survives (property)', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9]{6,12}$/);
    fc.assert(
      fc.property(token, token, token, (user, password, value) => {
        const shown = describeEndpoint(`https://${user}:${password}@h.example:4318/v1/traces?k=${value}&sig=${value}`);
        return !shown.includes(password) && !shown.includes(`${value}`) && !shown.includes(`${user}:`);
      }),
    );
  });
});

describe('R4-9 a collector body as a message shows it', () => {
  const secrets = secretsOf('https://u:pa55word@h/v1/traces?sig=S1GNATURE', {
    authorization: 'Bearer SECRET123',
    'x-tenant': 'acme-tenant-9',
  });

  it.each([
    ['an echoed Authorization header', 'Authorization: Bearer SECRET123\r\nhost: h', 'SECRET123'],
    ['a header value sent, anywhere', 'tenant acme-tenant-9 unknown', 'acme-tenant-9'],
    ['a bearer token not ours', 'expected Bearer OTHERTOKEN', 'OTHERTOKEN'],
    ['a cookie line', 'cookie: session=abc123; theme=dark', 'abc123'],
    ['a JSON dump of the headers', '{"headers":{"authorization":"Basic dTpwYTU1d29yZA=="}}', 'dTpwYTU1d29yZA'],
    ['the query value', 'bad signature S1GNATURE', 'S1GNATURE'],
    ['the URL password', 'user u password pa55word', 'pa55word'],
  ])('R4-9: %s is masked', (_, body, secret) => {
    const shown = peerBody(body, secrets);
    expect(shown).not.toContain(secret);
    expect(shown).toContain('***');
  });

  it('R4-2: terminal controls in a body are visible escapes, never sent raw', () => {
    expect(peerBody('bad\u001b]52;c;ZWNobyBoaQ==\u0007 request\nline2', [])).toBe(
      'bad\\x1B]52;c;ZWNobyBoaQ==\\x07 request\\x0Aline2',
    );
  });

  it('R4-9: a long body is cut to 512 characters with its full length stated', () => {
    const shown = peerBody('x'.repeat(100_000), []);
    expect(shown).toBe(`${'x'.repeat(BODY_SHOWN)}… (100000 characters in all)`);
    expect(peerBody('short', [])).toBe('short');
  });

  it('R4-9: the secrets are every header value, the decoded userinfo, each query value and the whole query, longest first, none under 4 characters', () => {
    expect(
      secretsOf('https://user:pa%20ss@h.example/v1/traces?a=abcd&b=xyz', {
        authorization: 'Bearer TOKEN',
        'x-short': 'abc',
      }),
    ).toEqual(['Bearer TOKEN', 'a=abcd&b=xyz', 'pa ss', 'user', 'abcd']);
    expect(secretsOf('http://h.example/v1/traces', {})).toEqual([]);
    expect(secretsOf('not a url', { 'x-key': 'abcd' })).toEqual(['abcd']);
  });

  it('R4-9: a 4-character value is masked, a 3-character one is not', () => {
    expect(peerBody('abc abcd', secretsOf('http://h.example/', { x: 'abcd', y: 'abc' }))).toBe('abc ***');
  });

  it('R4-9: a value holding another is masked whole (longest first)', () => {
    const secrets = secretsOf('http://h.example/', { a: 'SECRET', b: 'SECRET-PLUS' });
    expect(peerBody('got SECRET-PLUS and SECRET', secrets)).toBe('got *** and ***');
  });

  it('R4-9: a body is trimmed; 512 characters are shown whole, 513 are cut', () => {
    expect(peerBody('  short\n', [])).toBe('short');
    expect(peerBody('x'.repeat(512), [])).toBe('x'.repeat(512));
    expect(peerBody('x'.repeat(513), [])).toBe(`${'x'.repeat(512)}… (513 characters in all)`);
  });

  it.each([
    [
      'a pair whose high half is the 512th unit is left out whole',
      `${'x'.repeat(511)}😀${'y'.repeat(10)}`,
      `${'x'.repeat(511)}… (523 characters in all)`,
    ],
    [
      'so is U+10000 (high half D800)',
      `${'x'.repeat(511)}\u{10000}${'y'.repeat(10)}`,
      `${'x'.repeat(511)}… (523 characters in all)`,
    ],
    [
      'so is U+10FFFF (high half DBFF)',
      `${'x'.repeat(511)}\u{10FFFF}${'y'.repeat(10)}`,
      `${'x'.repeat(511)}… (523 characters in all)`,
    ],
    [
      'a pair ending at the 512th unit is kept whole',
      `${'x'.repeat(510)}😀${'y'.repeat(10)}`,
      `${'x'.repeat(510)}😀… (522 characters in all)`,
    ],
    [
      'a character after DBFF at the 512th unit is kept',
      `${'x'.repeat(511)}\uE000${'y'.repeat(10)}`,
      `${'x'.repeat(511)}\uE000… (522 characters in all)`,
    ],
  ])('R4-2: the cut never leaves half a surrogate pair: %s', (_, body, shown) => {
    expect(peerBody(body, [])).toBe(shown);
  });

  it('R4-9: a body of exactly the 16,384 characters read is whole once masked short', () => {
    const secret = 'k'.repeat(8190);
    expect(peerBody(`${secret}${secret}tail`, [secret])).toBe('******tail');
  });

  it('R4-9: a body longer than is read states its full length, even when masking leaves it short', () => {
    const secret = 'k'.repeat(8192);
    const body = `${secret}${secret}${'tail'.repeat(1000)}`;
    expect(peerBody(body, [secret])).toBe('******… (20384 characters in all)');
  });
});

describe('R4-9 the endpoint and flags config.ts reads (after the 2026-12-02 mutation run)', () => {
  it.each([
    ['http://h.example/v1/traces', 'http://h.example:80/v1/traces'],
    ['http://u@h.example:4318/v1/traces', 'http://***@h.example:4318/v1/traces'],
    ['http://:p4ss@h.example:4318/v1/traces', 'http://***@h.example:4318/v1/traces'],
    ['not a url', 'not a url'],
    ['?key=K3Y', '?…'],
  ])('R4-9: %s is printed as %s', (url, shown) => {
    expect(describeEndpoint(url)).toBe(shown);
  });

  it.each([
    [{ url: 'http://h.example:4318' }, {}, 'http://h.example:4318/v1/traces'],
    [{ url: 'http://h.example:4318/custom' }, {}, 'http://h.example:4318/custom'],
    [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h.example:4318/base' }, 'http://h.example:4318/base/v1/traces'],
    [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h.example:4318/' }, 'http://h.example:4318/v1/traces'],
  ])('R4-9: --otlp %j with env %j sends to %s', (flags, env, url) => {
    expect(resolveOtlpTarget(flags, env).url).toBe(url);
  });

  it.each([
    [{ url: '   ' }, {}],
    [{ url: 'http://h.example:4318', headers: ['=v'] }, {}],
    [{ url: 'http://h.example:4318', headers: ['novalue'] }, {}],
    [{ url: 'http://h.example:4318', headers: ['bad name=v'] }, {}],
    [{ url: 'http://h.example:4318', headers: ['x-a b=v'] }, {}],
    [{ url: 'http://h.example:4318', compression: 'zstd' }, {}],
    [{ url: 'http://h.example:4318' }, { OTEL_EXPORTER_OTLP_COMPRESSION: 'br' }],
  ])('R4-9: %j (env %j) is refused', (flags, env) => {
    expect(() => resolveOtlpTarget(flags, env)).toThrow(OtlpConfigError);
  });

  it.each([
    [{}, {}, 'gzip'],
    [{ compression: 'none' }, {}, 'none'],
    [{}, { OTEL_EXPORTER_OTLP_COMPRESSION: 'none' }, 'none'],
    [{}, { OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'none', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' }, 'none'],
  ])('R4-9: compression %j with env %j is %s', (flags, env, compression) => {
    expect(resolveOtlpTarget({ url: 'http://h.example:4318', ...flags }, env).compression).toBe(compression);
  });

  it.each([
    [{ url: '   ' }, {}],
    [{ url: '' }, {}],
    [{}, {}],
    [{}, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ' ' }],
  ])('R4-9: --otlp %j with env %j is no endpoint: the error says how to give one', (flags, env) => {
    expect(() => resolveOtlpTarget(flags, env)).toThrow(
      new OtlpConfigError(
        'no OTLP endpoint: pass --otlp http://collector:4318 (or the full traces URL), or set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
      ),
    );
  });

  it('R4-9 / issue 58 #13: a host and port without a scheme is said to be so, as typed, with the URL it means', () => {
    for (const [given, url] of [
      ['localhost:4318', 'http://localhost:4318'],
      ['collector.internal:4318', 'http://collector.internal:4318'],
    ])
      expect(() => resolveOtlpTarget({ url: given }, {})).toThrow(
        `the OTLP endpoint "${given}" has no scheme: give the URL with http:// or https://, e.g. ${url}`,
      );
  });

  it('R4-9: the refusals name what was given and what is supported (never a header value)', () => {
    const message = (flags: Parameters<typeof resolveOtlpTarget>[0], env: NodeJS.ProcessEnv = {}) => {
      try {
        resolveOtlpTarget(flags, env);
      } catch (e) {
        expect(e).toBeInstanceOf(OtlpConfigError);
        expect((e as OtlpConfigError).name).toBe('OtlpConfigError');
        return (e as Error).message;
      }
      throw new Error('not refused');
    };
    expect(message({ url: 'not a url' })).toBe(
      'the OTLP endpoint "not a url" is not a URL; give e.g. http://127.0.0.1:4318',
    );
    expect(message({ url: 'grpc://h.example:4317' })).toBe(
      "the OTLP endpoint grpc://h.example:4317 is not http(s): only OTLP/HTTP is supported (gRPC is not); use the collector's HTTP port (4318)",
    );
    expect(message({ url: 'http://h.example:4318', protocol: 'grpc' })).toBe(
      'OTLP protocol "grpc" is not supported: use http/protobuf or http/json (--protocol, OTEL_EXPORTER_OTLP_PROTOCOL)',
    );
    expect(message({ url: 'http://h.example:4318', compression: 'zstd' })).toBe(
      'OTLP compression "zstd" is not supported: use gzip or none',
    );
    expect(message({ url: 'http://h.example:4318', headers: ['bad name=s3cret'] })).toBe(
      '--header needs name=value with a valid HTTP header name (the value is not shown)',
    );
  });

  it('R4-9: a --header name is trimmed; the value is everything after the first =', () => {
    expect(resolveOtlpTarget({ url: 'http://h.example:4318', headers: [' x-k =a=b'] }, {}).headers).toEqual({
      'x-k': 'a=b',
    });
  });
});
