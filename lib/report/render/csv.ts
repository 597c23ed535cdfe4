import { stringify } from 'csv-stringify/sync';
import { type Figures, type Group, type ReportDocument, SPEND_NOT_COLLECTED } from '../document.js';
import { escapedText, fanOutCostClosing, fanOutCostGap, keyText } from './labels.js';

/**
 * `report --csv` (docs/report.md#csv, R4-6): one table a spreadsheet and a CSV reader read the same
 * way. Completeness first (R3-8), one record of one cell per line (`# capture_since: …`), written
 * like every other cell: quoted, so a comma, a quote or a line break in a host id stays inside it,
 * and starting with `#`, so no spreadsheet runs it as a formula. Then a header and one row per group;
 * without --by, one row for the totals (`by` = `totals`). A NULL figure is an empty cell, never 0
 * (R3-6); a NULL key is `(not reported)`, a key '' is `(empty)`, and a key or title that starts with
 * `'` or a formula character, or is spelled like a label, gets a leading `'` (labels.ts keyText,
 * escapedText: drop one leading `'` to read it back). `models` is a JSON array
 * (`[{"model":"m=5;fake=999","subagents":2}]`: any model name reads back exactly); `fan_out` is
 * `k:turns …` (numbers only). Nothing else is changed (R4-1). No trailing empty record: the text ends with the last row.
 */
/** R6-5: the spend figures in the document's order. */
const SPEND_FIGURES = Object.keys(SPEND_NOT_COLLECTED) as (keyof typeof SPEND_NOT_COLLECTED)[];

export const CSV_COLUMNS = [
  'by',
  'key',
  'title',
  'lower_bound',
  'started_at',
  'subagents',
  'top_level',
  'nested',
  'async',
  'live',
  'backfill',
  'settled',
  'failed',
  'tokens_sum',
  'tokens_reported',
  'tool_uses_sum',
  'tool_uses_reported',
  'duration_reported',
  'duration_p50',
  'duration_p95',
  'duration_max',
  'models',
  'models_unreported',
  'fan_out',
  'executions',
  'unknown_execution',
  'turns',
  'sessions',
  'contexts',
  'cost_subcents',
  'estimated_cost_subcents',
  'cost_per_context_subcents',
  'first_observed_at',
  'last_observed_at',
  // added after the first columns (R4-7): a reader by position keeps reading the ones before
  'orphan_rows',
  // R5-1, R5-2, R5-4 (added at the end, for the same reason)
  'unpriced_events',
  'cost_lower_bound',
  'measured_cost_subcents',
  'list_priced_cost_subcents',
  'tokens_p50',
  'tokens_p95',
  'tokens_max',
  // R6-5 (added at the end): the spend object's figures, each `spend_<figure>`
  ...SPEND_FIGURES.map((f) => `spend_${f}` as const),
  // R6-9 (added at the end, for the same reason): the estimated part's own unpriced events
  'estimated_unpriced_events',
  'estimated_cost_lower_bound',
] as const;

type Cell = string | number | boolean | null;

function figureCells(f: Figures): Cell[] {
  return [
    f.subagents,
    f.top_level,
    f.nested,
    f.async,
    f.live,
    f.backfill,
    f.settled,
    f.failed,
    f.tokens.sum,
    f.tokens.reported,
    f.tool_uses.sum,
    f.tool_uses.reported,
    f.duration_ms.reported,
    f.duration_ms.p50,
    f.duration_ms.p95,
    f.duration_ms.max,
    JSON.stringify(f.models.counts.map((m) => ({ model: m.model, subagents: m.subagents }))),
    f.models.unreported,
    f.fan_out.map((b) => `${b.top_level}:${b.turns}`).join(' '),
    f.executions,
    f.unknown_execution,
    f.turns,
    f.sessions,
    f.contexts,
    f.cost_subcents,
    f.estimated_cost_subcents,
    f.cost_per_context_subcents,
    f.first_observed_at,
    f.last_observed_at,
    f.orphan_rows,
    f.unpriced_events,
    f.cost_lower_bound,
    f.measured_cost_subcents,
    f.list_priced_cost_subcents,
    f.tokens.p50,
    f.tokens.p95,
    f.tokens.max,
    ...SPEND_FIGURES.map((name) => f.spend[name]),
    f.estimated_unpriced_events,
    f.estimated_cost_lower_bound,
  ];
}

