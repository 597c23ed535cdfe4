import { parseArgs } from 'node:util';
import { checkDatabaseUrl, loadDatabaseUrl } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { MAX_STATEMENT_TIMEOUT_MS, statementTimeoutMsOf } from '../db/neon.js';
import { openDatabase } from '../db/open.js';
import { HEALTH_CONFIRM_DELAY_SECONDS, HEALTH_GRACE_SECONDS, STATEMENT_TIMEOUT_SECONDS } from '../defaults.js';
import { SubagentContextError } from '../errors.js';
import { graceSecondsFromEnv, healthOptionsFromEnv } from '../health/config.js';
import { logger } from '../observability.js';
import { redactText } from '../redact.js';
import { parseRfc3339 } from '../time.js';
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
  --verbose               structured logs (WARN and above) on stderr
  -h, --help              this text

Exit codes: 0 ok/healthy; 1 failure; 2 usage error; 3 needs attention (health not healthy,
frames on the dead-letter queue).`;

class UsageError extends SubagentContextError {
  override readonly name = 'UsageError';
}

/**
 * `--statement-timeout`: a positive number of seconds, in milliseconds as the server takes it (a
 * bound is always kept, R2-5): rounded up to at least 1 ms, at most PostgreSQL's maximum (D8).
 */
function statementTimeoutMs(raw: string | undefined): number {
  if (raw === undefined) return STATEMENT_TIMEOUT_SECONDS.cli * 1000;
  const seconds = raw.trim() === '' ? Number.NaN : Number(raw);
  try {
    return statementTimeoutMsOf(seconds);
  } catch (err) {
    throw new UsageError(
      `--statement-timeout needs a positive number of seconds up to ${MAX_STATEMENT_TIMEOUT_MS / 1000} (got "${raw}"): ${(err as Error).message}`,
    );
  }
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
      statementTimeoutMs: statementTimeoutMs(values['statement-timeout']),
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
  if (flag) {
    checkDatabaseUrl(flag, { kind: 'flag', name: '--database-url' });
    return flag;
  }
  await loadDatabaseUrl({ env });
  if (!env.DATABASE_URL)
    throw new UsageError('no database: pass --database-url postgres://… or sqlite:<path>, or set DATABASE_URL');
  return env.DATABASE_URL;
}
