import { checkDatabaseUrl, DatabaseUrlConfigError, loadDatabaseUrl } from '../config/database-url.js';
import type { Database } from '../db/database.js';
import { MAX_STATEMENT_TIMEOUT_MS, statementTimeoutMsOf } from '../db/neon.js';
import { databaseKind } from '../db/open.js';
import {
  EXPORT_DEFAULTS,
  HEALTH_CONFIRM_DELAY_SECONDS,
  HEALTH_GRACE_SECONDS,
  PAGE_DEFAULTS,
  PUBLISH_DEFAULTS,
  SQLITE_MAX_READERS,
  STATEMENT_TIMEOUT_SECONDS,
} from '../defaults.js';
import { checkPositionKey, POSITION_KEY, PositionError } from '../export/position.js';
import type { ExportOptions } from '../export/run.js';
import { graceSecondsFromEnv, healthOptionsFromEnv } from '../health/config.js';
import { jsonDocument, jsonDocumentChunks } from '../json-document.js';
import { logger } from '../observability.js';
import { redact, redactText } from '../redact.js';
import { wantsColor } from '../report/render/table.js';
import { terminalSafeLines } from '../terminal-text.js';
import { terminalWidth } from '../text-table.js';
import { exportCommand } from './commands/export.js';
import { healthCommand } from './commands/health.js';
import { ingestCommand, type StartIngestPipeline } from './commands/ingest.js';
import { migrateCommand } from './commands/migrate.js';
import { parseReportFlags, reportCommand } from './commands/report.js';
import type { ExportDocument } from './documents.js';
import { EXIT } from './exit-codes.js';
import { describeFailure } from './failure.js';
import { checkFlagsApply, countFlag, instantFlag, nearestFlag, parseFlags, secondsFlag } from './flags.js';
import { EXIT_INTERRUPTED, type Interrupt, Interrupted, NO_INTERRUPT } from './interrupt.js';
import type { CliIo, CommandResult } from './io.js';
import { type ProxyChoice, proxyFor } from './local-proxy.js';
import { discardCreatedStore, openStore, userDatabaseUrl } from './open-store.js';
import { UsageError, usageText } from './usage-error.js';
import { userPath } from './user-path.js';

