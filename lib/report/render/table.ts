import { type Cell, renderFacts, renderTable, styled } from '../../cli/table.js';
import { terminalSafe } from '../../terminal-text.js';
import type { Figures, Group, ReportDocument } from '../document.js';
import { EMPTY_KEY_LABEL, NOT_REPORTED_LABEL } from './labels.js';

/**
 * The terminal table (docs/report.md#the-table): completeness first (R3-8), then the totals, then
 * one line per group. It only reads the document. Numbers carry thousands separators; a NULL
 * figure shows as `-`, never 0 (R3-6). Colour only when asked for (a TTY without NO_COLOR). Host
 * text (ids, titles, models, the notes that quote a value) is printed through `terminalSafe`
 * (R4-2): the cells by renderTable, the rest here; it is never redacted (R4-1). Costs name their
 * unit, the ledger's subcents (1 USD = 10,000 subcents).
 */
export interface TableOptions {
  color: boolean;
  /** the terminal's width, when known: the groups table fits it (lib/cli/table.ts, issue 51) */
  width?: number;
}

/** Colour is for a terminal: never in a pipe or a file, never with NO_COLOR set (no-color.org). */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

const n = (value: number | null): string | null => (value === null ? null : value.toLocaleString('en-US'));

/** 1 USD = 10,000 subcents (the host's unit, office_cost_events.cost_subcents). */
const usd = (subcents: number) => `$${(subcents / 10_000).toFixed(2)}`;

export function renderReportTable(doc: ReportDocument, options: TableOptions): string {
  const paint = (code: string, text: string) => (options.color ? `\x1b[${code}m${text}\x1b[0m` : text);
  const section = (title: string) => paint('1', `== ${title} ==`);
  const c = doc.completeness;
  const shortfall = !c.shortfall.checked
    ? 'not checked (see notes)'
    : c.shortfall.open
      ? styled(`OPEN: ${n(c.shortfall.count)} message key(s) without a row`, '31')
      : 'none';
  const completeness = renderFacts(
    [
      ['capture_since', c.capture_since ?? 'null (capture not activated)'],
      ['backfill_through', c.backfill_through ?? 'null'],
      ['verified_through', c.verified_through ?? 'null (the scheduled health check has not run)'],
      ['shortfall', shortfall],
      ...c.missing.map((m): [string, Cell] => ['  missing', `${m.task_session_id} ${m.tool_call_id}`]),
      ['unreadable', unreadableText(c.unreadable)],
      [
        'lower bound',
        c.lower_bound_sessions === 0
          ? 'none'
          : `${n(c.lower_bound_sessions)} session(s) with activity before capture_since: their fan-out is a lower bound`,
      ],
    ],
    { color: options.color },
  );
  // The lower bound is said once, in the fact above: the document's note that repeats it is not printed again.
  const notes = c.notes
    .filter((note) => c.lower_bound_sessions === 0 || !note.includes('their fan-out is a lower bound'))
    .map((note) => paint('2', `note: ${terminalSafe(note)}`));
  const parts = [
    section(`completeness (generated ${doc.generated_at}${filterText(doc)})`),
    [completeness, ...notes].join('\n'),
    section('totals'),
    renderFacts(totalFacts(doc.totals)),
  ];
  if (doc.filters.by !== null) {
    parts.push(
      section(
        `by ${doc.filters.by}, sorted by ${doc.filters.sort}${doc.filters.limit === null ? '' : `, first ${doc.filters.limit}`}`,
      ),
    );
    parts.push(doc.groups.length === 0 ? '(no groups in scope)' : groupTable(doc.groups, options.width));
  }
  return parts.join('\n');
}

/** A group's key as people read it: one label for a key the host never reported, one for '' (labels.ts). */
const keyLabel = (key: string | null): string =>
  key === null ? NOT_REPORTED_LABEL : key === '' ? EMPTY_KEY_LABEL : key;

/** Values the report could not read (R4-3), per column: `none`, or each column with a count. */
function unreadableText(u: ReportDocument['completeness']['unreadable']): string {
  const counted = Object.entries(u).filter(([, count]) => count > 0);
  return counted.length === 0
    ? 'none'
    : `${counted.map(([column, count]) => `${column} ${n(count)}`).join(', ')} (not reported for their figures)`;
}

