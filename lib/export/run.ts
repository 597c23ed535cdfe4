import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Queryable } from '../db/database.js';
import { SERVICE_NAME } from '../defaults.js';
import { type ChangedTurn, readChangedTurns, type TurnPosition } from '../report/trees.js';
import { type Micros, nowMicros } from '../time.js';
import { describeEndpoint } from './otlp/config.js';
import { type SpanOptions, turnSpans } from './otlp/spans.js';
import type { SpanSink } from './otlp/transport.js';
import { positionText, readPosition, writePosition } from './position.js';

/*
 * `subagent-context export --otlp` (docs/otlp.md, R3-10): reads turns in the tree reader's
 * `changed` order, page by page, turns each into spans, sends them in bounded batches, and after
 * each batch the collector accepted moves the position past the turns it held. A turn is always
 * sent whole (its root and every exportable row, the same ids every time), so a turn that gains a
 * settled row later is simply sent again.
 */

export interface ExportOptions {
  /** rows observed at or after / before (R3-5's filters) */
  since?: Micros;
  until?: Micros;
  task?: string;
  session?: string;
  /** export rows not settled yet as zero-length spans (default: a row is exported once settled) */
  openSpans: boolean;
  /** at most this many spans per request (a larger turn goes in several requests) */
  batchSpans: number;
  /** turns per database read */
  pageTurns: number;
  /** only turns whose newest write is at least this old: a late commit cannot land behind the position */
  settleSeconds: number;
  /** `resume`: from the stored position, moving it; `restart`: from the start, moving it; `none`: neither */
  position: 'resume' | 'restart' | 'none';
  positionKey: string;
  /** OTEL_SERVICE_NAME, else subagent-context */
  serviceName?: string;
  now?: () => Micros;
}

export interface ExportSummary {
  endpoint: string;
  turns: number;
  spans: number;
  requests: number;
  /** the stored position before and after (null: none) */
  position: { before: string | null; after: string | null; key: string | null };
}

function spanOptions(options: ExportOptions): SpanOptions {
  return {
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? SERVICE_NAME }),
    scope: { name: SERVICE_NAME },
    openSpans: options.openSpans,
  };
}

export async function runExport(
  db: Queryable,
  sink: SpanSink,
  endpoint: string,
  options: ExportOptions,
): Promise<ExportSummary> {
  const keep = options.position !== 'none';
  let position = options.position === 'resume' ? await readPosition(db, options.positionKey) : undefined;
  const before = position === undefined ? null : positionText(position);
  const changedUntil = (options.now ?? nowMicros)() - BigInt(Math.round(options.settleSeconds * 1e6));
  const make = spanOptions(options);
  const summary: ExportSummary = {
    endpoint: describeEndpoint(endpoint),
    turns: 0,
    spans: 0,
    requests: 0,
    position: { before, after: before, key: keep ? options.positionKey : null },
  };

  const send = async (spans: ReadableSpan[]) => {
    for (let i = 0; i < spans.length; i += options.batchSpans) {
      await sink.send(spans.slice(i, i + options.batchSpans));
      summary.requests++;
    }
    summary.spans += spans.length;
  };
  const accept = async (next: TurnPosition) => {
    position = next;
    if (!keep) return;
    await writePosition(db, options.positionKey, next);
    summary.position.after = positionText(next);
  };

  for (;;) {
    const page: ChangedTurn[] = await readChangedTurns(db, {
      since: options.since,
      until: options.until,
      task: options.task,
      session: options.session,
      order: 'changed',
      after: position,
      changedUntil,
      limit: options.pageTurns,
    });
    let batch: ReadableSpan[] = [];
    let batchEnd: TurnPosition | undefined;
    for (const turn of page) {
      const spans = turnSpans(turn.tree, make);
      if (spans.length > 0) summary.turns++;
      if (batch.length > 0 && batch.length + spans.length > options.batchSpans) {
        await send(batch);
        await accept(batchEnd!);
        batch = [];
      }
      batch.push(...spans);
      batchEnd = turn.position;
    }
    if (batch.length > 0) await send(batch);
    // The page's last turns may have had nothing to send (all unsettled): still past them.
    if (batchEnd !== undefined) await accept(batchEnd);
    if (page.length < options.pageTurns) break;
  }
  return summary;
}
