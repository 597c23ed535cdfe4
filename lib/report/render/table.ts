import { dollarColumn, dollars } from '../../money.js';
import { terminalSafe } from '../../terminal-text.js';
import { type Cell, renderFacts, renderTable, styled, wrapText } from '../../text-table.js';
import type { FanOutCost, Figures, Group, ReportDocument, Spend } from '../document.js';
import {
  fanOutCostClosing,
  fanOutCostGap,
  keyText,
  NOT_REPORTED_LABEL,
  TURN_COST_WORDS,
  UNPRICED_NOT_KNOWN,
  unpricedWords,
} from './labels.js';
import { humanDuration } from './units.js';

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
  /**
   * the terminal's width, when known: every line fits it (issue 51, issue 58 #17): the tables leave
   * columns out by `LEAVE_OUT_FIRST`, the facts, notes and prose wrap (lib/text-table.ts)
   */
  width?: number;
}

/** Colour is for a terminal: never in a pipe or a file, never with NO_COLOR set (no-color.org). */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

const n = (value: number | null): string | null => (value === null ? null : value.toLocaleString('en-US'));
/** issue 58 #19: a duration as the page says it ("2 min 42 s"), one formatter (./units.ts) */
const duration = (ms: number | null): string | null => (ms === null ? null : humanDuration(ms));

export function renderReportTable(doc: ReportDocument, options: TableOptions): string {
  const { width } = options;
  const paint = (code: string, text: string) => (options.color ? `\x1b[${code}m${text}\x1b[0m` : text);
  // issue 58 #17: prose within the width, its lines after the first indented `hang` (under its words)
  const lines = (text: string, hang = 0) =>
    width === undefined
      ? [text]
      : wrapText(text, width, width - hang).map((line, i) => (i === 0 ? line : `${' '.repeat(hang)}${line}`));
  const prose = (code: string, text: string, hang = 0) =>
    lines(text, hang)
      .map((line) => paint(code, line))
      .join('\n');
  const section = (title: string) => prose('1', `== ${title} ==`, 3);
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
      ['verified_through', c.verified_through ?? 'null (no readable checkpoint: see the notes)'],
      ['shortfall', shortfall],
      ...c.missing.map((m): [string, Cell] => ['  missing', `${m.task_session_id} ${m.tool_call_id}`]),
      ['unreadable', unreadableText(c.unreadable)],
      ['unpriced events', unpricedFact(c.unpriced_events)],
      [
        'lower bound',
        c.lower_bound_sessions === 0
          ? 'none'
          : `${n(c.lower_bound_sessions)} session(s) with activity before capture_since: their fan-out is a lower bound`,
      ],
    ],
    { color: options.color, width },
  );
  // The lower bound and the unpriced events are said once, in the facts above: the document's
  // notes that repeat them are not printed again.
  const notes = c.notes
    .filter((note) => c.lower_bound_sessions === 0 || !note.includes('their fan-out is a lower bound'))
    .filter((note) => !note.includes(' are unpriced (the host found no price'))
    .map((note) => prose('2', `note: ${terminalSafe(note)}`, 6));
  const parts = [
    section(`completeness (generated ${doc.generated_at}${filterText(doc)})`),
    [completeness, ...notes].join('\n'),
    section('totals'),
    renderFacts(totalFacts(doc.totals), { width }),
    section('fan-out cost: what a turn costs, by how many subagents it fanned out to'),
    fanOutCostText(doc, prose, width),
  ];
  if (doc.filters.by !== null) {
    parts.push(
      section(
        `by ${doc.filters.by}, sorted by ${doc.filters.sort}${doc.filters.limit === null ? '' : `, first ${doc.filters.limit}`}`,
      ),
    );
    parts.push(doc.groups.length === 0 ? '(no groups in scope)' : groupTable(doc.groups, width));
  }
  return parts.join('\n');
}

/** A group's key as people read it: the CSV's rule (labels.ts keyText), so no two keys print alike. */
const keyLabel = keyText;

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

