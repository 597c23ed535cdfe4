import { writeFileSync } from 'node:fs';
import type { Queryable } from '../../db/database.js';
import { PAGE_DEFAULTS } from '../../defaults.js';
import { buildReport, type ReportOptions } from '../../report/build.js';
import { GROUP_BY, type GroupBy, type ReportDocument, SORT_BY, type SortBy } from '../../report/document.js';
import { renderReportCsv } from '../../report/render/csv.js';
import { renderReportTable } from '../../report/render/table.js';
import { formatRfc3339 } from '../../time.js';
import { EXIT } from '../exit-codes.js';
import { countFlag, instantFlag } from '../flags.js';
import type { CommandResult } from '../io.js';
import { requireHostStore } from '../preflight.js';
import { UsageError } from '../usage-error.js';

/** The flags `report` reads, as parseArgs gives them. */
export interface ReportFlags {
  by?: string;
  since?: string;
  until?: string;
  task?: string;
  session?: string;
  limit?: string;
  sort?: string;
  trees?: string;
  json?: boolean;
  csv?: boolean;
  html?: string;
}

/** What a renderer may know besides the document: where its text goes. */
export interface RenderContext {
  /** colour is wanted (a TTY without NO_COLOR) */
  color: boolean;
  /** the terminal's width (COLUMNS, or the TTY's), when known: the table fits it */
  width?: number;
}

/**
 * The text formats, one renderer each; every one only consumes the document (docs/report.md).
 * A new format is one more entry here and one flag in `outputFormat`. `--json` is the document
 * itself: main.ts writes it through the CLI's one serialiser (lib/json-document.ts), in pieces (R4-12).
 */
export const REPORT_FORMATS = {
  table: (doc: ReportDocument, ctx: RenderContext) => renderReportTable(doc, { color: ctx.color, width: ctx.width }),
  csv: (doc: ReportDocument) => renderReportCsv(doc),
} as const satisfies Record<string, (doc: ReportDocument, ctx: RenderContext) => string>;

export type ReportFormat = keyof typeof REPORT_FORMATS | 'json';

export interface ReportRequest {
  options: ReportOptions;
  format: ReportFormat;
  /** `--html FILE`: also write the page there (docs/page.md); the document then carries the page's data */
  html?: string;
}

function oneOf<T extends string>(flag: string, raw: string | undefined, allowed: readonly T[]): T | undefined {
  if (raw === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(raw))
    throw new UsageError(`--${flag} must be one of ${allowed.join(', ')} (got "${raw}")`);
  return raw as T;
}

function outputFormat(flags: ReportFlags): ReportFormat {
  const chosen = (['json', 'csv'] as const).filter((f) => flags[f]);
  if (chosen.length > 1) throw new UsageError(`--${chosen.join(' and --')} exclude each other: pick one output`);
  return chosen[0] ?? 'table';
}

/** Flags → the report's options; a bad flag is a usage error naming it (exit 2; docs/report.md#bad-input). */
export function parseReportFlags(flags: ReportFlags): ReportRequest {
  const by = oneOf<GroupBy>('by', flags.by, GROUP_BY);
  const sort = oneOf<SortBy>('sort', flags.sort, SORT_BY);
  const since = instantFlag('--since', flags.since);
  const until = instantFlag('--until', flags.until);
  if (since !== undefined && until !== undefined && since > until) {
    throw new UsageError(
      `--since ${formatRfc3339(since)} is after --until ${formatRfc3339(until)}: the window [since, until) would be empty; swap them`,
    );
  }
  const limit = countFlag('--limit', flags.limit, 'groups');
  if (limit !== undefined && by === undefined)
    throw new UsageError('--limit limits the groups: give --by task|session|turn|type|model|day');
  if (sort !== undefined && by === undefined)
    throw new UsageError('--sort orders the groups: give --by task|session|turn|type|model|day');
  const trees = countFlag('--trees', flags.trees, 'turns');
  for (const flag of ['task', 'session'] as const) {
    if (flags[flag] === '') throw new UsageError(`--${flag} needs an id (got an empty value)`);
  }
  if (flags.html === '') throw new UsageError('--html needs a file to write the page to (got an empty value)');
  const page = flags.html !== undefined;
  return {
    options: {
      by,
      since,
      until,
      task: flags.task,
      session: flags.session,
      limit,
      // days read in day order (issue 34); every other grouping by its largest groups first
      sort: sort ?? (by === 'day' ? 'key' : undefined),
      // the page (R3-9) renders the same document, with its series, histogram and trees filled
      trees: trees ?? (page ? PAGE_DEFAULTS.trees : undefined),
      ...(page ? { pageData: true } : {}),
    },
    format: outputFormat(flags),
    ...(page ? { html: flags.html } : {}),
  };
}

/** `subagent-context report`: read-only (R3-5, R3-8); a store it cannot read throws (exit 1). */
export async function reportCommand(
  db: Queryable,
  request: ReportRequest,
  ctx: RenderContext & { graceSeconds?: number },
): Promise<CommandResult<ReportDocument>> {
  // issue 51: a store of another shape is named before any report statement meets a missing column
  await requireHostStore(db);
  const doc = await buildReport(db, { ...request.options, graceSeconds: ctx.graceSeconds });
  // --json: main.ts writes the document itself, in pieces (R4-12: one string cannot hold 500,000
  // groups), so its text is not made here
  const format = request.format;
  const text = () => (format === 'json' ? '' : REPORT_FORMATS[format](doc, ctx));
  if (request.html === undefined) return { exitCode: EXIT.ok, result: doc, text: text(), data: true };
  // R4-11: the page's renderer loads ECharts; only --html needs it
  const { renderHtml } = await import('../../report/render/html.js');
  const page = renderHtml(doc, { trees: request.options.trees, tasks: request.options.limit });
  try {
    writeFileSync(request.html, page);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new Error(
      `report --html: cannot write the page to ${request.html} (${code}): give a path in a folder that exists and that you may write to`,
    );
  }
  // --json still prints the document the page was rendered from; otherwise one line says where the page is
  const written =
    request.format === 'table'
      ? `wrote the page to ${request.html} (${Buffer.byteLength(page).toLocaleString('en-US')} bytes)`
      : text();
  return { exitCode: EXIT.ok, result: doc, text: written, data: true };
}