export const USAGE = `Usage: subagent-context <command> [options]

Commands:
  migrate                 create the table and run the one-time backfill (safe to repeat)
  health                  compare host subagent messages with rows: the scheduled check's
                          window from its checkpoint (the same run the health function does)
  ingest <frames.jsonl>   feed frames (one SQS message body per line) through the ingest handler
  report                  what was captured: subagents, tokens, fan-out, contexts and cost per
                          context, with how complete it is (read-only; docs/report.md)
  export --otlp <url>     send the fan-out trees as OpenTelemetry traces over OTLP/HTTP (one
                          trace per turn, one invoke_agent span per subagent; docs/otlp.md),
                          resuming from its position in kandev_meta
  usage <file>            what an agent's record of a subagent's run holds: tokens, requests, cost,
                          model (a Claude Code transcript or stream, an OpenCode session, a Codex
                          rollout; reads the file only; docs/spend.md)
  publish --to s3://BUCKET/PREFIX
                          write the page and its JSON document to S3 (PREFIX/YYYY-MM-DD/HHMMSSZ/,
                          then PREFIX/latest/) and print a link to latest/index.html (docs/publish.md)
  spend                   what each subagent spent: read the agents' records of each subagent's run
                          on this machine (Claude Code, OpenCode, Codex), price them, store the usage
                          beside the rows (docs/spend.md)

Options:
  --database-url <url>    postgres://… or sqlite:<path> (default: DATABASE_URL, or the SSM
                          parameter named by DATABASE_URL_SSM_PARAMETER)
  --json                  machine-readable output on stdout
  --grace-seconds <n>     health, report, publish: messages newer than this are not yet expected (default
                          HEALTH_GRACE_SECONDS or ${HEALTH_GRACE_SECONDS}; a shortfall is confirmed after
                          HEALTH_CONFIRM_DELAY_SECONDS, default ${HEALTH_CONFIRM_DELAY_SECONDS})
  --full                  health: audit every message and row since activation instead (does
                          not move the checkpoint)
  --acknowledge-through <instant>
                          health: accept the shortfall of messages created before <instant>
                          (RFC 3339 or a date) and move the checkpoint there; the audit still counts them
  --statement-timeout <seconds>
                          PostgreSQL: the server ends any one statement after this long
                          (default ${STATEMENT_TIMEOUT_SECONDS.cli}); raise it for migrate or health --full on a
                          store whose backfill or audit takes longer
  --rerun-backfill        migrate: when both keys exist, insert the history's rows again
                          (backfilled rows lost: a re-created table, deleted rows); keys untouched
  --create                sqlite: make a new, empty store when the path does not exist
                          (without it such a path is refused: a mistyped path is not a store)
  --rejected <file>       ingest: write what ended on the dead-letter queue here (JSONL)
  --by <group>            report: one group per task, session, turn, type, model or day
  --since <instant>       report, export: rows observed at or after <instant> (RFC 3339, or a
                          date: 2026-08-01 is its UTC midnight)
  --until <instant>       report, export: rows observed before <instant> (the same forms)
  --task <id>, --session <id>
                          report, export: only this task's / this session's rows (export: a
                          one-off export, the position is neither read nor moved unless
                          --position-key is given)
  --sort <figure>         report: order groups by subagents (default; --by day: key, day order),
                          contexts, tokens, cost, key or last_observed_at
  --limit <n>             report: the first <n> groups only
  --trees <n>             report --json: also the fan-out trees of the <n> most recent turns
                          (--html: default ${PAGE_DEFAULTS.trees})
  --html <file>           report: also write one self-contained HTML page there: completeness,
                          charts, tasks, fan-out trees (docs/page.md)
  --csv                   report: CSV (one row per group; completeness as # lines on top)
  --otlp <url>            export: the collector (a bare origin gets /v1/traces; default
                          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces)
  --header <name=value>   export: a request header, repeatable (also OTEL_EXPORTER_OTLP_HEADERS)
  --protocol <p>          export: http/protobuf (default) or http/json (also OTEL_EXPORTER_OTLP_PROTOCOL)
  --open-spans            export: also rows not settled yet, as zero-length spans (settled=false);
                          by default a row is exported once it settled
  --batch-spans <n>       export: spans per request at most (default ${EXPORT_DEFAULTS.batchSpans})
  --settle-seconds <n>    export: only turns whose newest write is this old (default ${EXPORT_DEFAULTS.settleSeconds})
  --lookback-seconds <n>  export: a resumed run starts this far before its position, so a frame
                          delivered late is not missed (default ${EXPORT_DEFAULTS.lookbackSeconds}; turns in it are sent again, same ids)
  --position-key <key>    export: the kandev_meta key of the position (default ${POSITION_KEY})
  --restart               export: from the first turn again (same ids), then move the position
  --no-position           export: neither read nor move the position
  --to <s3://bucket/prefix>
                          publish: where the report goes (the bucket must exist; AWS_REGION, the
                          credentials and AWS_ENDPOINT_URL_S3 are the AWS SDK's own settings)
  --url-seconds <n>       publish: how long the printed link opens the page (default
                          ${PUBLISH_DEFAULTS.urlSeconds}, at most ${PUBLISH_DEFAULTS.maxUrlSeconds}: 7 days)
  --claude-dir <dir>      spend: Claude Code's folder (default CLAUDE_CONFIG_DIR or ~/.claude)
  --opencode-dir <dir>    spend: OpenCode's data folder (default $XDG_DATA_HOME/opencode or
                          ~/.local/share/opencode)
  --codex-dir <dir>       spend: Codex's folder (default CODEX_HOME or ~/.codex)
  --prices <file>         spend: a models.dev shaped price table (JSON) for runs the agent did not
                          price; without it they are stored unpriced (tokens, no cost)
  --dry-run               spend: print what would be written, write nothing
  --format <f>            usage: the file's agent format, claude-transcript, claude-stream, opencode or
                          codex (default: told from its first records)
  --verbose               structured logs (WARN and above) on stderr
  -q, --quiet             no progress bar: the result (and any error or note) only
  --no-color              no colour (also NO_COLOR=1; colour is only ever used on a terminal)
  -V, --version           the installed version
  -h, --help              this text

Exit codes: 0 ok/healthy; 1 failure; 2 usage error; 3 needs attention (health not healthy,
frames on the dead-letter queue).

Reading the output (each field: README "Reading the output"):
  health   status healthy | shortfall (messages without a row) | silent (no row observed since
           activation) | not_activated (run migrate); excess: row keys with no message (never
           alarms); collisions: rows beyond the first per (task_session_id, tool_call_id);
           checkpoint (not moved): nothing new verified (a shortfall holds it)
  ingest   attempted = skipped_no_identity + persisted + failed; invalid: parked on the dead-letter
           queue; orphaned: its session was deleted (acknowledged); system_error: the database
           failed (the frame stays on the queue)
  usage    per subagent: requests (distinct API requests), tokens by kind (- : the file does not
           report it; tokens out include reasoning), cost with its source (OpenCode's own price:
           models_dev_list; Claude and Codex record none), complete (the run's end is in the file)
  --json   stdout holds the JSON alone (through npm: npm run --silent cli -- … --json); instants
           are RFC 3339 UTC strings with microseconds, e.g. 2026-12-01T13:00:00.123456Z`;

