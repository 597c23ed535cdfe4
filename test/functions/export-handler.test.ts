import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createExportHandler,
  ExportConfigError,
  type ExportHandlerDeps,
  OTLP_ENDPOINT_PARAMETER_ENV,
  OTLP_HEADERS_PARAMETER_ENV,
} from '../../lib/export/handler.js';
import { type OtlpReceiver, startOtlpReceiver } from '../../local/otlp-receiver.js';
import { insertRows } from '../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../support/targets.js';

/*
 * The scheduled export's handler (docs/otlp.md#scheduled-export, R3-10, R4-3, R4-8): its
 * configuration from SSM (read once per cold start, a failure not kept), what it says when that
 * fails, how much time it leaves itself, and what it logs. A real Powertools Logger, its lines
 * kept by a formatter of ours (the logger's own extension point) so a test can read them.
 */

const T = (s: number) => `2026-08-12T13:00:${String(s).padStart(2, '0')}.000001Z`;

interface Line {
  level: string;
  message: string;
  attributes: LogAttributes;
}

class KeepingFormatter extends LogFormatter {
  constructor(private readonly lines: Line[]) {
    super();
  }
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    this.lines.push({ level: attributes.logLevel, message: attributes.message, attributes: additional });
    return new LogItem({ attributes: { message: attributes.message } });
  }
}

function keepingLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  return {
    logger: new Logger({ serviceName: 'test', logLevel: 'DEBUG', logFormatter: new KeepingFormatter(lines) }),
    lines,
  };
}

const ENDPOINT = '/sc/otlp-endpoint';
const HEADERS = '/sc/otlp-headers';

