import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Queryable } from '../db/database.js';
import { EXPORT_DEFAULTS, SERVICE_NAME } from '../defaults.js';
import { describeEndpoint } from '../peer.js';
import {
  type ChangedTurn,
  type ListedTurn,
  listChangedTurns,
  readTurnsAt,
  type TreeFilter,
  type TurnPosition,
} from '../report/trees.js';
import { isUsageTable, USAGE_TABLE, USAGE_WRITTEN_AT, usageTableColumns } from '../store/usage-table.js';
import { formatKey, type Micros, nowMicros } from '../time.js';
import { turnDigest, turnKeyDigest } from './otlp/digest.js';
import { SCHEMA_URL, type SpanOptions, turnSpans } from './otlp/spans.js';
import { OtlpExportError, type SpanSink } from './otlp/transport.js';
import {
  comparePositions,
  movePosition,
  parsePosition,
  pointText,
  positionMoved,
  positionText,
  readPositionText,
  type SentTurn,
  type StoredPosition,
} from './position.js';
import { unreadableTurn } from './unreadable.js';

/*
 * `subagent-context export --otlp` (docs/otlp.md, R3-10, R4-8): reads turns in the tree reader's
 * `changed` order, page by page, turns each into spans, and sends those of the turns whose spans
 * differ from what the position records as sent (docs/otlp.md#change-detection), in bounded
 * batches; after each batch the collector accepted it moves the position past the turns it held
 * and records what was sent. A turn is always sent whole (its root and every exportable row, the
 * same ids every time).
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
   * a resumed run reads this far before its position: under R3-1 a row's updated_at is the
   * observation instant of its newest frame, so a frame delivered late lands up to the queue's
   * delay behind it; turns in the window whose spans changed are sent again (same ids), the
   * others not. Default: the health grace.
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

/** A turn the export could not read and went past (R4-3), named so a person can fix the row. */
export interface SkippedTurn {
  task_session_id: string;
  /** null: the rows without a turn */
  turn_id: string | null;
  /** what could not be read, e.g. `observed_at unreadable (tool call toolu_01)` */
  reason: string;
}

export interface ExportSummary {
  endpoint: string;
  /** turns sent: `new` + `re_sent` */
  turns: number;
  /** turns sent for the first time as far as the position knows */
  new: number;
  /** turns sent before and sent again because what they send changed (R4-8) */
  re_sent: number;
  /** turns read in the lookback window whose spans were as sent: not sent (R4-8) */
  unchanged: number;
  /**
   * issue 58: turns read whose subagents are all still open (none settled): nothing to send yet
   * without --open-spans; each is sent once one of them settles (a report counts them already)
   */
  held_back: number;
  spans: number;
  requests: number;
  /** spans the collector answered it rejected (partialSuccess): > 0 exits 3 (R4-8) */
  rejected_spans: number;
  /** the collector's latest partialSuccess.errorMessage (masked, terminal-safe, cut) */
  rejected_message?: string;
  /**
   * spans of a batch the collector answered 2xx but whose answer could not be read (cut at a bound,
   * not an OTLP answer): whether it accepted them is unknown, so the run stopped there with the
   * position before them, and a rerun sends them again (R4-8, issue 48); > 0 exits 3
   */
  unknown_spans: number;
  /** why that answer could not be read */
  unknown_reason?: string;
  /** turns left out because a value could not be read (R4-3) */
  skipped: SkippedTurn[];
  /**
   * values that could not be read, by column (R4-3): metrics of the rows sent, left out of their
   * spans (named by the tree reader: TreeNode's `unreadable`); `settled_at` (read as not settled)
   * and `updated_at` (the turn placed by its other rows' or its observed_at) of every turn read
   */
  unreadable: Record<string, number>;
  /** false: stopped early (keepGoing), more turns may be waiting */
  complete: boolean;
  /** what the spans leave out for the whole run and why, one sentence each (R6-7: spend not collected) */
  notes: string[];
  /** --restart: every turn was sent again from the first, changed or not (`re_sent` counts them) */
  restart: boolean;
  /** the stored position's point before and after (null: none) */
  position: { before: string | null; after: string | null; key: string | null };
}