function filterText(doc: ReportDocument): string {
  const f = doc.filters;
  const set = [
    f.since === null ? undefined : `since ${f.since}`,
    f.until === null ? undefined : `until ${f.until}`,
    f.task === null ? undefined : `task ${f.task}`,
    f.session === null ? undefined : `session ${f.session}`,
  ].filter((s) => s !== undefined);
  return set.length === 0 ? '' : terminalSafe(`; ${set.join(', ')}`);
}

/** A sum over reported rows: `sum (n reported)`, or `- (0 reported)` when none reported (R3-6). */
const reported = (m: { sum: number | null; reported: number }) => `${n(m.sum) ?? '-'} (${n(m.reported)} reported)`;

function totalFacts(f: Figures): [string, Cell][] {
  const d = f.duration_ms;
  return [
    ['subagents', `${n(f.subagents)} (top-level ${n(f.top_level)}, nested ${n(f.nested)}, async ${n(f.async)})`],
    ['rows', `live ${n(f.live)}, backfill ${n(f.backfill)}, settled ${n(f.settled)}, failed ${n(f.failed)}`],
    ['tokens', reported(f.tokens)],
    ['tool uses', reported(f.tool_uses)],
    [
      'duration ms',
      d.reported === 0
        ? '- (0 reported)'
        : `p50 ${n(d.p50)}, p95 ${n(d.p95)}, max ${n(d.max)} (${n(d.reported)} reported)`,
    ],
    ['executions', `${n(f.executions)} (rows with an unknown execution: ${n(f.unknown_execution)})`],
    ['turns with subagents', n(f.turns)],
    ['sessions', n(f.sessions)],
    ...(f.orphan_rows === 0
      ? []
      : [
          ['orphan rows', `${n(f.orphan_rows)} (subagent rows whose session is not in task_sessions)`] as [
            string,
            Cell,
          ],
        ]),
    ['contexts', f.contexts === null ? null : `${n(f.contexts)} (sessions + subagents)`],
    [
      'cost',
      f.cost_subcents === null
        ? null
        : `${n(f.cost_subcents)} subcents (${usd(f.cost_subcents)}; estimated ${n(f.estimated_cost_subcents) ?? '-'} subcents)`,
    ],
    [
      'cost per context',
      f.cost_per_context_subcents === null
        ? null
        : `${n(f.cost_per_context_subcents)} subcents (${usd(f.cost_per_context_subcents)})`,
    ],
    [
      'models',
      [
        ...f.models.counts.map((m) => `${keyLabel(m.model)} ${n(m.subagents)}`),
        `${NOT_REPORTED_LABEL} ${n(f.models.unreported)}`,
      ].join(', '),
    ],
    [
      'fan-out (k: turns)',
      f.fan_out.length === 0 ? null : f.fan_out.map((b) => `${b.top_level}: ${n(b.turns)}`).join(', '),
    ],
    ['observed', f.first_observed_at === null ? null : `${f.first_observed_at} … ${f.last_observed_at}`],
  ];
}

function groupTable(groups: readonly Group[], width: number | undefined): string {
  const titled = groups.some((g) => g.title !== null);
  const orphans = groups.some((g) => g.orphan_rows > 0);
  const headers = [
    'key',
    ...(titled ? ['title'] : []),
    'subagents',
    'nested',
    'async',
    'tokens',
    'reported',
    'p95 ms',
    'sessions',
    ...(orphans ? ['orphan rows'] : []),
    'contexts',
    'cost (subcents)',
    'per context (subcents)',
    'lower bound',
  ];
  const rows = groups.map((g): Cell[] => [
    keyLabel(g.key),
    ...(titled ? [g.title] : []),
    n(g.subagents),
    n(g.nested),
    n(g.async),
    n(g.tokens.sum),
    n(g.tokens.reported),
    n(g.duration_ms.p95),
    n(g.sessions),
    ...(orphans ? [n(g.orphan_rows)] : []),
    n(g.contexts),
    n(g.cost_subcents),
    n(g.cost_per_context_subcents),
    g.lower_bound ? 'yes' : '',
  ]);
  const see = '--json or --csv has every column; a wider terminal (or COLUMNS=200) shows more';
  // with no room, the breakdowns go first and the figures a group is compared by (subagents, contexts, cost) last
  const dropFirst = [
    'async',
    'nested',
    'reported',
    'p95 ms',
    'orphan rows',
    'sessions',
    'per context (subcents)',
    'tokens',
    'lower bound',
    'title',
  ];
  return renderTable(headers, rows, { fit: { width, keep: 1, see, dropFirst } });
}
