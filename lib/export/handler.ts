import type { Logger } from '@aws-lambda-powertools/logger';
import { type ParameterReader, readSsmParameter, refreshingCredentials } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { failureFields } from '../db/errors.js';
import { type RemainingTime, withinInvocation } from '../deadline.js';
import { EXPORT_DEFAULTS } from '../defaults.js';
import { SubagentContextError } from '../errors.js';
import { logger as defaultLogger } from '../observability.js';
import { type OtlpTarget, resolveOtlpTarget } from './otlp/config.js';
import { createOtlpSink } from './otlp/transport.js';
import { POSITION_KEY } from './position.js';
import { type ExportSummary, runExport } from './run.js';

/*
 * The optional scheduled export (docs/otlp.md#scheduled-export): what `subagent-context export`
 * does with its defaults, resuming from the stored position, with the endpoint and the headers
 * read from SSM (the headers are credentials: a SecureString; neither is in the template).
 */

export const OTLP_ENDPOINT_PARAMETER_ENV = 'OTLP_ENDPOINT_SSM_PARAMETER';
export const OTLP_HEADERS_PARAMETER_ENV = 'OTLP_HEADERS_SSM_PARAMETER';

/** The run starts no further page with less than this left of the invocation. */
const STOP_BEFORE_END_MS = 60_000;

export class ExportConfigError extends SubagentContextError {
  override readonly name = 'ExportConfigError';
}

export interface ExportHandlerDeps {
  db: () => Database;
  loadConfig?: () => Promise<void>;
  env?: NodeJS.ProcessEnv;
  readParameter?: ParameterReader;
  logger?: Logger;
}

/** Endpoint and headers from SSM, once per cold start (a failure is not cached). */
function targetLoader(deps: ExportHandlerDeps): () => Promise<OtlpTarget> {
  let loaded: Promise<OtlpTarget> | undefined;
  return () => {
    loaded ??= (async () => {
      const env = deps.env ?? process.env;
      const read = deps.readParameter ?? readSsmParameter;
      const endpointName = env[OTLP_ENDPOINT_PARAMETER_ENV];
      if (!endpointName)
        throw new ExportConfigError(
          `${OTLP_ENDPOINT_PARAMETER_ENV} is not set: deploy with serverless.yml (otlpEndpointParameter)`,
        );
      const headersName = env[OTLP_HEADERS_PARAMETER_ENV];
      const fetch = async (name: string) => {
        try {
          return await read(name);
        } catch (err) {
          throw new ExportConfigError(
            `could not read SSM parameter "${name}" (${(err as Error)?.message ?? err}): create it (docs/otlp.md#scheduled-export) and check the export role may read it`,
            { cause: err },
          );
        }
      };
      const [url, headers] = await Promise.all([fetch(endpointName), headersName ? fetch(headersName) : undefined]);
      return resolveOtlpTarget(
        { url },
        { OTEL_EXPORTER_OTLP_PROTOCOL: env.OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS: headers },
      );
    })().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    });
    return loaded;
  };
}

export type ExportHandler = (event?: unknown, context?: RemainingTime) => Promise<ExportSummary>;

export function createExportHandler(deps: ExportHandlerDeps): ExportHandler {
  const log = deps.logger ?? defaultLogger;
  const target = targetLoader(deps);
  return async (_event, context) => {
    try {
      await deps.loadConfig?.();
      const otlp = await target();
      const sink = createOtlpSink(otlp, {
        timeoutMillis: EXPORT_DEFAULTS.requestTimeoutMs,
        retries: EXPORT_DEFAULTS.retries,
        backoffMillis: EXPORT_DEFAULTS.backoffMs,
      });
      try {
        const summary = await refreshingCredentials(() =>
          withinInvocation(deps.db(), context, (db) =>
            runExport(db, sink, otlp.url, {
              openSpans: false,
              batchSpans: EXPORT_DEFAULTS.batchSpans,
              pageTurns: EXPORT_DEFAULTS.pageTurns,
              settleSeconds: EXPORT_DEFAULTS.settleSeconds,
              position: 'resume',
              positionKey: POSITION_KEY,
              serviceName: (deps.env ?? process.env).OTEL_SERVICE_NAME,
              keepGoing: () => (context?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY) > STOP_BEFORE_END_MS,
            }),
          ),
        );
        // A partial success, an answer of unknown outcome or a skipped turn is for a person to look at (the CLI exits 3 for them).
        if (summary.rejected_spans > 0 || summary.unknown_spans > 0 || summary.skipped.length > 0)
          log.warn('otlp export needs attention', { ...summary });
        else log.info('otlp export', { ...summary });
        return summary;
      } finally {
        await sink.shutdown();
      }
    } catch (err) {
      log.error('otlp export failed', { ...failureFields(err), error: err as Error });
      throw err;
    }
  };
}