function spanOptions(options: ExportOptions): SpanOptions {
  return {
    resource: resourceFromAttributes(
      { 'service.name': options.serviceName ?? SERVICE_NAME },
      { schemaUrl: SCHEMA_URL },
    ),
    scope: { name: SERVICE_NAME, schemaUrl: SCHEMA_URL },
    openSpans: options.openSpans,
  };
}

/**
 * The page's trees; a page that cannot be read is read turn by turn, and a turn that still fails is
 * skipped. A turn none of whose rows has a readable observed_at has no tree (the reader leaves such
 * rows out, R4-3): it is skipped and named too, never dropped in silence.
 */
async function readPage(
  db: Queryable,
  keys: readonly ListedTurn[],
  filter: TreeFilter,
  skipped: SkippedTurn[],
): Promise<ChangedTurn[]> {
  const skip = async (key: TurnPosition, reason?: string) =>
    skipped.push({
      task_session_id: key.task_session_id,
      turn_id: key.turn_key === '' ? null : key.turn_key,
      reason: reason ?? (await unreadableTurn(db, key)) ?? 'observed_at unreadable',
    });
  try {
    const turns = await readTurnsAt(db, keys, filter);
    const read = new Set(turns.map((t) => turnKeyDigest(t.position.task_session_id, t.position.turn_key)));
    for (const key of keys)
      if (key.unreadable.observed_at > 0 && !read.has(turnKeyDigest(key.task_session_id, key.turn_key)))
        await skip(key);
    return turns;
  } catch (pageError) {
    const turns: ChangedTurn[] = [];
    for (const key of keys) {
      try {
        const read = await readTurnsAt(db, [key], filter);
        if (read.length === 0 && key.unreadable.observed_at > 0) await skip(key);
        turns.push(...read);
      } catch (turnError) {
        // Only an unreadable value is skipped; anything else (a lost connection) stops the run.
        const reason = await unreadableTurn(db, key);
        if (reason === undefined) throw turnError === undefined ? pageError : turnError;
        await skip(key, reason);
      }
    }
    return turns;
  }
}

/** R6-2, R6-7: the store has no usage table, so no span carries run usage (not a usage of 0). */
export const SPEND_NOT_COLLECTED = `spend not collected: the store has no ${USAGE_TABLE} table, so no span carries run usage (\`subagent-context migrate\` creates it, \`subagent-context spend\` fills it)`;

/** R6-7: a usage table from before its write clock: usage written later is seen only in the lookback. */
export const USAGE_CHANGES_NOT_SEEN = `usage written after its span was sent is sent again only within the lookback: ${USAGE_TABLE} has no ${USAGE_WRITTEN_AT} column yet (\`subagent-context migrate\` adds it)`;

