import { Socket } from 'node:net';
import { DatabaseError } from '../db/errors.js';
import { SubagentContextError } from '../errors.js';
import { type HintClass, type HintDialect, hint } from '../hints.js';
import { MigrationError } from '../migrate/run-migration.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { UsageError, usageText } from './usage-error.js';

/** A failure the CLI found itself, already worded for the person at the terminal. */
export class CliFailure extends SubagentContextError {
  override readonly name = 'CliFailure';
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A message for the CLI's world: the thing to name, then `hint(cls, 'cli')`. */
export function cliFailure(what: string, cls: HintClass, exitCode: ExitCode = EXIT.failure): CliFailure {
  return new CliFailure(`${what}: ${hint(cls, 'cli')}`, exitCode);
}

export interface FailureContext {
  /** `host:port` of a PostgreSQL this process reaches through its own local proxy, if any */
  localPostgres?: string;
  /** the kind of database the URL names, so the hint speaks of a file or of a server (issue 34) */
  dialect?: HintDialect;
}

/**
 * Any error a command ends with, as one message for a person and one exit code (usage 2, failure
 * 1, attention 3). Database failures get the CLI's hint instead of the function's; a refused local
 * port is named with its host:port.
 */
export async function describeFailure(
  err: unknown,
  context: FailureContext = {},
): Promise<{ message: string; exitCode: ExitCode; name: string }> {
  const name = (err as Error | null)?.name ?? 'Error';
  if (err instanceof UsageError) return { message: usageText(err), exitCode: EXIT.usage, name };
  if (err instanceof CliFailure) return { message: err.message, exitCode: err.exitCode, name };
  const db = databaseErrorIn(err);
  if (db !== undefined) {
    const cls = db.hintClass;
    const reach =
      cls === 'unreachable' && context.localPostgres ? await reachability(context.localPostgres) : undefined;
    const what = reach ? `cannot reach PostgreSQL at ${context.localPostgres}: ${reach}` : db.detail;
    const fix = reach
      ? 'start the server, or fix the host and port in --database-url (or DATABASE_URL)'
      : hint(cls, 'cli', context.dialect);
    if (err instanceof MigrationError) {
      return {
        message: `migrate failed at step "${err.step}": ${what}: ${fix}. Nothing was committed; run \`subagent-context migrate\` again once that is fixed`,
        exitCode: EXIT.failure,
        name,
      };
    }
    return { message: `${what}: ${fix}`, exitCode: EXIT.failure, name };
  }
  if (err instanceof MigrationError) {
    const cause = err.cause instanceof Error ? err.cause.message : String(err.cause);
    return {
      message: `migrate failed at step "${err.step}": ${cause}. Nothing was committed; run \`subagent-context migrate\` again once that is fixed`,
      exitCode: EXIT.failure,
      name,
    };
  }
  return { message: err instanceof Error ? err.message : String(err), exitCode: EXIT.failure, name };
}

function databaseErrorIn(err: unknown): DatabaseError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof DatabaseError) return e;
  }
  return undefined;
}

/** What a plain TCP connect to `host:port` meets, in words ("connection refused"), or undefined if it connects. */
export function reachability(address: string, timeoutMs = 2000): Promise<string | undefined> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (answer: string | undefined) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (e: NodeJS.ErrnoException) =>
      done(
        e.code === 'ECONNREFUSED'
          ? 'connection refused'
          : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN'
            ? 'host not found'
            : `${e.code ?? e.message}`,
      ),
    );
    socket.connect(port, host);
  });
}
