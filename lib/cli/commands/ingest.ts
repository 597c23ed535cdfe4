import { readFile, writeFile } from 'node:fs/promises';
import type { Database } from '../../db/database.js';
import type { BatchReport } from '../../ingest/report.js';
import { messageSize, SQS_MAX_BATCH_BYTES } from '../../queue/pack.js';
import type { DeadLetter } from '../dead-letters.js';
import { type IngestDocument, ingestJson } from '../documents.js';
import { EXIT } from '../exit-codes.js';
import { fileProblem } from '../file-problem.js';
import type { IngestTotals } from '../ingest-totals.js';
import { Interrupted } from '../interrupt.js';
import type { CliIo, CommandResult } from '../io.js';
import { requireMigrated, requireWritable } from '../preflight.js';
import { createProgress } from '../progress.js';
import { ingestSummary, renderCounters, renderDeadLetters } from '../render-ingest.js';

/**
 * The queue + event-source poller + ingest handler the command feeds. `lib/` does not start an SQS
 * emulator itself: the entry point passes one in (`local/pipeline.ts` builds it on fauxqs), which
 * keeps `lib/` free of imports from `local/`.
 */
export interface IngestPipeline {
  readonly totals: IngestTotals;
  readonly poller: { drain(options: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown> };
  /** sends message bodies in order, as a producer would; returns how many (fewer when `signal` stopped it) */
  send(bodies: readonly string[], signal?: AbortSignal): Promise<number>;
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
  /** Ctrl-C (lib/cli/interrupt.ts): stop between batches, the batch in hand finished */
  interrupt?: AbortSignal;
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
): Promise<CommandResult<IngestDocument>> {
  // A BOM at the start of the file is the editor's, not part of the first frame.
  const lines = (await readFramesFile(options.file))
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((body, i) => ({ line: i + 1, body }))
    .filter(({ body }) => body.trim() !== '');
  // SQS takes at most 256 KiB per message: such a line is reported as itself, the others still run.
  const tooLarge: DeadLetter[] = lines
    .filter(({ body }) => messageSize(body) > SQS_MAX_BATCH_BYTES)
    .map(({ line, body }) => ({
      line,
      failure: 'too_large',
      reason: `${Math.ceil(messageSize(body) / 1024).toLocaleString('en-US')} KiB, over the 256 KiB an SQS message may hold: no producer can send it`,
      messageGroupId: undefined,
      body,
    }));
  const sendable = lines.filter(({ body }) => messageSize(body) <= SQS_MAX_BATCH_BYTES);
  const bodies = sendable.map(({ body }) => body);
  // Before any frame is sent: a --rejected path that cannot be written fails now, not after the run.
  if (options.rejectedFile)
    await writeFile(options.rejectedFile, '').catch(fileProblem('--rejected', options.rejectedFile));
  await requireMigrated(db);
  await requireWritable(db, 'no frame was sent');
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
    const signal = options.interrupt;
    await pipeline.send(bodies, signal);
    await pipeline.poller.drain({ timeoutMs: 30 * 60_000, signal });
    if (signal?.aborted) {
      const { counts } = pipeline.totals;
      io.stderr.write('\n');
      throw new Interrupted(
        `ingest stopped between batches: ${delivered.toLocaleString('en-US')} of ${bodies.length.toLocaleString('en-US')} frames were handled ` +
          `(${counts.persisted.toLocaleString('en-US')} rows written, in ${pipeline.totals.batches.toLocaleString('en-US')} committed batches); the rest were not written`,
        `run the same command again to finish: a frame written twice is one row (INSERT … ON CONFLICT), so the rerun is safe`,
        { framesRead: lines.length, handled: delivered, counts: { ...counts }, batches: pipeline.totals.batches },
      );
    }
    progress.done();
    const letters = [...tooLarge, ...withLineNumbers(await pipeline.deadLetters(), sendable)].sort(
      (x, y) => (x.line ?? 0) - (y.line ?? 0),
    );
    if (options.rejectedFile)
      await writeFile(options.rejectedFile, letters.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const summary = ingestSummary(lines.length, pipeline.totals, letters);
    const text = [`frames read: ${lines.length}`, renderCounters(pipeline.totals), renderDeadLetters(letters)].join(
      '\n\n',
    );
    return { exitCode: letters.length > 0 ? EXIT.attention : EXIT.ok, result: ingestJson(summary), text };
  } finally {
    await pipeline.stop();
  }
}

/** Each dead letter with the line of the file it came from (the same body twice: the lines in order). */
function withLineNumbers(
  letters: readonly DeadLetter[],
  sent: ReadonlyArray<{ line: number; body: string }>,
): DeadLetter[] {
  const linesOf = new Map<string, number[]>();
  for (const { line, body } of sent) linesOf.set(body, [...(linesOf.get(body) ?? []), line]);
  return letters.map((letter) => ({ line: linesOf.get(letter.body)?.shift(), ...letter }));
}

async function readFramesFile(file: string): Promise<string> {
  return readFile(file, 'utf8').catch(fileProblem('the frames file', file));
}