export async function runExport(
  db: Queryable,
  sink: SpanSink,
  endpoint: string,
  options: ExportOptions,
): Promise<ExportSummary> {
  const keep = options.position !== 'none';
  // What the key holds now: a move compares with it (compare-and-set, movePosition).
  let stored = keep ? await readPositionText(db, options.positionKey) : null;
  const previous = keep ? parsePosition(options.positionKey, stored) : undefined;
  const lookback = BigInt(Math.round((options.lookbackSeconds ?? EXPORT_DEFAULTS.lookbackSeconds) * 1e6));
  // resume: from the stored point, with its record; restart: from the start, an empty record.
  const state: {
    position: TurnPosition | undefined;
    sent: Map<string, SentTurn>;
    rejected: StoredPosition['rejected'];
  } =
    options.position === 'resume' && previous
      ? { position: previous.position, sent: new Map(previous.sent), rejected: previous.rejected }
      : { position: undefined, sent: new Map(), rejected: previous?.rejected };
  // the point the key held, also on a restart (issue 51: a restart moves it from there, it was not absent)
  const before = previous === undefined ? null : pointText(previous.position);
  const now = options.now ?? nowMicros;
  const changedUntil = now() - BigInt(Math.round(options.settleSeconds * 1e6));
  const make = spanOptions(options);
  const summary: ExportSummary = {
    endpoint: describeEndpoint(endpoint),
    turns: 0,
    new: 0,
    re_sent: 0,
    unchanged: 0,
    held_back: 0,
    spans: 0,
    requests: 0,
    rejected_spans: 0,
    unknown_spans: 0,
    skipped: [],
    unreadable: {},
    complete: true,
    notes: [],
    restart: options.position === 'restart',
    position: { before, after: before, key: keep ? options.positionKey : null },
  };
  let moved = false;

  /** Sends the spans in requests; false: an answer's outcome is unknown (R4-8), and the run stops before them. */
  const send = async (spans: ReadableSpan[]): Promise<boolean> => {
    for (let i = 0; i < spans.length; i += options.batchSpans) {
      let result: Awaited<ReturnType<SpanSink['send']>>;
      const part = spans.slice(i, i + options.batchSpans);
      try {
        result = await sink.send(part);
      } catch (err) {
        throw stoppedAt(err);
      }
      summary.requests++;
      if (result.unknown !== undefined) {
        summary.unknown_spans += part.length;
        summary.unknown_reason = result.unknown;
        summary.complete = false;
        return false;
      }
      if (result.rejectedSpans > 0) {
        // Moved and recorded (docs/otlp.md#partial-success): OTLP forbids retrying a partial success.
        summary.rejected_spans += result.rejectedSpans;
        if (result.errorMessage !== undefined) summary.rejected_message = result.errorMessage;
        state.rejected = {
          spans: (state.rejected?.spans ?? 0) + result.rejectedSpans,
          at: formatKey(now()),
          ...(result.errorMessage === undefined ? {} : { message: result.errorMessage }),
        };
      }
    }
    summary.spans += spans.length;
    return true;
  };
  /**
   * A failed request's message, saying where the position stands now (R4-9): retryable or not, a
   * run without a position never says it resumes from one (issue 48).
   */
  const stoppedAt = (err: unknown): unknown => {
    if (!(err instanceof OtlpExportError)) return err;
    const again = err.retryable ? 'run again later' : 'fix the cause and run again';
    const where = !keep
      ? `No position is kept by this run (--no-position or a one-off export): ${err.retryable ? 'run it again later' : 'run it again once fixed'}`
      : moved
        ? `Earlier batches of this run were accepted: the position stands after the last of them (${summary.position.after}); ${again} to resume from there`
        : err.retryable
          ? 'Nothing was lost: the export position was not moved; run again later to resume from it'
          : 'Nothing was lost: the export position was not moved';
    return new OtlpExportError(`${err.message}. ${where}`, err.status, err.retryable, { cause: err });
  };
  const accept = async (next: TurnPosition) => {
    // The point only moves forward (a lookback re-reads turns behind it).
    if (state.position === undefined || comparePositions(next, state.position) > 0) state.position = next;
    if (!keep) return;
    // The record keeps the turns the next run's lookback will read again.
    const windowStart = state.position.changed - lookback;
    for (const [turn, sent] of state.sent) if (sent.changed <= windowStart) state.sent.delete(turn);
    const text = positionText({
      position: state.position,
      sent: state.sent,
      ...(state.rejected ? { rejected: state.rejected } : {}),
    });
    summary.position.after = pointText(state.position);
    if (text === stored) return; // idle: nothing to write (R4-8)
    if (!(await movePosition(db, options.positionKey, stored, text)))
      throw positionMoved(options.positionKey, summary.turns);
    stored = text;
    moved = true;
  };

  // R6-7: run usage where the store has our usage table; said once otherwise, never sent as 0.
  const usageColumns = await usageTableColumns(db);
  const withUsage = isUsageTable(usageColumns);
  const usageChanges = withUsage && usageColumns.has(USAGE_WRITTEN_AT);
  if (!withUsage) summary.notes.push(SPEND_NOT_COLLECTED);
  else if (!usageChanges) summary.notes.push(USAGE_CHANGES_NOT_SEEN);
  const filter: TreeFilter = {
    since: options.since,
    until: options.until,
    task: options.task,
    session: options.session,
    withUsage,
    usageChanges,
  };
  // Keys first (a cheap GROUP BY, no row bodies), many pages' worth at once; then each page's
  // rows by key, so every row is read once per export.
  const listTurns = options.pageTurns * LIST_PAGES;
  // Where the next listing starts: the lookback's start first, then after the last key listed (the
  // point itself only moves forward, and a window of more than one listing lies behind it). With no
  // lookback, right after the point by its whole key (changed, session, turn): the turns that share
  // its `changed` instant and come after it are not yet sent (issue 48: `changed > point` lost them).
  let cursor: TurnPosition | undefined;
  for (;;) {
    const from =
      cursor === undefined && state.position !== undefined
        ? lookback > 0n
          ? { changedAfter: state.position.changed - lookback }
          : { after: state.position }
        : { after: cursor };
    const keys = await listChangedTurns(db, { ...filter, ...from, changedUntil, limit: listTurns });
    // R4-3: the listed turns' times that could not be read (trees.ts ListedTurn), counted per turn sent.
    const unreadableTimes = new Map(
      keys
        .filter((k) => Object.values(k.unreadable).some((n) => n > 0))
        .map((k) => [turnKeyDigest(k.task_session_id, k.turn_key), k.unreadable]),
    );
    for (let at = 0; at < keys.length; at += options.pageTurns) {
      if (options.keepGoing && !options.keepGoing()) {
        summary.complete = false;
        return summary;
      }
      const page = await readPage(db, keys.slice(at, at + options.pageTurns), filter, summary.skipped);
      let batch: ReadableSpan[] = [];
      let batchEnd: TurnPosition | undefined;
      let pending: [string, SentTurn][] = [];
      /** false: the batch's outcome is unknown; nothing of it is recorded and the position stays before it */
      const flush = async (): Promise<boolean> => {
        if (batch.length > 0 && !(await send(batch))) return false;
        for (const [turn, sent] of pending) state.sent.set(turn, sent);
        batch = [];
        pending = [];
        return true;
      };
      for (const turn of page) {
        const unreadable = new Map<string, number>();
        const spans = turnSpans(turn.tree, { ...make, unreadable });
        const digest = spans.length === 0 ? '' : turnDigest(spans);
        const turnKey = turnKeyDigest(turn.position.task_session_id, turn.position.turn_key);
        // Counted for every turn read, sent or not: an unsettled-looking turn is otherwise never seen.
        for (const [column, n] of Object.entries(unreadableTimes.get(turnKey) ?? {}))
          if (n > 0) summary.unreadable[column] = (summary.unreadable[column] ?? 0) + n;
        // issue 58: a turn whose subagents are all open has no span yet: said, never silent
        if (spans.length === 0) summary.held_back++;
        const known = state.sent.get(turnKey);
        const entry: SentTurn = { digest, changed: turn.position.changed };
        if (known !== undefined && known.digest === digest) {
          // As sent: nothing to send (R4-8). Its entry follows the turn's newest change.
          if (digest !== '') summary.unchanged++;
          state.sent.set(turnKey, entry);
          continue;
        }
        if (spans.length === 0) {
          pending.push([turnKey, entry]);
          continue;
        }
        // Sent before: recorded with spans, or (no record, e.g. a restart) at or behind the old point.
        const sentBefore =
          known !== undefined
            ? known.digest !== ''
            : previous !== undefined && comparePositions(turn.position, previous.position) <= 0;
        if (sentBefore) summary.re_sent++;
        else summary.new++;
        summary.turns++;
        for (const [column, n] of unreadable) summary.unreadable[column] = (summary.unreadable[column] ?? 0) + n;
        if (batch.length > 0 && batch.length + spans.length > options.batchSpans) {
          if (!(await flush())) return summary;
          await accept(batchEnd!);
        }
        batch.push(...spans);
        pending.push([turnKey, entry]);
        batchEnd = turn.position;
      }
      if (!(await flush())) return summary;
      // The page's last turns may have had nothing to send (unchanged, unsettled, gone, skipped): still past them.
      const pageEnd = keys[Math.min(at + options.pageTurns, keys.length) - 1]!;
      await accept(pageEnd);
    }
    if (keys.length < listTurns) break;
    cursor = keys[keys.length - 1];
  }
  return summary;
}
