import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Micros, parseRfc3339 } from '../time.js';
import { UsageError } from './usage-error.js';

/*
 * The one flag parser: argv read once, for every command. A bad flag or value is a usage error
 * that names the flag and says what it takes (exit 2; issue 25), never an environment variable's
 * name, and never the whole help (issue 34: a pointer to --help instead).
 */

type Options = NonNullable<ParseArgsConfig['options']>;

/** Levenshtein distance, for "did you mean": flag names are short, so the plain table is cheap. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The known flag closest to a mistyped one (a typo or two, or a prefix), if any is close enough. */
export function nearestFlag(name: string, known: readonly string[]): string | undefined {
  let best: { flag: string; d: number } | undefined;
  for (const flag of known) {
    const d = flag.startsWith(name) && name.length >= 3 ? 0.5 : distance(name, flag);
    if (best === undefined || d < best.d) best = { flag, d };
  }
  return best !== undefined && best.d <= Math.max(2, Math.floor(name.length / 4)) ? best.flag : undefined;
}

/** `-3`, `-0.5`, `-1e3`: a negative number, which parseArgs would take for a flag. */
const NEGATIVE_NUMBER = /^-(?:\d|\.\d)/;

/**
 * What each flag that takes a value takes, in words (issue 58 #19): the one table its "needs …"
 * message reads when the value is missing, so `--html` says it needs a file path, not "a value".
 * Every string option of lib/cli/main.ts has one (test/lib/cli/flags.test.ts).
 */
export const FLAG_VALUES: Readonly<Record<string, string>> = {
  'database-url': 'a database URL (postgres://… or sqlite:<path>)',
  'grace-seconds': 'a number of seconds',
  'acknowledge-through': 'an instant (RFC 3339, or a date)',
  'statement-timeout': 'a number of seconds',
  rejected: 'a file path (where the dead-lettered frames are written)',
  by: 'a grouping (task, session, turn, type, model or day)',
  otlp: "a URL (the collector's)",
  header: 'a header (name=value)',
  protocol: 'a protocol (http/protobuf or http/json)',
  since: 'an instant (RFC 3339, or a date)',
  until: 'an instant (RFC 3339, or a date)',
  task: 'a task id',
  session: 'a session id',
  sort: 'a figure to sort by (subagents, contexts, tokens, cost, key or last_observed_at)',
  limit: 'a number of groups',
  trees: 'a number of turns',
  html: 'a file path (where the page is written)',
  'batch-spans': 'a number of spans',
  'settle-seconds': 'a number of seconds',
  'lookback-seconds': 'a number of seconds',
  'position-key': 'a kandev_meta key',
  to: 'an S3 location (s3://bucket/prefix)',
  'url-seconds': 'a number of seconds',
  'claude-dir': "a folder path (Claude Code's)",
  'opencode-dir': "a folder path (OpenCode's data)",
  'codex-dir': "a folder path (Codex's)",
  prices: 'a file path (a models.dev shaped price table, JSON)',
  format: 'a file format (claude-transcript, claude-stream, opencode or codex)',
};

/** `--html needs a file path (…)`: the flag and what it takes, from FLAG_VALUES. */
function needsValue(flag: string): string {
  return `${flag} needs ${FLAG_VALUES[flag.replace(/^--/, '')] ?? 'a value'}`;
}

/**
 * parseArgs with the CLI's words. Before it runs: an unknown flag gets "did you mean --x?"; a
 * value-taking flag followed by a negative number takes it as its value (`--limit -3`, so the flag's
 * own check says what it needs instead of parseArgs' "ambiguous"); one followed by another flag says
 * it needs a value. Returns the values, the positionals and the names of the flags actually given.
 */
export function parseFlags<O extends Options>(
  argv: readonly string[],
  options: O,
): {
  values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true }>>['values'];
  positionals: string[];
  given: Set<string>;
} {
  const shorts = new Map(
    Object.entries(options).flatMap(([name, o]) => (o.short === undefined ? [] : [[o.short, name] as const])),
  );
  const args: string[] = [];
  const given = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (!arg.startsWith('-') || arg === '-' || NEGATIVE_NUMBER.test(arg)) {
      args.push(arg);
      continue;
    }
    const long = arg.startsWith('--');
    const name = long ? arg.slice(2).split('=')[0]! : shorts.get(arg.slice(1, 2));
    const option = name === undefined ? undefined : options[name];
    if (option === undefined) {
      const typed = long ? `--${arg.slice(2).split('=')[0]}` : arg;
      const near = long ? nearestFlag(arg.slice(2).split('=')[0]!, Object.keys(options)) : undefined;
      throw new UsageError(`unknown option ${typed}${near ? `: did you mean --${near}?` : ''}`);
    }
    given.add(name!);
    const next = argv[i + 1];
    if (option.type === 'string' && !arg.includes('=') && (long || arg.length === 2) && next !== undefined) {
      if (NEGATIVE_NUMBER.test(next)) {
        args.push(`--${name}=${next}`);
        i++;
        continue;
      }
      if (next.startsWith('-') && next !== '-')
        throw new UsageError(`${needsValue(`--${name}`)} (got the option ${next.split('=')[0]} instead)`);
    }
    args.push(arg);
  }
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values, positionals, given };
  } catch (err) {
    // what is left: a missing value at the end (`--limit`), a value given to a switch (`--json=1`)
    throw new UsageError(
      (err as Error).message
        .replace(/^Option '(-[^ ']+)(?: <value>)?' argument missing$/, (_, flag: string) => needsValue(flag))
        .replace(/^Option '(-[^ ']+)' does not take an argument$/, '$1 is a switch: it takes no value'),
    );
  }
}

