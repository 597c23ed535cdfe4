import { parseArgs } from 'node:util';
import { loadDatabaseUrl } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { openDatabase } from '../db/open.js';
import {
  EXPORT_DEFAULTS,
  HEALTH_CONFIRM_DELAY_SECONDS,
  HEALTH_GRACE_SECONDS,
  STATEMENT_TIMEOUT_SECONDS,
} from '../defaults.js';
import { SubagentContextError } from '../errors.js';
import { OtlpConfigError, resolveOtlpTarget } from '../export/otlp/config.js';
import { checkPositionKey, POSITION_KEY, PositionError } from '../export/position.js';
import { graceSecondsFromEnv, healthOptionsFromEnv } from '../health/config.js';
import { logger } from '../observability.js';
import { redactText } from '../redact.js';
import { type Micros, parseRfc3339 } from '../time.js';
import { exportCommand } from './commands/export.js';
import { healthCommand } from './commands/health.js';
import { ingestCommand, type StartIngestPipeline } from './commands/ingest.js';
import { migrateCommand } from './commands/migrate.js';
import { EXIT } from './exit-codes.js';
import type { CliIo, CommandResult } from './io.js';
import { type ProxyChoice, proxyFor } from './local-proxy.js';

export const USAGE = `Usage: subagent-context <command> [options]

Commands:
  migrate                 create the table and run the one-time backfill (safe to repeat)
  health                  compare host subagent messages with rows: the scheduled check's
                          window from its checkpoint (the same run the health function does)
  ingest <frames.jsonl>   feed frames (one SQS message body per line) through the ingest handler
  export --otlp <url>     send the fan-out trees as OpenTelemetry traces over OTLP/HTTP (one
                          trace per turn, one invoke_agent span per subagent; docs/otlp.md),
                          resuming from its position in kandev_meta

Options:
  --database-url <url>    postgres://… or sqlite:<path> (default: DATABASE_URL, or the SSM
                          parameter named by DATABASE_URL_SSM_PARAMETER)
  --json                  machine-readable output on stdout
  --grace-seconds <n>     health: messages newer than this are not yet expected (default
                          HEALTH_GRACE_SECONDS or ${HEALTH_GRACE_SECONDS}; a shortfall is confirmed after
                          HEALTH_CONFIRM_DELAY_SECONDS, default ${HEALTH_CONFIRM_DELAY_SECONDS})
  --full                  health: audit every message and row since activation instead (does
                          not move the checkpoint)
  --acknowledge-through <instant>
                          health: accept the shortfall of messages created before <instant>
                          (RFC 3339) and move the checkpoint there; the audit still counts them
  --statement-timeout <seconds>
                          PostgreSQL: the server ends any one statement after this long
                          (default ${STATEMENT_TIMEOUT_SECONDS.cli}); raise it for migrate or health --full on a
                          store whose backfill or audit takes longer
  --rejected <file>       ingest: write what ended on the dead-letter queue here (JSONL)
  --otlp <url>            export: the collector (a bare origin gets /v1/traces; default
                          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces)
  --header <name=value>   export: a request header, repeatable (also OTEL_EXPORTER_OTLP_HEADERS)
  --protocol <p>          export: http/protobuf (default) or http/json (also OTEL_EXPORTER_OTLP_PROTOCOL)
  --since / --until <instant>
                          export: only rows observed at or after / before this RFC 3339 instant
  --task <id>, --session <id>
                          export: only this task's / session's rows (a one-off export: the
                          position is neither read nor moved unless --position-key is given)
  --open-spans            export: also rows not settled yet, as zero-length spans (settled=false);
                          by default a row is exported once it settled
  --batch-spans <n>       export: spans per request at most (default ${EXPORT_DEFAULTS.batchSpans})
  --settle-seconds <n>    export: only turns whose newest write is this old (default ${EXPORT_DEFAULTS.settleSeconds})
  --lookback-seconds <n>  export: a resumed run starts this far before its position, so a frame
                          delivered late is not missed (default ${EXPORT_DEFAULTS.lookbackSeconds}; turns in it are sent again, same ids)
  --position-key <key>    export: the kandev_meta key of the position (default ${POSITION_KEY})
  --restart               export: from the first turn again (same ids), then move the position
  --no-position           export: neither read nor move the position
  --verbose               structured logs (WARN and above) on stderr
  -h, --help              this text

Exit codes: 0 ok/healthy; 1 failure; 2 usage error; 3 needs attention (health not healthy,
frames on the dead-letter queue).`;