/** R5-1: the completeness fact: unpriced events counted, or not known (null). */
function unpricedFact(events: number | null): string {
  if (events === null) return UNPRICED_NOT_KNOWN;
  // issue 58: 0 is known (the ledger has cost_source), also where the scope has no cost event at all
  return events === 0
    ? 'none in scope'
    : `${n(events)} cost event(s) the host found no price for (stored as 0): every cost that leaves one out is a lower bound (≥)`;
}

/** R5-1: "≥ " before a cost that leaves out unpriced events (a lower bound), else nothing. */
const atLeast = (f: Figures) => (f.cost_lower_bound ? '≥ ' : '');

/** Whether a cost is a lower bound, and by how many unpriced events of its own (R5-1, R6-9). */
interface Bound {
  lower: boolean;
  unpriced: number | null;
}

/** R5-1: the cost and cost per context leave out every unpriced event of the scope. */
const costBound = (f: Figures): Bound => ({ lower: f.cost_lower_bound, unpriced: f.unpriced_events });

/** R6-9: the estimated part leaves out only its own (estimated = 1) unpriced events. */
const estimatedBound = (f: Figures): Bound => ({
  lower: f.estimated_cost_lower_bound,
  unpriced: f.estimated_unpriced_events,
});

/** R5-1, R6-9: a cost in subcents with its dollars and its own count: "≥ 15,000 subcents (≥ $1.50, 3 events unpriced)". */
function costText(bound: Bound, subcents: number): string {
  const at = bound.lower ? '≥ ' : '';
  const unpriced = bound.lower && bound.unpriced !== null ? `, ${unpricedWords(bound.unpriced)}` : '';
  // R6-11: a lower bound's dollars are rounded down (lib/money.ts)
  return `${at}${n(subcents)} subcents (${at}${dollars(subcents, { lowerBound: bound.lower })}${unpriced})`;
}

/**
 * R5-2: the cost by where it came from: what the agent reported (measured), what the host priced
 * at a list price, and the rest (events with no cost_source, or one the host has not defined).
 */
function costSourceText(f: Figures): string | null {
  if (f.cost_subcents === null) return null;
  if (f.measured_cost_subcents === null || f.list_priced_cost_subcents === null)
    return 'not known (the ledger has no cost_source)';
  const parts = [f.measured_cost_subcents, f.list_priced_cost_subcents];
  parts.push(f.cost_subcents - parts[0]! - parts[1]!);
  // R6-11: the three parts are one column: one precision
  const shown = dollarColumn(parts);
  const part = (i: number) => `${n(parts[i]!)} (${shown[i]})`;
  return `measured ${part(0)}, list-priced ${part(1)}, other ${part(2)} subcents`;
}

/**
 * R5-4: total_tokens is what each subagent reported of its context at finish (its last request),
 * never its usage: the sum with its n, and the nearest-rank p50, p95 and max.
 */
function contextText(t: Figures['tokens']): string {
  if (t.reported === 0) return '- (0 reported)';
  return `${n(t.sum) ?? '-'} tokens, as reported (${n(t.reported)} reported; p50 ${n(t.p50) ?? '-'}, p95 ${n(t.p95) ?? '-'}, max ${n(t.max) ?? '-'})`;
}

