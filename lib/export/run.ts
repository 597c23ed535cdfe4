import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Queryable } from '../db/database.js';
import { EXPORT_DEFAULTS, SERVICE_NAME } from '../defaults.js';
import { listChangedTurns, readTurnsAt, type TreeFilter, type TurnPosition } from '../report/trees.js';
import { type Micros, nowMicros } from '../time.js';
import { describeEndpoint } from './otlp/config.js';
import { type SpanOptions, turnSpans } from './otlp/spans.js';
import type { SpanSink } from './otlp/transport.js';
import { movePosition, parsePosition, positionMoved, positionText, readPositionText } from './position.js';

/*
 * `subagent-context export --otlp` (docs/otlp.md, R3-10): reads turns in the tree reader's
 * `changed` order, page by page, turns each into spans, sends them in bounded batches, and after
 * each batch the collector accepted moves the position past the turns it held. A turn is always
 * sent whole (its root and every exportable row, the same ids every time), so a turn that gains a
 * settled row later is simply sent again.
 */

/** Pages of turn keys one key listing reads ahead. */
const LIST_PAGES = 20;

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
  /**
   * a resumed run starts this far before its position: under R3-1 a row's updated_at is the
   * observation instant of its newest frame, so a frame delivered late lands up to the queue's
   * delay behind it; turns in the window are sent again (same ids). Default: the health grace.
   */
  lookbackSeconds?: number;
  /** `resume`: from the stored position, moving it; `restart`: from the start, moving it; `none`: neither */
  position: 'resume' | 'restart' | 'none';
  positionKey: string;
  /** OTEL_SERVICE_NAME, else subagent-context */
  serviceName?: string;
  now?: () => Micros;
  /** checked before each page: false stops the run there (its position is already stored) */
  keepGoing?: () => boolean;
}

export interface ExportSummary {
  endpoint: string;
  turns: number;
  spans: number;
  requests: number;
  /** false: stopped early (keepGoing), more turns may be waiting */
  complete: boolean;
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
  // What the key holds now: a move compares with it (compare-and-set, movePosition).
  let stored = keep ? await readPositionText(db, options.positionKey) : null;
  let position = options.position === 'resume' ? parsePosition(options.positionKey, stored) : undefined;
  const before = position === undefined ? null : positionText(position);
  const changedUntil = (options.now ?? nowMicros)() - BigInt(Math.round(options.settleSeconds * 1e6));
  const make = spanOptions(options);
  const summary: ExportSummary = {
    endpoint: describeEndpoint(endpoint),
    turns: 0,
    spans: 0,
    requests: 0,
    complete: true,
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
    const text = positionText(next);
    if (!(await movePosition(db, options.positionKey, stored, text)))
      throw positionMoved(options.positionKey, summary.turns);
    stored = text;
    summary.position.after = text;
  };

  const filter: TreeFilter = {
    since: options.since,
    until: options.until,
    task: options.task,
    session: options.session,
  };
  // Keys first (a cheap GROUP BY, no row bodies), many pages' worth at once; then each page's
  // rows by key, so every row is read once per export.
  const listTurns = options.pageTurns * LIST_PAGES;
  const lookback = BigInt(Math.round((options.lookbackSeconds ?? EXPORT_DEFAULTS.lookbackSeconds) * 1e6));
  let first = true;
  for (;;) {
    const from = first && position !== undefined ? { changedAfter: position.changed - lookback } : { after: position };
    first = false;
    const keys = await listChangedTurns(db, { ...filter, ...from, changedUntil, limit: listTurns });
    for (let at = 0; at < keys.length; at += options.pageTurns) {
      if (options.keepGoing && !options.keepGoing()) {
        summary.complete = false;
        return summary;
      }
      const page = await readTurnsAt(db, keys.slice(at, at + options.pageTurns), filter);
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
      // The page's last turns may have had nothing to send (all unsettled, or gone): still past them.
      const pageEnd = keys[Math.min(at + options.pageTurns, keys.length) - 1]!;
      await accept(pageEnd);
    }
    if (keys.length < listTurns) break;
  }
  return summary;
}