// R4-6: the key and the title are the host's text in a row (the other cells are numbers, instants,
// our words and JSON): one rule escapes both (labels.ts), so each reads back exactly
const groupRow = (g: Group): Cell[] => [
  g.by,
  keyText(g.key),
  g.title === null ? null : escapedText(g.title),
  g.lower_bound,
  g.started_at,
  ...figureCells(g),
];

/** R3-8 as comment lines (`# …`), one per fact: what a spreadsheet user needs to read the rows honestly. */
export function completenessComments(doc: ReportDocument): string[] {
  const c = doc.completeness;
  const f = doc.filters;
  const lines = [
    `subagent-context report, version ${doc.version}, generated ${doc.generated_at}`,
    `filters: by=${f.by ?? '-'} since=${f.since ?? '-'} until=${f.until ?? '-'} task=${f.task ?? '-'} session=${f.session ?? '-'} sort=${f.sort} limit=${f.limit ?? '-'}`,
    `capture_since: ${c.capture_since ?? 'null (not activated)'}`,
    `backfill_through: ${c.backfill_through ?? 'null'}`,
    `verified_through: ${c.verified_through ?? 'null (no readable checkpoint: see the notes)'}`,
    `shortfall: ${c.shortfall.checked ? `${c.shortfall.open ? 'OPEN' : 'none'} (${c.shortfall.count})` : 'not checked'}`,
    ...c.missing.map((m) => `missing: ${JSON.stringify([m.task_session_id, m.tool_call_id])}`),
    `unreadable: ${JSON.stringify(c.unreadable)}`,
    `lower_bound_sessions: ${c.lower_bound_sessions}`,
    `unpriced_events: ${c.unpriced_events ?? 'null (not known: the ledger does not record which events were priced)'}`,
    ...fanOutCostComments(doc),
    ...c.notes.map((n) => `note: ${n}`),
  ];
  return lines.map((l) => `# ${l}`);
}

/**
 * R5-3: the fan_out_cost section as comment records, like the completeness (docs/report.md#csv):
 * one per bucket, its object as JSON (`fan_out_cost: {"fan_out":"0","turns":12,…}`), then the
 * events with no turn (`fan_out_cost unattributed: {…}`), so the one table stays one table and
 * every value reads back exactly; `fan_out_cost: null (why)` when the document has none.
 */
function fanOutCostComments(doc: ReportDocument): string[] {
  const fc = doc.fan_out_cost;
  if (fc === null) return [`fan_out_cost: null (${fanOutCostGap(doc.completeness.notes)})`];
  const { buckets, ...unattributed } = fc;
  return [
    ...buckets.map((b) => `fan_out_cost: ${JSON.stringify(b)}`),
    `fan_out_cost unattributed: ${JSON.stringify(unattributed)}`,
    // R6-10: the line that closes the sum, in dollars by the one money rule (R6-11)
    `fan_out_cost with the total: ${fanOutCostClosing(doc)}`,
  ];
}

const STRINGIFY = {
  cast: { boolean: (value: boolean) => (value ? 'true' : 'false') },
  // no escape_formulas: it prefixes ' to `=1+1` but not to `'=1+1`, so both read `'=1+1`; the
  // host's cells are escaped by labels.ts's one rule instead
} as const;

export function renderReportCsv(doc: ReportDocument): string {
  const rows: Cell[][] =
    doc.filters.by === null
      ? [['totals', null, null, null, null, ...figureCells(doc.totals)]]
      : doc.groups.map(groupRow);
  // every comment is quoted, so each reads as one cell whatever it holds (R4-6)
  const comments = stringify(
    completenessComments(doc).map((line) => [line]),
    { ...STRINGIFY, quoted: true },
  );
  const body = stringify(rows, { ...STRINGIFY, header: true, columns: [...CSV_COLUMNS] });
  // the CLI ends the output with a newline: a record delimiter here would make an empty last record
  const text = `${comments}${body}`;
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}
