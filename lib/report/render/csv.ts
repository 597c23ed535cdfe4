import { stringify } from 'csv-stringify/sync';
import type { Figures, Group, ReportDocument } from '../document.js';

/**
 * `report --csv` (docs/report.md#csv): completeness as `#` comment lines on top (R3-8), then a
 * header and one row per group; without --by, one row for the totals (`by` = `totals`). A NULL
 * figure is an empty cell, never 0 (R3-6). Lists are one cell each: `model=n;…`, `k:turns …`.
 * Cells that a spreadsheet would read as a formula are escaped.
 */
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
    f.models.counts.map((m) => `${m.model}=${m.subagents}`).join(';'),
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
  ];
}

const groupRow = (g: Group): Cell[] => [g.by, g.key, g.title, g.lower_bound, g.started_at, ...figureCells(g)];

/** R3-8 as comment lines: what a spreadsheet user needs to read the rows honestly. */
export function completenessComments(doc: ReportDocument): string[] {
  const c = doc.completeness;
  const f = doc.filters;
  const lines = [
    `subagent-context report, version ${doc.version}, generated ${doc.generated_at}`,
    `filters: by=${f.by ?? '-'} since=${f.since ?? '-'} until=${f.until ?? '-'} task=${f.task ?? '-'} session=${f.session ?? '-'} sort=${f.sort} limit=${f.limit ?? '-'}`,
    `capture_since: ${c.capture_since ?? 'null (not activated)'}`,
    `backfill_through: ${c.backfill_through ?? 'null'}`,
    `verified_through: ${c.verified_through ?? 'null (the scheduled check has not run)'}`,
    `shortfall: ${c.shortfall.checked ? `${c.shortfall.open ? 'OPEN' : 'none'} (${c.shortfall.count})` : 'not checked'}`,
    ...c.missing.map((m) => `missing: ${m.task_session_id} ${m.tool_call_id}`),
    `lower_bound_sessions: ${c.lower_bound_sessions}`,
    ...c.notes.map((n) => `note: ${n}`),
  ];
  // One physical line each: a newline inside a value would end the comment.
  return lines.map((l) => `# ${l.replace(/[\r\n]+/g, ' ')}`);
}

export function renderReportCsv(doc: ReportDocument): string {
  const rows: Cell[][] =
    doc.filters.by === null
      ? [['totals', null, null, null, null, ...figureCells(doc.totals)]]
      : doc.groups.map(groupRow);
  const body = stringify(rows, {
    header: true,
    columns: [...CSV_COLUMNS],
    cast: { boolean: (value) => (value ? 'true' : 'false') },
    // A task title or a model is the host's text: a cell starting = + - @ is not run as a formula
    // by a spreadsheet (the library prefixes it with ').
    escape_formulas: true,
  });
  return `${completenessComments(doc).join('\n')}\n${body}`;
}