class UsageError extends SubagentContextError {
  override readonly name = 'UsageError';
}

/** `--statement-timeout`: a positive number of seconds (a bound is always kept, R2-5). */
function statementTimeoutSeconds(raw: string | undefined): number {
  if (raw === undefined) return STATEMENT_TIMEOUT_SECONDS.cli;
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError(
      `--statement-timeout needs a positive number of seconds (got "${raw}"); every statement keeps a bound, so 0 is refused`,
    );
  return seconds;
}

/** What the CLI needs that `lib/` does not build: the local queue stack `ingest` feeds (`local/pipeline.ts`). */
export interface CliDeps {
  startPipeline: StartIngestPipeline;
}

/** The CLI without the process: parses argv, runs one command, returns the exit code. */
export async function runCli(argv: readonly string[], rawIo: CliIo, deps: CliDeps): Promise<number> {
  // R2-6: everything the CLI prints passes through the redaction helper (a URL's password never shows).
  const io: CliIo = {
    ...rawIo,
    stdout: { write: (text: string) => rawIo.stdout.write(redactText(text)) },
    stderr: { isTTY: rawIo.stderr.isTTY, write: (text: string) => rawIo.stderr.write(redactText(text)) },
  };
  // biome-ignore lint/suspicious/noImplicitAnyLet: the type is parseArgs's result for the options below, inferred at the assignment
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        'database-url': { type: 'string' },
        json: { type: 'boolean', default: false },
        'grace-seconds': { type: 'string' },
        full: { type: 'boolean', default: false },
        'acknowledge-through': { type: 'string' },
        'statement-timeout': { type: 'string' },
        rejected: { type: 'string' },
        otlp: { type: 'string' },
        header: { type: 'string', multiple: true },
        protocol: { type: 'string' },
        since: { type: 'string' },
        until: { type: 'string' },
        task: { type: 'string' },
        session: { type: 'string' },
        'open-spans': { type: 'boolean', default: false },
        'batch-spans': { type: 'string' },
        'settle-seconds': { type: 'string' },
        'lookback-seconds': { type: 'string' },
        'position-key': { type: 'string' },
        restart: { type: 'boolean', default: false },
        'no-position': { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  // INFO lines go to stdout, which belongs to the result here; WARN and ERROR go to stderr.
  logger.setLogLevel(values.verbose ? 'WARN' : 'ERROR');

  let db: Database | undefined;
  let proxy: ProxyChoice | undefined;
  const open = async (): Promise<Database> => {
    const url = await databaseUrl(values['database-url'], io.env);
    proxy = await proxyFor(url, io.env);
    return openDatabase(url, {
      wsProxy: proxy.wsProxy,
      statementTimeoutMs: statementTimeoutSeconds(values['statement-timeout']) * 1000,
    });
  };
  try {
    const [command, ...rest] = positionals;
    const run = async (): Promise<CommandResult<unknown>> => {
      switch (command) {
        case 'migrate':
          expectArguments(rest, 0, command);
          db = await open();
          return migrateCommand(db);
        case 'health': {
          expectArguments(rest, 0, command);
          const graceSeconds =
            values['grace-seconds'] === undefined
              ? graceSecondsFromEnv(io.env)
              : graceSecondsFromEnv({ HEALTH_GRACE_SECONDS: values['grace-seconds'] });
          const acknowledge = values['acknowledge-through'];
          const acknowledgeThrough = acknowledge === undefined ? undefined : parseRfc3339(acknowledge);
          if (acknowledge !== undefined && acknowledgeThrough === undefined) {
            throw new UsageError(
              `--acknowledge-through needs an RFC 3339 instant with an offset, e.g. 2026-08-12T13:00:00Z (got "${acknowledge}")`,
            );
          }
          if (values.full && acknowledgeThrough !== undefined)
            throw new UsageError('--full and --acknowledge-through exclude each other');
          db = await open();
          return healthCommand(db, {
            ...healthOptionsFromEnv(io.env),
            graceSeconds,
            kind: values.full ? 'full' : 'scheduled',
            acknowledgeThrough,
          });
        }
        case 'export': {
          expectArguments(rest, 0, command);
          const target = usage(() =>
            resolveOtlpTarget({ url: values.otlp, headers: values.header, protocol: values.protocol }, io.env),
          );
          const oneOff = values.task !== undefined || values.session !== undefined || values.until !== undefined;
          if (values.restart && values['no-position'])
            throw new UsageError('--restart and --no-position exclude each other');
          const positionKey = usage(() => checkPositionKey(values['position-key'] ?? POSITION_KEY));
          const keep = !values['no-position'] && (!oneOff || values['position-key'] !== undefined);
          db = await open();
          return exportCommand(db, target, {
            since: instantFlag('--since', values.since),
            until: instantFlag('--until', values.until),
            task: values.task,
            session: values.session,
            openSpans: values['open-spans'],
            batchSpans: positiveFlag('--batch-spans', values['batch-spans'], EXPORT_DEFAULTS.batchSpans, true),
            pageTurns: EXPORT_DEFAULTS.pageTurns,
            settleSeconds: positiveFlag(
              '--settle-seconds',
              values['settle-seconds'],
              EXPORT_DEFAULTS.settleSeconds,
              false,
            ),
            lookbackSeconds: positiveFlag(
              '--lookback-seconds',
              values['lookback-seconds'],
              EXPORT_DEFAULTS.lookbackSeconds,
              false,
            ),
            position: !keep ? 'none' : values.restart ? 'restart' : 'resume',
            positionKey,
            serviceName: io.env.OTEL_SERVICE_NAME,
          });
        }
        case 'ingest':
          expectArguments(rest, 1, command);
          db = await open();
          return ingestCommand(db, { file: rest[0]!, rejectedFile: values.rejected }, io, deps.startPipeline);
        case undefined:
          throw new UsageError('no command given');
        default:
          throw new UsageError(`unknown command "${command}"`);
      }
    };
    const outcome = await run();
    io.stdout.write(values.json ? `${JSON.stringify(outcome.result, null, 2)}\n` : `${outcome.text}\n`);
    return outcome.exitCode;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`${err.message}\n\n${USAGE}\n`);
      return EXIT.usage;
    }
    const message = err instanceof Error ? err.message : String(err);
    if (values.json) io.stdout.write(`${JSON.stringify({ error: message, name: (err as Error)?.name }, null, 2)}\n`);
    io.stderr.write(`subagent-context: ${message}\n`);
    return EXIT.failure;
  } finally {
    await db?.close();
    await proxy?.close();
  }
}