/**
 * One command's help (issue 51), cut from USAGE so there is one text: its line under Commands, the
 * options that name it (`health: …`, `report, export: …`) and those that name no command (every
 * command takes them), and its part of "Reading the output".
 */
export function commandHelp(command: string): string {
  const [head = '', rest = ''] = USAGE.split('\n\nOptions:\n');
  const [options = '', tail = ''] = rest.split('\n\nExit codes:');
  const blocks = (text: string) => text.split(/\n(?= {2}\S)/);
  const line = blocks(head.split('Commands:\n')[1] ?? '').find((b) => b.trimStart().startsWith(command)) ?? '';
  const applies = (block: string) => {
    const description = block.replace(/^\s*\S+(?: <[^>]+>)?(?:, \S+(?: <[^>]+>)?)?\s+/, '').replace(/^\n\s+/, '');
    const named = /^([a-z]+(?:, [a-z]+)*)(?: --[a-z]+)?: /.exec(description.trimStart());
    return named === null || named[1]!.split(', ').includes(command);
  };
  const reading = (tail.split('Reading the output (each field: README "Reading the output"):\n')[1] ?? '')
    .split(/\n(?= {2}\S)/)
    .filter((b) => b.trimStart().startsWith(`${command} `) || b.trimStart().startsWith('--json'));
  return [
    `Usage: subagent-context ${command} [options]`,
    '',
    line.replace(/^ {2}/, ''),
    '',
    'Options:',
    blocks(options).filter(applies).join('\n'),
    '',
    `Exit codes:${tail.split('\n\nReading the output')[0]}`,
    ...(reading.length > 0 ? ['', 'Reading the output:', ...reading] : []),
    '',
    'subagent-context --help lists every command and option.',
  ].join('\n');
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

/** Every flag of every command (lib/cli/flags.ts checks which command each applies to). */
export const CLI_OPTIONS = {
  'database-url': { type: 'string' },
  version: { type: 'boolean', short: 'V', default: false },
  json: { type: 'boolean', default: false },
  'grace-seconds': { type: 'string' },
  full: { type: 'boolean', default: false },
  'acknowledge-through': { type: 'string' },
  'statement-timeout': { type: 'string' },
  rejected: { type: 'string' },
  create: { type: 'boolean', default: false },
  'rerun-backfill': { type: 'boolean', default: false },
  by: { type: 'string' },
  otlp: { type: 'string' },
  header: { type: 'string', multiple: true },
  protocol: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  task: { type: 'string' },
  session: { type: 'string' },
  sort: { type: 'string' },
  limit: { type: 'string' },
  trees: { type: 'string' },
  csv: { type: 'boolean', default: false },
  html: { type: 'string' },
  'open-spans': { type: 'boolean', default: false },
  'batch-spans': { type: 'string' },
  'settle-seconds': { type: 'string' },
  'lookback-seconds': { type: 'string' },
  'position-key': { type: 'string' },
  restart: { type: 'boolean', default: false },
  'no-position': { type: 'boolean', default: false },
  to: { type: 'string' },
  'url-seconds': { type: 'string' },
  'claude-dir': { type: 'string' },
  'opencode-dir': { type: 'string' },
  'codex-dir': { type: 'string' },
  prices: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  format: { type: 'string' },
  verbose: { type: 'boolean', default: false },
  quiet: { type: 'boolean', short: 'q', default: false },
  'no-color': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** The flags whose value is a path (a file or folder the person names): resolved by lib/cli/user-path.ts. */
const PATH_FLAGS = ['html', 'rejected', 'prices', 'claude-dir', 'opencode-dir', 'codex-dir'] as const;

/** The commands whose argument is a file: ingest's frames, usage's agent file. */
const FILE_ARGUMENT = new Set(['ingest', 'usage']);

const COMMANDS = new Set(['migrate', 'health', 'ingest', 'report', 'export', 'publish', 'spend', 'usage']);

/** The line after a usage error: where the whole help is, instead of the whole help (issue 34). */
const HELP_POINTER = 'subagent-context --help lists every command and option.';

/** What the CLI needs that `lib/` does not build: the local queue stack `ingest` feeds (`local/pipeline.ts`). */
export interface CliDeps {
  startPipeline: StartIngestPipeline;
  /** the package's version, for --version (the entry point reads package.json) */
  version?: string;
  /** Ctrl-C (lib/cli/interrupt.ts): the entry point installs the one handler; none in tests that do not send one */
  interrupt?: Interrupt;
}

/** The CLI without the process: parses argv, runs one command, returns the exit code. */
export async function runCli(argv: readonly string[], rawIo: CliIo, deps: CliDeps): Promise<number> {
  // R2-6, R4-1: every diagnostic the CLI prints (errors, notes, usage, progress, the other commands'
  // results) passes through the redaction helper, so a URL's password never shows. The report's data
  // (`outcome.data`) is printed exactly as the host wrote it: redaction is for diagnostics only.
  const io: CliIo = {
    ...rawIo,
    stdout: { isTTY: rawIo.stdout.isTTY, write: (text: string) => rawIo.stdout.write(redactText(text)) },
    stderr: { isTTY: rawIo.stderr.isTTY, write: (text: string) => rawIo.stderr.write(redactText(text)) },
  };
  // biome-ignore lint/suspicious/noImplicitAnyLet: the type is parseFlags's result for the options below, inferred at the assignment
  let parsed;
  try {
    parsed = parseFlags(argv, CLI_OPTIONS);
    const command = parsed.positionals[0];
    if (command !== undefined && COMMANDS.has(command)) checkFlagsApply(command, parsed.given, parsed.values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`${usageText(err)}\n\n${HELP_POINTER}\n`);
    return EXIT.usage;
  }
  const { values } = parsed;
  // issue 58 #16: every path the person gave, from where they typed the command (npm run cli runs
  // from the package root); a sqlite: URL's path is made absolute where the store is opened
  for (const flag of PATH_FLAGS) {
    const given = values[flag];
    if (given !== undefined && given !== '') values[flag] = userPath(given, io.env);
  }
  const positionals = parsed.positionals.map((arg, i) =>
    i === 1 && FILE_ARGUMENT.has(parsed.positionals[0] ?? '') && arg !== '' ? userPath(arg, io.env) : arg,
  );
  if (values.help) {
    // issue 51: `health --help` is health's help, not the whole
    const asked = parsed.positionals[0];
    io.stdout.write(`${asked !== undefined && COMMANDS.has(asked) ? commandHelp(asked) : USAGE}\n`);
    return EXIT.ok;
  }
  if (values.version) {
    io.stdout.write(`${deps.version ?? 'unknown'}\n`);
    return EXIT.ok;
  }
  const interrupt = deps.interrupt ?? NO_INTERRUPT;
  // INFO lines go to stdout, which belongs to the result here; WARN and ERROR go to stderr.
  logger.setLogLevel(values.verbose ? 'WARN' : 'ERROR');

  let db: Database | undefined;
  let proxy: ProxyChoice | undefined;
  let localPostgres: string | undefined;
  let created: string | undefined;
  let dialect: 'postgres' | 'sqlite' | undefined;
  // `reading`: the command writes nothing (health --full, report), so a SQLite store opens read-only.
  const open = async (mode: 'writing' | 'reading' = 'writing'): Promise<Database> => {
    const { url, resolvedFrom } = userDatabaseUrl(await databaseUrl(values['database-url'], io.env), io.env);
    proxy = await proxyFor(url, io.env);
    if (proxy.wsProxy) localPostgres = hostPort(url);
    dialect = databaseKind(url);
    const store = openStore(url, {
      wsProxy: proxy.wsProxy,
      statementTimeoutMs: statementTimeoutMs(values['statement-timeout']),
      readonly: mode === 'reading',
      // issue 59: a SQLite store read by threads side by side, as PostgreSQL's pool reads it
      readers: mode === 'reading' ? SQLITE_MAX_READERS : undefined,
      create: mode === 'writing' && values.create,
      env: io.env,
      resolvedFrom,
    });
    created = store.created;
    return store.db;
  };
  try {
    const [command, ...rest] = positionals;
    const run = async (): Promise<CommandResult<unknown>> => {
      switch (command) {
        case 'migrate':
          expectArguments(rest, 0, command);
          db = await open();
          return migrateCommand(db, { rerunBackfill: values['rerun-backfill'], interrupt: interrupt.signal });
        case 'health': {
          expectArguments(rest, 0, command);
          const graceSeconds = secondsFlag('--grace-seconds', values['grace-seconds']) ?? graceSecondsFromEnv(io.env);
          const acknowledge = values['acknowledge-through'];
          const acknowledgeThrough = instantFlag('--acknowledge-through', acknowledge);
          if (values.full && acknowledgeThrough !== undefined)
            throw new UsageError('--full and --acknowledge-through exclude each other');
          // The full audit writes nothing; the scheduled check moves its checkpoint in kandev_meta.
          db = await open(values.full ? 'reading' : 'writing');
          return healthCommand(db, {
            ...healthOptionsFromEnv(io.env),
            graceSeconds,
            kind: values.full ? 'full' : 'scheduled',
            acknowledgeThrough,
            signal: interrupt.signal,
          }).catch((err: unknown) => {
            // the instant cannot be honoured (at or before the checkpoint): the flag's value is the problem
            if (acknowledge !== undefined && err instanceof RangeError)
              throw new UsageError(`--acknowledge-through ${acknowledge}: ${err.message}`);
            throw err;
          });
        }
        case 'report': {
          expectArguments(rest, 0, command);
          const request = parseReportFlags(values);
          const graceSeconds = secondsFlag('--grace-seconds', values['grace-seconds']) ?? graceSecondsFromEnv(io.env);
          // R3-8: a report writes nothing, so a SQLite store opens read-only.
          db = await open('reading');
          return reportCommand(db, request, {
            color: !values['no-color'] && wantsColor(io.stdout, io.env),
            width: terminalWidth(rawIo.stdout, io.env),
            graceSeconds,
          });
        }
        case 'publish': {
          expectArguments(rest, 0, command);
          // R4-11: the AWS SDK's S3 client and the page's renderer are loaded for publish alone
          const { parsePublishFlags, publishCommand } = await import('./commands/publish.js');
          const request = parsePublishFlags(values);
          const graceSeconds = secondsFlag('--grace-seconds', values['grace-seconds']) ?? graceSecondsFromEnv(io.env);
          // R3-8: the report writes nothing, so a SQLite store opens read-only
          db = await open('reading');
          // issue 57 #21: a retried write is said on stderr as it happens, as the export's are
          return publishCommand(db, request, {
            graceSeconds,
            say: (line) => io.stderr.write(`${terminalSafeLines(line)}\n`),
          });
        }
        case 'export': {
          expectArguments(rest, 0, command);
          // R4-11: the collector's configuration reads @opentelemetry/core; loaded for export alone
          const otlp = await import('../export/otlp/config.js');
          const target = usage(
            () =>
              otlp.resolveOtlpTarget({ url: values.otlp, headers: values.header, protocol: values.protocol }, io.env),
            otlp.OtlpConfigError,
          );
          const oneOff = values.task !== undefined || values.session !== undefined || values.until !== undefined;
          if (values.restart && values['no-position'])
            throw new UsageError('--restart and --no-position exclude each other');
          const positionKey = usage(() => checkPositionKey(values['position-key'] ?? POSITION_KEY));
          const keep = !values['no-position'] && (!oneOff || values['position-key'] !== undefined);
          // Every flag is read before the store opens: a bad value is a usage error, whatever the store.
          const options: ExportOptions = {
            since: instantFlag('--since', values.since),
            until: instantFlag('--until', values.until),
            task: values.task,
            session: values.session,
            openSpans: values['open-spans'],
            batchSpans: countFlag('--batch-spans', values['batch-spans'], 'spans') ?? EXPORT_DEFAULTS.batchSpans,
            pageTurns: EXPORT_DEFAULTS.pageTurns,
            settleSeconds: secondsFlag('--settle-seconds', values['settle-seconds']) ?? EXPORT_DEFAULTS.settleSeconds,
            lookbackSeconds:
              secondsFlag('--lookback-seconds', values['lookback-seconds']) ?? EXPORT_DEFAULTS.lookbackSeconds,
            position: !keep ? 'none' : values.restart ? 'restart' : 'resume',
            positionKey,
            serviceName: io.env.OTEL_SERVICE_NAME,
          };
          // R4-5: without a position to move, an export writes nothing: a SQLite store opens read-only
          db = await open(keep ? 'writing' : 'reading');
          return exportCommand(
            db,
            target,
            // Ctrl-C: stop before the next page (the position already stands after the last accepted batch)
            { ...options, keepGoing: () => !interrupt.signal.aborted },
            io.stderr,
          );
        }
        case 'spend': {
          expectArguments(rest, 0, command);
          const { spendCommand } = await import('./commands/spend.js');
          // --dry-run writes nothing: a SQLite store opens read-only
          db = await open(values['dry-run'] ? 'reading' : 'writing');
          return spendCommand(db, values, {
            env: io.env,
            stderr: io.stderr,
            quiet: values.quiet,
            // Ctrl-C: stop between pages, each committed whole
            keepGoing: () => !interrupt.signal.aborted,
          });
        }
        case 'usage': {
          expectArguments(rest, 1, command);
          // R6-3: reads an agent's file, never a store
          const { usageCommand, usageFormatFlag } = await import('./commands/usage.js');
          return usageCommand(rest[0]!, usageFormatFlag(values.format), { width: terminalWidth(rawIo.stdout, io.env) });
        }
        case 'ingest':
          expectArguments(rest, 1, command);
          db = await open();
          return ingestCommand(
            db,
            { file: rest[0]!, rejectedFile: values.rejected, interrupt: interrupt.signal },
            // --quiet: the progress bar goes nowhere; errors and notes still reach stderr
            values.quiet ? { ...io, stderr: { isTTY: false, write: () => true } } : io,
            deps.startPipeline,
          );
        case undefined:
          throw new UsageError('no command given');
        default: {
          // issue 51: a mistyped command gets the nearest one, as a mistyped flag does
          const near = nearestFlag(command, [...COMMANDS]);
          throw new UsageError(`unknown command "${command}"${near ? `: did you mean ${near}?` : ''}`);
        }
      }
    };
    // A read that writes nothing (report, health --full) stops at Ctrl-C, its result not waited for
    // (issue 58 #11). On SQLite its statements are synchronous and chained, so the signal is seen
    // only after them: it ends, then says so (exit 130). migrate and the scheduled health check
    // stop at their own boundaries (runMigration's and runHealthCheck's `signal`).
    const readOnly =
      command === 'report' ? 'report' : command === 'health' && values.full ? 'health --full' : undefined;
    const outcome = await (readOnly === undefined ? run() : stopAtInterrupt(run(), interrupt.signal, readOnly));
    // A SIGINT that came during synchronous SQLite statements (the whole command can be one chain of
    // microtasks) is delivered only once the event loop waits: a short timer lets it, so it is not
    // lost and the command says it was interrupted (issue 57 #11). setImmediate alone did not.
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Ctrl-C that the command did not stop at (it came after its last boundary, or the command has
    // none): it finished first, so its result is where it stands
    const stopped = interrupt.signal.aborted ? interruptedAfter(command, outcome.result) : undefined;
    // R4-5: a read-only command says how it read a SQLite store (whether SQLite made files to read it)
    const readNote = db?.readNote === undefined ? [] : [`the SQLite store was ${db.readNote}`];
    for (const note of [...readNote, ...(outcome.notes ?? [])]) io.stderr.write(`note: ${terminalSafeLines(note)}\n`);
    // R4-12: a data document is written in pieces (one string cannot hold 500,000 report groups)
    if (outcome.data && values.json) for (const chunk of jsonDocumentChunks(outcome.result)) rawIo.stdout.write(chunk);
    else if (outcome.data) rawIo.stdout.write(`${outcome.text}\n`);
    // a JSON document is redacted value by value before it is serialised, so it stays valid JSON
    else if (values.json) rawIo.stdout.write(jsonDocument(redact(outcome.result)));
    else io.stdout.write(`${outcome.text}\n`);
    if (stopped !== undefined) {
      io.stderr.write(`subagent-context: ${terminalSafeLines(stopped.message)}\n`);
      return EXIT_INTERRUPTED;
    }
    return outcome.exitCode;
  } catch (err) {
    if (err instanceof Interrupted) {
      // issue 51: where it stands and what to run next, on stderr; --json gets the same as a document
      if (values.json)
        rawIo.stdout.write(jsonDocument(redact({ error: err.message, name: err.name, progress: err.progress })));
      io.stderr.write(`subagent-context: ${terminalSafeLines(err.message)}\n`);
      return EXIT_INTERRUPTED;
    }
    if (err instanceof UsageError) {
      io.stderr.write(`${usageText(err)}\n\n${positionals.length === 0 ? USAGE : HELP_POINTER}\n`);
      return EXIT.usage;
    }
    await db?.close().catch(() => undefined); // before the diagnosis: a probe must not wait behind the pool
    db = undefined;
    const { message, exitCode, name } = await describeFailure(err, { localPostgres, dialect });
    if (values.json) rawIo.stdout.write(jsonDocument({ error: redactText(message), name }));
    io.stderr.write(`subagent-context: ${terminalSafeLines(message)}\n`);
    if (created !== undefined) io.stderr.write(`note: ${terminalSafeLines(discardCreatedStore(created))}\n`);
    return exitCode;
  } finally {
    await db?.close();
    await proxy?.close();
  }
}

/** The part of publish's result interruptedAfter reads (lib/cli/commands/publish.ts loads lazily). */
interface PublishSummaryLike {
  objects?: { key: string }[];
}

/** `work`, or an Interrupted as soon as `signal` aborts: a read-only command stops without its result. */
async function stopAtInterrupt<T>(work: Promise<T>, signal: AbortSignal, command: string): Promise<T> {
  let listener: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    listener = () =>
      reject(new Interrupted(`${command} stopped before its result; it wrote nothing`, 'run the same command again'));
    if (signal.aborted) listener();
    else signal.addEventListener('abort', listener, { once: true });
  });
  try {
    return await Promise.race([work, stopped]);
  } finally {
    signal.removeEventListener('abort', listener!);
    work.catch(() => undefined); // a statement still running fails when the store closes: not news
  }
}

/**
 * What a command that ran to its end after Ctrl-C says (exit 130): an export stopped between pages
 * with its position stored; the others finished their one transaction or read.
 */
function interruptedAfter(command: string | undefined, result: unknown): Interrupted {
  if (command === 'export' && (result as { complete?: boolean }).complete === false) {
    const after = (result as ExportDocument).position.after;
    return new Interrupted(
      `export stopped between pages; the position stands after the last batch the collector accepted${after ? ` (changed ${after.changed})` : ''}`,
      'run the same command again to resume from there',
    );
  }
  if (command === 'spend' && (result as { complete?: boolean }).complete === false)
    return new Interrupted(
      'spend stopped between pages; every page before it was written whole',
      'run the same command again: it reads only the subagents still without final usage',
    );
  if (command === 'publish') {
    // issue 57 #16: publish has no transaction; what it wrote is the result above
    const written = ((result as PublishSummaryLike).objects ?? []).map((o) => o.key);
    return new Interrupted(
      `publish ran to its end (it wrote ${written.length} object(s): ${written.join(', ')}; the link above is complete)`,
      'nothing is left to run',
    );
  }
  // the signal came after the last boundary (SQLite's statements are synchronous): the work is done
  const what =
    command === 'report'
      ? 'it wrote nothing'
      : command === 'health'
        ? (result as { kind?: string }).kind === 'full'
          ? 'it wrote nothing'
          : 'its checkpoint, if it moved, was written before it stopped'
        : 'its transaction was committed before it stopped';
  return new Interrupted(
    `${command ?? 'the command'} ran to its end (${what}; the result above is complete)`,
    'nothing is left to run',
  );
}

/** A configuration error of a flag's value is a usage error (exit 2); `also`: a lazily loaded module's own such class. */
function usage<T>(fn: () => T, also?: abstract new (...args: never[]) => Error): T {
  try {
    return fn();
  } catch (err) {
    if (
      err instanceof PositionError ||
      err instanceof DatabaseUrlConfigError ||
      (also !== undefined && err instanceof also)
    )
      throw new UsageError(err.message);
    throw err;
  }
}

function expectArguments(rest: readonly string[], count: number, command: string): void {
  if (rest.length !== count) {
    throw new UsageError(
      count === 0
        ? `${command} takes no arguments (got ${rest.join(' ')})`
        : `${command} needs ${USAGE_OF[command] ?? `${count} argument(s)`}${rest.length > count ? ` (got ${rest.length})` : ''}`,
    );
  }
}

/** What a command's arguments are, in words, for the usage error. */
const USAGE_OF: Record<string, string> = {
  usage: "one argument, the agent's file: subagent-context usage <file> [--format <f>] [--json]",
  ingest: 'one argument, the frames file: subagent-context ingest <frames.jsonl> --database-url <url>',
};

async function databaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
  if (flag) {
    usage(() => checkDatabaseUrl(flag, { kind: 'flag', name: '--database-url' }));
    return flag;
  }
  await loadDatabaseUrl({ env });
  if (!env.DATABASE_URL)
    throw new UsageError('no database: pass --database-url postgres://… or sqlite:<path>, or set DATABASE_URL');
  return env.DATABASE_URL;
}

/** `host:port` of a postgres:// URL (5432 when it names none), for a message about reaching it. */
function hostPort(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}`;
  } catch {
    return undefined;
  }
}
