import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../../db/database.js';
import type { PriceTable } from '../../producer/usage/price.js';
import { RecordFinder, type RecordFolders } from '../../spend/records.js';
import { runSpend, type SpendReport, UNSERVED_REASONS } from '../../spend/run.js';
import { missingTables } from '../../store/probe.js';
import { USAGE_TABLE } from '../../store/usage-table.js';
import { renderFacts } from '../../text-table.js';
import { EXIT } from '../exit-codes.js';
import { cliFailure } from '../failure.js';
import type { CommandResult } from '../io.js';
import { requireMigrated, requireWritable } from '../preflight.js';
import { createProgress, type ProgressStream } from '../progress.js';
import { UsageError } from '../usage-error.js';

export interface SpendFlags {
  'claude-dir'?: string;
  'opencode-dir'?: string;
  'codex-dir'?: string;
  prices?: string;
  'dry-run'?: boolean;
}

/**
 * The agents' folders (R6-4): each flag, else the agent's own default under the home folder
 * (`CLAUDE_CONFIG_DIR`, `CODEX_HOME` and `XDG_DATA_HOME` as the agents read them).
 */
export function recordFolders(flags: SpendFlags, env: NodeJS.ProcessEnv): RecordFolders {
  const home = env.HOME || homedir();
  return {
    claude: flags['claude-dir'] ?? env.CLAUDE_CONFIG_DIR ?? join(home, '.claude'),
    opencode: flags['opencode-dir'] ?? join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'opencode'),
    codex: flags['codex-dir'] ?? env.CODEX_HOME ?? join(home, '.codex'),
  };
}

/** `--prices FILE`: a models.dev shaped JSON object; anything else is a usage error naming the file. */
export function readPrices(path: string | undefined): PriceTable | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--prices ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'}); give a models.dev shaped JSON file`,
    );
  }
  let table: unknown;
  try {
    table = JSON.parse(text);
  } catch {
    throw new UsageError(`--prices ${path}: not JSON; give a models.dev shaped JSON file (docs/spend.md#pricing)`);
  }
  if (typeof table !== 'object' || table === null || Array.isArray(table))
    throw new UsageError(`--prices ${path}: not a JSON object of providers or models (docs/spend.md#pricing)`);
  return table as PriceTable;
}

export function renderSpend(report: SpendReport): string {
  const verb = report.dry_run ? 'would write' : 'written';
  return renderFacts([
    ['subagents with a record key and no final usage', report.rows],
    [`usage ${verb}`, report.written],
    ['  priced', report.priced],
    ['  unpriced (no price for the model)', report.unpriced],
    ...UNSERVED_REASONS.map((reason): [string, number] => [
      `not served: ${reason.replaceAll('_', ' ')}`,
      report.unserved[reason],
    ]),
    ['unreadable lines in the records read', report.unreadable_lines],
    ...(report.complete
      ? []
      : [['stopped', 'by Ctrl-C between pages: run the same command again'] as [string, string]]),
  ]);
}

/**
 * `subagent-context spend` (R6-4, docs/spend.md#spend): what each subagent spent, from the agents'
 * records on this machine, written through ingest's path. Rows it cannot serve are counted by
 * reason and do not fail it: exit 0 when every record it found was written.
 */
export async function spendCommand(
  db: Database,
  flags: SpendFlags,
  io: { env: NodeJS.ProcessEnv; stderr: ProgressStream; quiet: boolean; keepGoing: () => boolean },
): Promise<CommandResult<SpendReport>> {
  const prices = readPrices(flags.prices);
  await requireMigrated(db);
  // a store migrated before revision 6 lacks our usage table: migrate (safe to repeat) adds it
  if ((await missingTables(db, [USAGE_TABLE])).length > 0)
    throw cliFailure(`the store has no ${USAGE_TABLE} table`, 'not_migrated');
  if (flags['dry-run'] !== true) await requireWritable(db, 'spend');
  let progress: ReturnType<typeof createProgress> | undefined;
  const report = await runSpend(db, {
    finder: new RecordFinder(recordFolders(flags, io.env)),
    prices,
    dryRun: flags['dry-run'] === true,
    keepGoing: io.keepGoing,
    progress: io.quiet
      ? undefined
      : (done, total) => {
          progress ??= createProgress('spend', total, io.stderr);
          progress.update(done);
        },
  });
  progress?.done();
  const notes =
    prices === undefined && report.unpriced > 0
      ? ['no --prices: runs the agent did not price are stored unpriced (tokens, no cost)']
      : [];
  return { exitCode: EXIT.ok, result: report, text: renderSpend(report), notes };
}