describe.each(TARGETS)('R3-10 the scheduled export handler on %s', (name) => {
  const t = useTestDatabase(name);
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.spans.length = 0;
  });

  /** SSM as a map of parameters, each read counted. */
  function parameters(values: Record<string, string>) {
    const reads: string[] = [];
    const read = async (parameter: string) => {
      reads.push(parameter);
      const value = values[parameter];
      if (value === undefined) throw new Error(`ParameterNotFound: ${parameter}`);
      return value;
    };
    return { reads, read };
  }

  function handler(change: Partial<ExportHandlerDeps> = {}) {
    return createExportHandler({ db: () => t.db, ...change });
  }

  it('R3-10: without the endpoint parameter variable the run fails, saying how to deploy, and logs the failure', async () => {
    const { logger, lines } = keepingLogger();
    const run = handler({ env: {}, readParameter: parameters({}).read, logger });
    await expect(run({}, undefined)).rejects.toThrow(
      new ExportConfigError(
        'OTLP_ENDPOINT_SSM_PARAMETER is not set: deploy with serverless.yml (otlpEndpointParameter)',
      ),
    );
    expect(lines.map((l) => [l.level, l.message])).toEqual([['ERROR', 'otlp export failed']]);
    expect(OTLP_ENDPOINT_PARAMETER_ENV).toBe('OTLP_ENDPOINT_SSM_PARAMETER');
    expect(OTLP_HEADERS_PARAMETER_ENV).toBe('OTLP_HEADERS_SSM_PARAMETER');
    const error = (await run({}, undefined).catch((e: unknown) => e)) as ExportConfigError;
    expect(error.name).toBe('ExportConfigError');
  });

  it('R3-10: a parameter that cannot be read fails the run naming it and what to check; the next invocation reads it again', async () => {
    const store = parameters({ [HEADERS]: 'x-team=ours' });
    const run = handler({
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT, [OTLP_HEADERS_PARAMETER_ENV]: HEADERS },
      readParameter: store.read,
      logger: keepingLogger().logger,
    });
    await expect(run({}, undefined)).rejects.toThrow(
      `could not read SSM parameter "${ENDPOINT}" (ParameterNotFound: ${ENDPOINT}): create it (docs/otlp.md#scheduled-export) and check the export role may read it`,
    );
    const error = (await run({}, undefined).catch((e: unknown) => e)) as ExportConfigError;
    expect(error).toBeInstanceOf(ExportConfigError);
    expect((error.cause as Error).message).toBe(`ParameterNotFound: ${ENDPOINT}`);
    // each failed invocation read the parameters again (a failure is not kept)
    expect(store.reads.filter((r) => r === ENDPOINT)).toHaveLength(2);
  });

  it('R3-10, R4-8: the endpoint and headers are read once per cold start; the service name and protocol from the environment', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const store = parameters({ [ENDPOINT]: `${receiver.origin}/v1/traces`, [HEADERS]: 'x-team=ours' });
    const { logger, lines } = keepingLogger();
    const run = handler({
      env: {
        [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT,
        [OTLP_HEADERS_PARAMETER_ENV]: HEADERS,
        OTEL_SERVICE_NAME: 'our-exporter',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      readParameter: store.read,
      logger,
    });
    const first = await run({}, undefined);
    expect(first).toMatchObject({ spans: 2, complete: true, turns: 1 });
    await run({}, undefined);
    expect(store.reads.sort()).toEqual([ENDPOINT, HEADERS]);
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.headers['x-team']).toBe('ours');
    expect(receiver.requests[0]!.contentType).toBe('application/json');
    expect(receiver.spans[0]!.resource['service.name']).toBe('our-exporter');
    // each run logs its summary at INFO
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['INFO', 'otlp export'],
      ['INFO', 'otlp export'],
    ]);
    expect(lines[0]!.attributes).toMatchObject({ spans: 2, turns: 1, complete: true });
  });

  it('R3-10: without a headers parameter no headers are read or sent', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const store = parameters({ [ENDPOINT]: `${receiver.origin}/v1/traces` });
    await handler({
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT },
      readParameter: store.read,
      logger: keepingLogger().logger,
    })({}, undefined);
    expect(store.reads).toEqual([ENDPOINT]);
    expect(receiver.requests[0]!.headers['x-team']).toBeUndefined();
    // protobuf unless the environment says otherwise
    expect(receiver.requests[0]!.contentType).toBe('application/x-protobuf');
  });

  it('R3-10: a page starts only with more than 60 s of the invocation left', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    const env = { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT };
    const read = parameters({ [ENDPOINT]: `${receiver.origin}/v1/traces` }).read;
    const run = handler({ env, readParameter: read, logger: keepingLogger().logger });
    expect(await run({}, { getRemainingTimeInMillis: () => 60_000 })).toMatchObject({ spans: 0, complete: false });
    expect(await run({}, { getRemainingTimeInMillis: () => 60_001 })).toMatchObject({ spans: 2, complete: true });
  });

  it('R4-3, R4-8: a run that skipped a turn or had spans rejected logs a warning with its summary', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver.respond({ partialSuccess: { rejectedSpans: 1, errorMessage: 'one too many' } });
    const { logger, lines } = keepingLogger();
    const run = handler({
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT },
      readParameter: parameters({ [ENDPOINT]: `${receiver.origin}/v1/traces` }).read,
      logger,
    });
    expect(await run({}, undefined)).toMatchObject({ rejected_spans: 1 });
    expect(lines.map((l) => [l.level, l.message])).toEqual([['WARN', 'otlp export needs attention']]);
    expect(lines[0]!.attributes).toMatchObject({ rejected_spans: 1, rejected_message: 'one too many' });
  });

  /** The handler with its endpoint parameter pointing at the receiver, logging into `lines`. */
  function toReceiver() {
    const { logger, lines } = keepingLogger();
    const run = handler({
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT },
      readParameter: parameters({ [ENDPOINT]: `${receiver.origin}/v1/traces` }).read,
      logger,
    });
    return { run, lines };
  }

  it('R3-10: the scheduled export sends settled rows only: a row not settled yet is no span (no open spans)', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'a', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'open', observed_at: T(3), settled_at: null },
    ]);
    const { run } = toReceiver();
    expect(await run({}, undefined)).toMatchObject({ spans: 2, turns: 1 });
    expect(receiver.spans.flatMap((s) => s.attributes['subagent_context.tool_call_id'] ?? [])).toEqual(['a']);
  });

  it('R4-8: a run whose 2xx answer could not be read (outcome unknown) logs a warning with its summary', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver.respond({ status: 200, body: 'not an OTLP answer' });
    const { run, lines } = toReceiver();
    expect(await run({}, undefined)).toMatchObject({ unknown_spans: 2, rejected_spans: 0, skipped: [] });
    expect(lines.map((l) => [l.level, l.message])).toEqual([['WARN', 'otlp export needs attention']]);
    expect(lines[0]!.attributes).toMatchObject({ unknown_spans: 2, complete: false });
  });

  it('R4-3: a run that skipped an unreadable turn logs a warning with its summary', async () => {
    await insertRows(t.db, [
      { tool_call_id: 'odd', turn_id: 'u1', observed_at: T(1), settled_at: T(2) },
      { tool_call_id: 'good', turn_id: 'u2', observed_at: T(3), settled_at: T(4) },
    ]);
    // a value the host's column can hold that is no instant (R4-3's list, otlp-conventions.test.ts)
    const [value, cast] = name === 'sqlite' ? ['garbage', '$1'] : ['infinity', '$1::timestamp'];
    await t.db.query(`UPDATE task_session_subagents SET observed_at = ${cast} WHERE tool_call_id = 'odd'`, [value]);
    const { run, lines } = toReceiver();
    expect(await run({}, undefined)).toMatchObject({ turns: 1, rejected_spans: 0, unknown_spans: 0 });
    expect(lines.map((l) => [l.level, l.message])).toEqual([['WARN', 'otlp export needs attention']]);
    expect(lines[0]!.attributes).toMatchObject({ skipped: [{ task_session_id: 's1', turn_id: 'u1' }] });
  });

  it('R3-10: a parameter reader that fails with no Error at all still fails the run naming the parameter', async () => {
    const run = handler({
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT },
      readParameter: () => Promise.reject(undefined),
      logger: keepingLogger().logger,
    });
    await expect(run({}, undefined)).rejects.toThrow(
      new ExportConfigError(
        `could not read SSM parameter "${ENDPOINT}" (undefined): create it (docs/otlp.md#scheduled-export) and check the export role may read it`,
      ),
    );
  });

  it('R3-10: a refused batch fails the invocation and logs the error with its fields', async () => {
    await insertRows(t.db, [{ tool_call_id: 'a', observed_at: T(1), settled_at: T(2) }]);
    receiver.respond({ status: 400, body: 'bad' });
    const { logger, lines } = keepingLogger();
    const run = handler({
      env: { [OTLP_ENDPOINT_PARAMETER_ENV]: ENDPOINT },
      readParameter: parameters({ [ENDPOINT]: `${receiver.origin}/v1/traces` }).read,
      logger,
      loadConfig: async () => {},
    });
    await expect(run({}, undefined)).rejects.toThrow(/refused the batch with HTTP 400: bad/);
    expect(lines.map((l) => [l.level, l.message])).toEqual([['ERROR', 'otlp export failed']]);
    expect(lines[0]!.attributes.error).toBeInstanceOf(Error);
  });
});
