import * as z from 'zod/mini';
import type { ExportSummary } from '../export/run.js';
import { COUNTERS, type CounterName } from '../ingest/report.js';
import type { IngestSummary } from './render-ingest.js';

/*
 * The --json documents of `ingest` and `export` (issue 51): one naming rule for every command but
 * `report` — keys in camelCase (README "Reading the output"); `report` keeps its snake_case
 * document (schema/report.v1.schema.json). Values (counter names in reasons, column names as
 * keys of `unreadable`) are data and stay as they are. Each has its JSON Schema in schema/
 * (scripts/gen-json-schema.ts).
 */

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const counts = z.object(
  Object.fromEntries(COUNTERS.map((c) => [camel(c), z.number()])) as Record<string, z.ZodMiniNumber>,
);

export const ingestDocument = z.object({
  frames: z.number(),
  counts,
  batches: z.number(),
  roundTrips: z.number(),
  lag: z.object({
    samples: z.number(),
    p50: z.nullable(z.number()),
    p90: z.nullable(z.number()),
    p99: z.nullable(z.number()),
    max: z.nullable(z.number()),
  }),
  deadLetters: z.array(
    z.object({ failure: z.string(), reason: z.string(), count: z.number(), lines: z.optional(z.array(z.number())) }),
  ),
});
export type IngestDocument = z.infer<typeof ingestDocument>;

export function ingestJson(summary: IngestSummary): IngestDocument {
  const named = Object.fromEntries(
    Object.entries(summary.counts).map(([name, n]) => [camel(name as CounterName), n]),
  ) as IngestDocument['counts'];
  return { ...summary, counts: named };
}

/** A position's point as JSON (not JSON text inside the document). */
const point = z.nullable(z.object({ changed: z.string(), taskSessionId: z.string(), turnKey: z.string() }));

export const exportDocument = z.object({
  endpoint: z.string(),
  turns: z.number(),
  new: z.number(),
  reSent: z.number(),
  unchanged: z.number(),
  /** issue 58: turns whose subagents are all still open: held back until one settles (or --open-spans) */
  heldBack: z.number(),
  spans: z.number(),
  requests: z.number(),
  rejectedSpans: z.number(),
  rejectedMessage: z.optional(z.string()),
  /** R4-8: spans whose batch got an answer that could not be read (never taken as accepted) */
  unknownSpans: z.number(),
  unknownReason: z.optional(z.string()),
  skipped: z.array(z.object({ taskSessionId: z.string(), turnId: z.nullable(z.string()), reason: z.string() })),
  /** by column name (data: as the table spells it) */
  unreadable: z.record(z.string(), z.number()),
  complete: z.boolean(),
  /** R6-7: what no span carries in this run and why, one sentence each (e.g. spend not collected) */
  notes: z.array(z.string()),
  restart: z.boolean(),
  position: z.object({ before: point, after: point, key: z.nullable(z.string()) }),
});
export type ExportDocument = z.infer<typeof exportDocument>;

function pointJson(text: string | null): z.infer<typeof point> {
  if (text === null) return null;
  const p = JSON.parse(text) as { changed: string; task_session_id: string; turn_key: string };
  return { changed: p.changed, taskSessionId: p.task_session_id, turnKey: p.turn_key };
}

export function exportJson(s: ExportSummary): ExportDocument {
  return {
    endpoint: s.endpoint,
    turns: s.turns,
    new: s.new,
    reSent: s.re_sent,
    unchanged: s.unchanged,
    heldBack: s.held_back,
    spans: s.spans,
    requests: s.requests,
    rejectedSpans: s.rejected_spans,
    ...(s.rejected_message === undefined ? {} : { rejectedMessage: s.rejected_message }),
    unknownSpans: s.unknown_spans,
    ...(s.unknown_reason === undefined ? {} : { unknownReason: s.unknown_reason }),
    skipped: s.skipped.map((k) => ({ taskSessionId: k.task_session_id, turnId: k.turn_id, reason: k.reason })),
    unreadable: s.unreadable,
    complete: s.complete,
    notes: s.notes,
    restart: s.restart,
    position: { before: pointJson(s.position.before), after: pointJson(s.position.after), key: s.position.key },
  };
}

/** The JSON Schema of each command's --json document, by file name in schema/. */
export function commandJsonSchemas(): Record<string, Record<string, unknown>> {
  const schema = (doc: z.ZodMiniType) =>
    z.toJSONSchema(doc, { io: 'output', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { 'ingest.v1.schema.json': schema(ingestDocument), 'export.v1.schema.json': schema(exportDocument) };
}