/** A configuration error of a flag's value is a usage error (exit 2). */
function usage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof OtlpConfigError || err instanceof PositionError) throw new UsageError(err.message);
    throw err;
  }
}

function instantFlag(flag: string, raw: string | undefined): Micros | undefined {
  if (raw === undefined) return undefined;
  const at = parseRfc3339(raw);
  if (at === undefined)
    throw new UsageError(`${flag} needs an RFC 3339 instant with an offset, e.g. 2026-08-12T13:00:00Z (got "${raw}")`);
  return at;
}

function positiveFlag(flag: string, raw: string | undefined, fallback: number, integer: boolean): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || (integer && (!Number.isInteger(n) || n === 0)))
    throw new UsageError(`${flag} needs ${integer ? 'a positive integer' : 'a number ≥ 0'} (got "${raw}")`);
  return n;
}

function expectArguments(rest: readonly string[], count: number, command: string): void {
  if (rest.length !== count) {
    throw new UsageError(
      count === 0
        ? `${command} takes no arguments (got ${rest.join(' ')})`
        : `${command} needs exactly ${count} argument(s)`,
    );
  }
}

async function databaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (flag) return flag;
  await loadDatabaseUrl({ env });
  if (!env.DATABASE_URL)
    throw new UsageError('no database: pass --database-url postgres://… or sqlite:<path>, or set DATABASE_URL');
  return env.DATABASE_URL;
}