function totalFacts(f: Figures): [string, Cell][] {
  const d = f.duration_ms;
  return [
    ['subagents', `${n(f.subagents)} (top-level ${n(f.top_level)}, nested ${n(f.nested)}, async ${n(f.async)})`],
    ['rows', `live ${n(f.live)}, backfill ${n(f.backfill)}, settled ${n(f.settled)}, failed ${n(f.failed)}`],
    ['context at finish', contextText(f.tokens)],
    ['tool uses', reported(f.tool_uses)],
    [
      'duration',
      d.reported === 0
        ? '- (0 reported)'
        : `p50 ${duration(d.p50)}, p95 ${duration(d.p95)}, max ${duration(d.max)} (${n(d.reported)} reported)`,
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
    ['cost', f.cost_subcents === null ? null : costText(costBound(f), f.cost_subcents)],
    // R6-9: the estimated part with its own unpriced events
    [
      'estimated part',
      f.estimated_cost_subcents === null ? null : costText(estimatedBound(f), f.estimated_cost_subcents),
    ],
    ['cost by source', costSourceText(f)],
    [
      'cost per context',
      f.cost_per_context_subcents === null ? null : costText(costBound(f), f.cost_per_context_subcents),
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
    ...spendFacts(f),
  ];
}

/** Dollars, or `-` for a null figure. */
const orDash = (subcents: number | null) => (subcents === null ? '-' : dollars(subcents));

/** R6-5: a spend cost in dollars, "≥ " before it where the scope's spend is a lower bound; `-` when null. */
const spendMoney = (s: Spend, subcents: number | null) =>
  subcents === null
    ? null
    : `${s.cost_lower_bound === true ? '≥ ' : ''}${dollars(subcents, { lowerBound: s.cost_lower_bound === true })}`;

/**
 * R6-5: the totals' spend, what their subagents' runs used and cost (never total_tokens): the
 * coverage, the tokens by kind, the priced cost by source with the unpriced runs, and what one
 * subagent spent. Without the usage table, one line that says spend is not collected.
 */
function spendFacts(f: Figures): [string, Cell][] {
  const s = f.spend;
  if (s.subagents_with_usage === null) return [['spend', 'not collected (no task_session_subagent_usage: see notes)']];
  const unknown = s.subagents_with_usage - (s.complete ?? 0);
  return [
    [
      'spend coverage',
      `usage known for ${n(s.subagents_with_usage)} of ${n(f.subagents)} subagents (${n(s.complete)} final${unknown > 0 ? `, ${n(unknown)} not final` : ''})`,
    ],
    [
      'spend tokens',
      s.subagents_with_usage === 0
        ? null
        : `in ${n(s.tokens_in) ?? '-'}, out ${n(s.tokens_out) ?? '-'}, cache read ${n(s.tokens_cached_read) ?? '-'}, cache write ${n(s.tokens_cached_write) ?? '-'}, reasoning ${n(s.tokens_reasoning) ?? '-'}`,
    ],
    [
      'spend cost',
      s.subagents_with_usage === 0
        ? null
        : `${spendMoney(s, s.cost_subcents) ?? '-'} (measured ${spendMoney(s, s.measured_cost_subcents) ?? '-'}, list-priced ${spendMoney(s, s.list_priced_cost_subcents) ?? '-'}; ${n(s.unpriced)} run(s) unpriced)`,
    ],
    [
      'spend per subagent',
      s.cost_p50_subcents === null
        ? null
        : `p50 ${orDash(s.cost_p50_subcents)}, p95 ${orDash(s.cost_p95_subcents)}, max ${orDash(s.cost_max_subcents)} (over the ${n(s.subagents_with_usage - (s.unpriced ?? 0))} priced runs)`,
    ],
  ];
}

/**
 * Issue 58 #17: which columns a table leaves out when a terminal has no room for them, the least
 * telling first; the first column (a group's key, a bucket's fan-out) always stays. Every column of
 * both tables is named here, the one place this is decided (a test holds each header to it). What
 * a group or a bucket is compared by stays longest: its subagents, then its cost, and only then its
 * context at finish; the breakdowns (nested, async, the percentiles, the spend's parts) go first.
 * The columns left out are named in a line under the table, with where to see them (--json, --csv,
 * a wider terminal).
 */
export const LEAVE_OUT_FIRST = {
  groups: [
    'unpriced runs',
    'spend p95',
    'spend p50',
    'with usage',
    'orphan rows',
    'async',
    'nested',
    'reported',
    'p95 duration',
    'unpriced events',
    'lower bound',
    'per context (subcents)',
    'sessions',
    'title',
    'spend',
    'contexts',
    'context at finish (tokens)',
    'cost (subcents)',
    'subagents',
  ],
  fanOut: [
    'subagent share',
    'spend known',
    'subagents spent',
    'unreadable cost',
    'priced, not costed',
    'p95',
    'median',
    'without cost',
    'unpriced',
    'costed',
    'mean',
    'sum',
    'turns',
  ],
} as const satisfies Record<string, readonly string[]>;

/** R6-5: the group table's spend columns: coverage, the priced cost (≥ when a lower bound), unpriced runs, per subagent. */
const SPEND_HEADERS = ['with usage', 'spend', 'unpriced runs', 'spend p50', 'spend p95'];

function groupTable(groups: readonly Group[], width: number | undefined): string {
  const titled = groups.some((g) => g.title !== null);
  const orphans = groups.some((g) => g.orphan_rows > 0);
  // R5-1: the unpriced events, once the ledger says which events were priced
  const unpriced = groups.some((g) => g.unpriced_events !== null);
  // R6-5: once a group has usage (a store without usage rows, or without the table, gets no columns of zeros)
  const spend = groups.some((g) => (g.spend.subagents_with_usage ?? 0) > 0);
  const headers = [
    'key',
    ...(titled ? ['title'] : []),
    'subagents',
    'nested',
    'async',
    'context at finish (tokens)',
    'reported',
    'p95 duration',
    'sessions',
    ...(orphans ? ['orphan rows'] : []),
    'contexts',
    'cost (subcents)',
    'per context (subcents)',
    ...(unpriced ? ['unpriced events'] : []),
    'lower bound',
    // R6-5: what the group's subagents spent
    ...(spend ? SPEND_HEADERS : []),
  ];
  // R5-1: a cost that leaves out unpriced events is a lower bound: "≥ 9,000"
  const cost = (g: Group, subcents: number | null) => (subcents === null ? null : `${atLeast(g)}${n(subcents)}`);
  // R6-11: each spend money column at one precision (lib/money.ts), a lower bound rounded down
  const bound = (i: number) => groups[i]!.spend.cost_lower_bound === true;
  const spendCost = dollarColumn(
    groups.map((g) => g.spend.cost_subcents),
    bound,
  ).map((text, i) => (text === null ? null : `${bound(i) ? '≥ ' : ''}${text}`));
  const spendP50 = dollarColumn(groups.map((g) => g.spend.cost_p50_subcents));
  const spendP95 = dollarColumn(groups.map((g) => g.spend.cost_p95_subcents));
  const rows = groups.map((g, i): Cell[] => [
    keyLabel(g.key),
    ...(titled ? [g.title] : []),
    n(g.subagents),
    n(g.nested),
    n(g.async),
    n(g.tokens.sum),
    n(g.tokens.reported),
    duration(g.duration_ms.p95),
    n(g.sessions),
    ...(orphans ? [n(g.orphan_rows)] : []),
    n(g.contexts),
    cost(g, g.cost_subcents),
    cost(g, g.cost_per_context_subcents),
    ...(unpriced ? [n(g.unpriced_events)] : []),
    g.lower_bound ? 'yes' : '',
    ...(spend ? [n(g.spend.subagents_with_usage), spendCost[i]!, n(g.spend.unpriced), spendP50[i]!, spendP95[i]!] : []),
  ]);
  const see = '--json or --csv has every column; a wider terminal (or COLUMNS=200) shows more';
  return renderTable(headers, rows, { fit: { width, keep: 1, see, dropFirst: LEAVE_OUT_FIRST.groups } });
}

/** R6-5: a subagent share (a ratio to 4 decimals) as a percentage: 0.3333 → "33.33%". */
const shareText = (share: number) => `${(share * 100).toFixed(2)}%`;

/** R6-5: what the fan-out table's spend columns mean. */
const SPEND_SHARE_WORDS =
  "Spend known: turns whose every top-level subagent has priced, final run usage (a turn without subagents has none to miss); subagents spent: those subagents' cost over them; subagent share: the median over them of the subagents' cost ÷ the turn's cost, where the turn is costed.";

/**
 * R5-3: the fan-out cost section: one line per bucket (turns, costed, unpriced, without cost, then
 * the costed turns' sum, mean, median and p95 in dollars; `-` where no turn is costed), the events
 * with no turn, and what a turn's cost includes. When the document has none, why (its note).
 */
function fanOutCostText(
  doc: ReportDocument,
  prose: (code: string, text: string) => string,
  width: number | undefined,
): string {
  const fc: FanOutCost | null = doc.fan_out_cost;
  if (fc === null) return `not available: ${terminalSafe(fanOutCostGap(doc.completeness.notes))}`;
  // R6-11: each money column at one precision (lib/money.ts)
  const column = (figure: (b: FanOutCost['buckets'][number]) => number | null) => dollarColumn(fc.buckets.map(figure));
  const [sums, means, medians, p95s, uncosted] = [
    column((b) => b.cost_subcents),
    column((b) => b.mean_subcents),
    column((b) => b.median_subcents),
    column((b) => b.p95_subcents),
    column((b) => b.uncosted_turns_priced_cost_subcents),
  ];
  const subagentSums = column((b) => b.subagent_cost_subcents);
  // R6-10: the priced events of the turns not costed, where a bucket has some
  const priced = uncosted.some((v) => v !== null);
  const unreadable = fc.buckets.some((b) => b.unreadable_cost_turns > 0);
  // R6-5: the subagents' part, once the scope has usage (without any, bucket 0 alone would be known)
  const spend =
    fc.buckets.some((b) => b.spend_known_turns !== null) && (doc.totals.spend.subagents_with_usage ?? 0) > 0;
  const table = renderTable(
    [
      'fan-out (top-level)',
      'turns',
      'costed',
      'unpriced',
      'without cost',
      ...(unreadable ? ['unreadable cost'] : []),
      'sum',
      'mean',
      'median',
      'p95',
      ...(spend ? ['spend known', 'subagents spent', 'subagent share'] : []),
      ...(priced ? ['priced, not costed'] : []),
    ],
    fc.buckets.map((b, i): Cell[] => [
      // words, so the labels line up whether they read as a number or not ("4-5", "9+")
      `${b.fan_out} ${b.fan_out === '1' ? 'subagent' : 'subagents'}`,
      n(b.turns),
      n(b.costed_turns),
      n(b.unpriced_turns),
      n(b.turns_without_cost),
      ...(unreadable ? [n(b.unreadable_cost_turns)] : []),
      sums[i]!,
      means[i]!,
      medians[i]!,
      p95s[i]!,
      ...(spend
        ? [n(b.spend_known_turns), subagentSums[i]!, b.subagent_share === null ? null : shareText(b.subagent_share)]
        : []),
      ...(priced ? [uncosted[i]!] : []),
    ]),
    {
      fit: {
        width,
        keep: 1,
        see: '--json or --csv has every figure; a wider terminal (or COLUMNS=200) shows more',
        dropFirst: LEAVE_OUT_FIRST.fanOut,
      },
    },
  );
  const unattributed =
    fc.unattributed_events === 0
      ? 'none'
      : `${n(fc.unattributed_events)} cost event(s) on no turn of task_session_turns: ${
          fc.unattributed_cost_subcents === null ? 'no cost' : dollars(fc.unattributed_cost_subcents)
        }${fc.unattributed_unpriced_events === null ? '' : `, ${n(fc.unattributed_unpriced_events)} of them unpriced`}`;
  const facts: [string, Cell][] = [
    ['events without a turn', unattributed],
    // R6-10: the line that closes the sum with the totals' cost
    ['with the total', fanOutCostClosing(doc)],
  ];
  if (fc.unreadable_started_at !== null && fc.unreadable_started_at > 0)
    facts.push(['unreadable started_at', `${n(fc.unreadable_started_at)} turn(s) (in no window with --since/--until)`]);
  return [
    table,
    renderFacts(facts, { width }),
    ...(spend ? [prose('2', SPEND_SHARE_WORDS)] : []),
    prose(
      '2',
      `Costs in dollars over the costed turns (no unpriced or unreadable event); a turn with an unpriced event is counted, never costed. ${TURN_COST_WORDS}`,
    ),
  ].join('\n');
}
