import { readFile, writeFile } from 'node:fs/promises';
import { TABLE } from '../../columns.js';
import type { Database } from '../../db/database.js';
import { DatabaseError } from '../../db/errors.js';
import type { BatchReport } from '../../ingest/report.js';
import type { DeadLetter } from '../dead-letters.js';
import { EXIT } from '../exit-codes.js';
import type { IngestTotals } from '../ingest-totals.js';
import type { CliIo, CommandResult } from '../io.js';
import { createProgress } from '../progress.js';
import { type IngestSummary, ingestSummary, renderCounters, renderDeadLetters } from '../render-ingest.js';

/**
 * The queue + event-source poller + ingest handler the command feeds. `lib/` does not start an SQS
 * emulator itself: the entry point passes one in (`local/pipeline.ts` builds it on fauxqs), which
 * keeps `lib/` free of imports from `local/`.
 */
export interface IngestPipeline {
  readonly totals: IngestTotals;
  readonly poller: { drain(options: { timeoutMs: number }): Promise<unknown> };
  /** sends message bodies in order, as a producer would; returns how many */
  send(bodies: readonly string[]): Promise<number>;
  /** takes everything off the dead-letter queue */
  deadLetters(): Promise<DeadLetter[]>;
  stop(): Promise<void>;
}

export type StartIngestPipeline = (options: {
  db: Database;
  onReport?: (report: BatchReport) => void;
}) => Promise<IngestPipeline>;

export interface IngestOptions {
  file: string;
  /** write what ended on the dead-letter queue here, one JSON object per line */
  rejectedFile?: string;
}

/**
 * `subagent-context ingest <frames.jsonl>`: every non-blank line is one SQS message body. They go
 * through the same path as in AWS — a FIFO queue (embedded emulator), the event-source poller and
 * the ingest handler, with its dead-letter queue — so ordering, retries and parking behave the
 * same. Exit 0 when every frame was stored or skipped, 3 when some ended on the dead-letter queue.
 */
export async function ingestCommand(
  db: Database,
  options: IngestOptions,
  io: CliIo,
  startPipeline: StartIngestPipeline,
): Promise<CommandResult<IngestSummary>> {
  await requireTable(db);
  const bodies = (await readFile(options.file, 'utf8')).split('\n').filter((line) => line.trim() !== '');
  const progress = createProgress('ingest', bodies.length, io.stderr);
  let delivered = 0;
  const pipeline = await startPipeline({
    db,
    onReport(report) {
      delivered = Math.min(bodies.length, delivered + report.counts.attempted + report.counts.invalid);
      progress.update(delivered);
    },
  });
  try {
    await pipeline.send(bodies);
    await pipeline.poller.drain({ timeoutMs: 30 * 60_000 });
    progress.done();
    const letters = await pipeline.deadLetters();
    if (options.rejectedFile)
      await writeFile(options.rejectedFile, letters.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const summary = ingestSummary(bodies.length, pipeline.totals, letters);
    const text = [`frames read: ${bodies.length}`, renderCounters(pipeline.totals), renderDeadLetters(letters)].join(
      '\n\n',
    );
    return { exitCode: letters.length > 0 ? EXIT.attention : EXIT.ok, result: summary, text };
  } finally {
    await pipeline.stop();
  }
}

async function requireTable(db: Database): Promise<void> {
  try {
    await db.query(`SELECT 1 FROM ${TABLE} WHERE 1 = 0`);
  } catch (err) {
    // Only a missing table means "not migrated" (42P01; SQLite's "no such table" is SQLITE_ERROR → 42000);
    // anything else (unreachable, credentials) is reported as it is.
    if (!(err instanceof DatabaseError) || (err.sqlstate !== '42P01' && err.sqlstate !== '42000')) throw err;
    throw new Error(
      `${TABLE} is not readable (${(err as Error).message}): run \`subagent-context migrate\` on this database first`,
      { cause: err },
    );
  }
}
