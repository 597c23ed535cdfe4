import { existsSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { describeFailure, type FailureContext } from '../lib/cli/failure.js';
import { parseFlags } from '../lib/cli/flags.js';
import { EXIT_INTERRUPTED, installInterrupt } from '../lib/cli/interrupt.js';
import { userDatabaseUrl } from '../lib/cli/open-store.js';
import { UsageError } from '../lib/cli/usage-error.js';
import { relativeBase, userPath } from '../lib/cli/user-path.js';
import { databaseKind } from '../lib/db/open.js';
import { jsonDocument } from '../lib/json-document.js';
import { logger } from '../lib/observability.js';
import { redactText } from '../lib/redact.js';
import { terminalSafe } from '../lib/terminal-text.js';
import type { LocalS3 } from '../local/publish-demo.js';
import { type LocalStackResult, runLocalStack } from '../local/stack.js';
import { type KeptStore, renderStackSummary } from '../local/stack-summary.js';

const USAGE = `Usage: npm start -- [options]

Runs the whole pipeline locally with nothing else running: embedded PostgreSQL (PGlite) behind
the Neon driver, an SQS emulator, a generated host store, migrate, a live frame stream through
producer → FIFO queue → poller → ingest, and health; writes the report page (report --html) to a
path it prints, publishes it to the emulator's S3 (publish --to) and prints its link; then prints a
checked summary.

Options:
  --database-url <url>  an EMPTY postgres://… database instead of the embedded one
  --sqlite <file>       a new host SQLite store at <file> instead (the host's local default)
  --messages <n>        messages in the generated host store (default 4000)
  --live <n>            new subagent invocations in the live stream (default 120)
  --seed <n>            generator seed (default 1)
  --page <file>         where to write the report page (default .local/report-page.html)
  --otlp-demo           then export the store as OTLP traces to a receiver started here and
                        print the span count (docs/otlp.md)
  --serve               keep the S3 emulator the report is published to running, so the printed
                        link opens the page, until Ctrl-C (docs/publish.md)
  --json                print the result as JSON instead of tables
With --sqlite the store stays: the summary ends with the command that prints its report.
Exit code: 0 when every figure matches what the store and the stream must produce, 1 otherwise
(or when it cannot run), 2 for a flag it does not know or a value it cannot take.`;

/** A flag's value is the problem: exit 2, as the CLI's usage errors. */
class FlagError extends Error {}

const WHY_AT_LEAST: Record<string, string> = {
  messages: 'the live stream attaches its new invocations to the turns of the generated host store, so it needs one',
};

/** How npm start was pointed at its database, so a failure names the host:port or the file (issue 34). */
let failureContext: FailureContext = {};

async function main(): Promise<number> {
  const { values, positionals } = parseFlags(process.argv.slice(2), {
    'database-url': { type: 'string' },
    sqlite: { type: 'string' },
    messages: { type: 'string' },
    live: { type: 'string' },
    seed: { type: 'string' },
    page: { type: 'string' },
    json: { type: 'boolean', default: false },
    'otlp-demo': { type: 'boolean', default: false },
    serve: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (positionals.length > 0)
    throw new FlagError(
      `npm start takes options only (got "${positionals[0]}"): put them after --, e.g. npm start -- --sqlite demo.db`,
    );
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // EMF documents and INFO lines are for CloudWatch; here they would bury the summary.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // Local tooling: the SDK's Node 20 end-of-support notice is for the deployed functions (nodejs22.x).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  logger.setLogLevel('ERROR');
  const number = (name: string, value: string | undefined, least = 0) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < least)
      throw new FlagError(
        least === 0
          ? `--${name} must be a non-negative integer (got ${value})`
          : `--${name} must be an integer of at least ${least} (got ${value}): ${WHY_AT_LEAST[name] ?? ''}`,
      );
    return n;
  };
  // issue 58 #12: a URL given as a path would be advised `mkdir -p …/sqlite:/root/x`
  if (values.sqlite?.startsWith('sqlite:'))
    throw new FlagError(
      `--sqlite takes a file path, not a URL (got ${JSON.stringify(terminalSafe(values.sqlite))}): give --sqlite ${values.sqlite.slice('sqlite:'.length)} (or --database-url ${values.sqlite})`,
    );
  // issue 58 #16: npm start runs from the package root; a relative --sqlite, --page or sqlite: URL
  // is the person's, from where they typed it (lib/cli/user-path.ts, the CLI's one rule), and
  // every message names the absolute path
  const sqlite = values.sqlite === undefined ? undefined : resolve(userPath(values.sqlite, process.env));
  const from =
    values.sqlite === undefined || isAbsolute(values.sqlite)
      ? undefined
      : `the relative path resolved from ${relativeBase(process.env)}`;
  if (sqlite !== undefined && !existsSync(dirname(sqlite)))
    throw new FlagError(
      `--sqlite ${values.sqlite}: the folder ${dirname(sqlite)}${from === undefined ? '' : ` (${from})`} does not exist; create it (mkdir -p ${dirname(sqlite)}) or choose a path in a folder that exists`,
    );
  if (sqlite !== undefined && existsSync(sqlite) && statSync(sqlite).size > 0)
    throw new FlagError(
      `--sqlite ${values.sqlite}${from === undefined ? '' : ` (${sqlite}: ${from})`} already exists: the demo creates a new host store there, so pass a path that does not exist yet (or delete this file); to read the store it made, run \`npm run --silent cli -- health --database-url sqlite:${sqlite}\``,
    );
  const givenUrl = values['database-url'];
  const databaseUrl =
    givenUrl !== undefined ? userDatabaseUrl(givenUrl, process.env).url : sqlite ? `sqlite:${sqlite}` : undefined;
  failureContext = {
    dialect: databaseUrl?.startsWith('sqlite:') ? 'sqlite' : 'postgres',
    localPostgres:
      databaseUrl !== undefined && databaseKind(databaseUrl) === 'postgres' ? hostPort(databaseUrl) : undefined,
  };
  // issue 51: Ctrl-C leaves no partial store that a rerun would refuse as if it were finished.
  // issue 58 #9: once the store is finished and the summary printed (--serve), Ctrl-C only ends
  // the serving: the store is kept and the exit is 0.
  let serving = false;
  const stopped = () => {
    process.stderr.write(`\n${interruptedDemo(values['database-url'], sqlite)}\n`);
    process.exit(EXIT_INTERRUPTED);
  };
  const interrupt = installInterrupt(
    process,
    (text) => process.stderr.write(text),
    () => process.exit(serving ? 0 : EXIT_INTERRUPTED),
    true,
  );
  // issue 58 #10: a terminal's Ctrl-C reaches npm, tsx and node at once, and tsx relays it again:
  // the second SIGINT must not exit past the cleanup
  interrupt.onForce(() => {
    if (!serving) stopped();
  });
  interrupt.signal.addEventListener('abort', () => {
    if (!serving) stopped();
  });
  const summaryOf = (result: LocalStackResult) => {
    // wall clock since this process started (tsx's start-up included), not since the stack began
    const wallMs = Math.round(performance.now());
    return values.json
      ? jsonDocument({ ...result, wallMs })
      : `\n${renderStackSummary(result, { wallMs, kept: keptStore(values['database-url'], sqlite) })}\n`;
  };
  let printed = false;
  const result = await runLocalStack({
    databaseUrl,
    messages: number('messages', values.messages, 1),
    live: number('live', values.live),
    seed: number('seed', values.seed),
    page: values.page === undefined ? undefined : userPath(values.page, process.env),
    progress: process.stderr,
    otlpDemo: values['otlp-demo'],
    serveUntil: values.serve
      ? (finished, s3) => {
          // the store is finished and closed: from here Ctrl-C ends the serving and keeps it
          serving = true;
          process.stdout.write(summaryOf(finished));
          printed = true;
          return new Promise<void>((done) => {
            process.stderr.write(`\n${servingText(finished.published.url, s3)}\n`);
            if (interrupt.signal.aborted) done();
            interrupt.signal.addEventListener('abort', () => done());
            process.once('SIGTERM', () => done());
          });
        }
      : undefined,
  });
  if (!printed) process.stdout.write(summaryOf(result));
  return result.ok ? 0 : 1;
}

/** What `--serve` prints once the summary is out: the link, and the settings to publish by hand (issue 58 #9). */
function servingText(url: string, s3: LocalS3): string {
  return [
    'the local S3 answers until Ctrl-C (the store is kept). To publish by hand against it, in another terminal:',
    `  ${Object.entries(s3.env)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')} \\`,
    `    npm run --silent cli -- publish --to ${s3.to} --database-url <the store's URL>`,
    'the published page:',
    url,
  ].join('\n');
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

/**
 * The demo was stopped before its summary: a new SQLite store it made is removed with its -wal,
 * -shm and -journal (it was never finished, and the path is free again for the rerun); a database
 * named by --database-url keeps what was written, and says so.
 */
function interruptedDemo(databaseUrl: string | undefined, path: string | undefined): string {
  if (path !== undefined && databaseUrl === undefined) {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
    return `interrupted: the demo stopped before its summary; its partial store ${path} was removed, so \`npm start -- --sqlite ${path}\` runs again as it was`;
  }
  if (databaseUrl !== undefined)
    return 'interrupted: the demo stopped before its summary; the database named by --database-url holds a partial demo store: drop and create it again (it must be empty) before a rerun';
  return 'interrupted: the demo stopped before its summary; its store was in memory, nothing was kept: run `npm start` again';
}

/** What is left to explore after the run, and the command that reads it (issue 34). */
function keptStore(databaseUrl: string | undefined, path: string | undefined): KeptStore {
  if (path !== undefined && databaseUrl === undefined) return { kind: 'sqlite', path };
  if (databaseUrl !== undefined) return { kind: 'database-url' };
  return { kind: 'none' };
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // R2-6: this line is printed by npm start itself, so it passes through the redaction step too
    if (err instanceof FlagError || err instanceof UsageError) {
      process.stderr.write(`${err.message}\n(npm start -- --help lists the options)\n`);
      process.exit(2);
    }
    // the CLI's words for a database failure (create the database, start the server), not a function's
    void describeFailure(err, failureContext).then(({ message }) => {
      process.stderr.write(redactText(`local stack failed: ${message}\n`));
      process.exit(1);
    });
  },
);