/**
 * `--since 2026-08-12T13:00:00Z`: an RFC 3339 instant with an offset, or a date (`2026-08-12`, UTC
 * midnight: README "Reading the output"); undefined when the flag is absent.
 */
export function instantFlag(flag: string, raw: string | undefined): Micros | undefined {
  if (raw === undefined) return undefined;
  const at = parseRfc3339(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (at === undefined)
    throw new UsageError(
      `${flag} needs an RFC 3339 instant with an offset or a date (UTC midnight), e.g. 2026-08-12T13:00:00Z or 2026-08-12 (got "${raw}")`,
    );
  return at;
}

/** `--limit 10`: a whole number of `unit`, at least 1; undefined when the flag is absent. */
export function countFlag(flag: string, raw: string | undefined, unit: string): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1)
    throw new UsageError(`${flag} needs a positive count of ${unit}, a whole number of at least 1 (got "${raw}")`);
  return n;
}

/** `--grace-seconds 900`: a non-negative number of seconds; undefined when the flag is absent. */
export function secondsFlag(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`${flag} needs a non-negative number of seconds, e.g. ${flag} 900 (got "${raw}")`);
  return seconds;
}

/** Flags every command takes. */
const EVERY_COMMAND = new Set([
  'database-url',
  'json',
  'statement-timeout',
  'verbose',
  'quiet',
  'no-color',
  'help',
  'version',
]);

/** The commands each other flag applies to (the --help text says the same). */
const APPLIES_TO: Record<string, readonly string[]> = {
  'grace-seconds': ['health', 'report', 'publish'],
  full: ['health'],
  'acknowledge-through': ['health'],
  'rerun-backfill': ['migrate'],
  // a new SQLite store is made only by a command that opens it for writing
  create: ['migrate', 'health', 'ingest', 'export'],
  rejected: ['ingest'],
  by: ['report'],
  sort: ['report'],
  limit: ['report'],
  trees: ['report'],
  csv: ['report'],
  html: ['report'],
  since: ['report', 'export'],
  until: ['report', 'export'],
  task: ['report', 'export'],
  session: ['report', 'export'],
  otlp: ['export'],
  header: ['export'],
  protocol: ['export'],
  'open-spans': ['export'],
  'batch-spans': ['export'],
  'settle-seconds': ['export'],
  'lookback-seconds': ['export'],
  'position-key': ['export'],
  restart: ['export'],
  'no-position': ['export'],
  to: ['publish'],
  'url-seconds': ['publish'],
  'claude-dir': ['spend'],
  'opencode-dir': ['spend'],
  'codex-dir': ['spend'],
  prices: ['spend'],
  'dry-run': ['spend'],
  format: ['usage'],
};

/** Why a flag does not apply where it was given, when that needs more than "it is X's". */
const WHY_NOT: Record<string, Partial<Record<string, string>>> = {
  create: {
    report:
      '--create does not apply to report: a report only reads an existing store (a demo store: `npm start -- --sqlite <path>`)',
  },
};

/**
 * A flag given to a command it does not apply to is refused (exit 2), never silently ignored
 * (issue 34): `report --full`, `report --create`, `report --trees 5` without --json or --html.
 */
export function checkFlagsApply(
  command: string,
  given: ReadonlySet<string>,
  values: { json?: boolean; html?: string; full?: boolean },
): void {
  for (const flag of given) {
    if (EVERY_COMMAND.has(flag)) continue;
    const to = APPLIES_TO[flag];
    if (to === undefined || to.includes(command)) continue;
    throw new UsageError(
      WHY_NOT[flag]?.[command] ?? `--${flag} does not apply to ${command} (it is for ${to.join(', ')})`,
    );
  }
  if (command === 'report' && given.has('trees') && !values.json && values.html === undefined)
    throw new UsageError(
      '--trees adds fan-out trees to report --json or --html; the table and CSV show none (add --json or --html <file>)',
    );
  if (command === 'health' && given.has('create') && values.full)
    throw new UsageError('--create does not apply to health --full: the audit only reads an existing store');
}
