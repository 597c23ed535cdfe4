import { PAGE_DEFAULTS } from '../../defaults.js';
import { dollars, type MoneyOptions, moneyDecimals } from '../../money.js';
import type { Figures, GroupBy, ReportDocument, SeriesGroup, TreeNode, TurnTree } from '../document.js';
import {
  byModelChart,
  byTypeChart,
  type Chart,
  durationChart,
  fanOutChart,
  fanOutCostChart,
  liveBackfillChart,
  perDayChart,
  SPEND_SOURCE_WORDS,
  spendByTypeChart,
} from './charts.js';
import { chartMarkup, type Html, html, trusted } from './escape.js';
import { EMPTY_KEY_LABEL, fanOutCostClosing, NOT_REPORTED_LABEL, UNPRICED_NOT_KNOWN } from './labels.js';
import { CONTENT_SECURITY_POLICY, STYLE } from './style.js';
import { cutText, humanDuration, humanInstant } from './units.js';

/*
 * The page (R3-9, R4-10, docs/page.md): one self-contained HTML file rendered from a report
 * document, never from the database. Every number on it is a figure of the document, shown in a
 * `<data value="…" data-figure="path">` (or `<time datetime data-figure>`) element whose path names
 * where in the document it came from, so a test can hold the page to the `--json` report; the
 * attribute keeps the exact value, the text shows it in human units.
 *
 * Host text is isolated (`<bdi>`, R4-2) and cut at PAGE_DEFAULTS.textChars with its full length
 * stated; trees are walked without recursion and drawn up to a node and byte budget (R4-4).
 */

export interface HtmlOptions {
  /** fan-out trees for at most this many of the document's (most recent first) turns */
  trees?: number;
  /** task rows shown at most (in the document's order) */
  tasks?: number;
}

const count = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

/** A figure: its value and, for a null, the words shown instead of a number (NULL is never 0, R3-6). */
function fig(value: number | null, path: string, none = 'not reported', show: (v: number) => string = count): Html {
  if (value === null) return html`<data class="none" value="null" data-figure="${path}">${none}</data>`;
  return html`<data value="${value}" data-figure="${path}">${show(value)}</data>`;
}

const duration = (value: number | null, path: string, none?: string) => fig(value, path, none, humanDuration);
/** A ratio as a percentage (0.25 → 25%), at most one decimal. */
const percent = (v: number) => `${+(v * 100).toFixed(1)}%`;
/** R6-11: a cost in dollars by the one money rule (lib/money.ts): its column's precision, a lower bound rounded down. */
const cost = (value: number | null, path: string, none: string, money: MoneyOptions = {}) =>
  fig(value, path, none, (v) => dollars(v, money));

function instant(value: string | null, path: string, none: string): Html {
  if (value === null) return html`<span class="none" data-figure="${path}" data-null="">${none}</span>`;
  return html`<time datetime="${value}" data-figure="${path}">${humanInstant(value)}</time>`;
}

/** An instant the page states without a figure path (the tree's start, the filters). */
const at = (value: string) => html`<time datetime="${value}">${humanInstant(value)}</time>`;

/**
 * Host text: isolated from the page's direction (`<bdi>`, so U+202E reverses nothing outside it),
 * cut at `max` characters with the full length stated (R4-4).
 */
function host(value: string, max: number = PAGE_DEFAULTS.textChars, cls?: string, tag: 'bdi' | 'code' = 'bdi'): Html {
  const cut = cutText(value, max);
  const more =
    cut.cutFrom === undefined ? '' : html`<span class="cut" data-text="">… (${count(cut.cutFrom)} characters)</span>`;
  const body =
    tag === 'code'
      ? html`<code dir="auto"${cls ? html` class="${cls}"` : ''}>${cut.text}</code>`
      : html`<bdi${cls ? html` class="${cls}"` : ''} data-text="">${cut.text}</bdi>`;
  return html`${body}${more}`;
}

/** An id from the host (task, session, turn, tool call): monospace, isolated, cut at idChars. */
const id = (value: string, cls?: string) => host(value, PAGE_DEFAULTS.idChars, cls, 'code');

/**
 * An id in an attribute (`data-key`, `data-turn`): cut at idChars as the text beside it is (R4-4:
 * 210 rows of 20,000-character ids made a 4.4 MB page), `…` where it was cut.
 */
const idAttribute = (value: string | null) => {
  const cut = cutText(value ?? '', PAGE_DEFAULTS.idChars);
  return cut.cutFrom === undefined ? cut.text : `${cut.text}…`;
};

/** UTF-8 bytes of markup: the page's budget is in bytes (R4-4), a JavaScript length counts UTF-16 units. */
const bytes = (markup: string) => Buffer.byteLength(markup, 'utf8');

/** A group key: the shared labels for NULL and '' (lib/report/render/labels.ts), else the id. */
const key = (value: string | null) =>
  value === null
    ? html`<span class="none">${NOT_REPORTED_LABEL}</span>`
    : value === ''
      ? html`<span class="none">${EMPTY_KEY_LABEL}</span>`
      : id(value);

/**
 * Whether a cost is a lower bound and by how many unpriced events of its own (R5-1, R6-9), with the
 * count's figure path: the cost and cost per context by the scope's unpriced events, the estimated
 * part by its own (estimated = 1) ones.
 */
interface Bound {
  lower: boolean;
  unpriced: number | null;
  path: string;
}

/** R5-1: the bound of a scope's cost and cost per context (`base`: the scope's path). */
const costBound = (f: Pick<Figures, 'cost_lower_bound' | 'unpriced_events'>, base: string): Bound => ({
  lower: f.cost_lower_bound,
  unpriced: f.unpriced_events,
  path: `${base}.unpriced_events`,
});

/** R6-9: the bound of the estimated part, by its own unpriced events. */
const estimatedBound = (f: Figures, base: string): Bound => ({
  lower: f.estimated_cost_lower_bound,
  unpriced: f.estimated_unpriced_events,
  path: `${base}.estimated_unpriced_events`,
});

/**
 * R5-1: a scope's cost: "≥ $4.10, 3 events unpriced" when it leaves out unpriced events (a lower
 * bound, rounded down), else the dollars alone.
 */
function scopeCost(
  bound: Bound,
  value: number | null,
  path: string,
  none: string,
  cell = false,
  decimals?: MoneyOptions['decimals'],
): Html {
  const shown = cost(value, path, none, { decimals, lowerBound: bound.lower });
  if (!bound.lower || value === null || bound.unpriced === null) return shown;
  const events = bound.unpriced;
  const count = html`${fig(events, bound.path)} event${events === 1 ? '' : 's'} unpriced`;
  // in a table cell the count goes on a line of its own, so the column stays narrow
  return html`<span class="lower-bound">≥</span> ${shown}${cell ? html`<span class="unpriced cell">${count}</span>` : html`<span class="unpriced">, ${count}</span>`}`;
}

/** A metric sum with its n: `12,345 (n = 57)`; not reported when n is 0. */
function sumWithN(sum: number | null, reported: number, path: string): Html {
  return html`${fig(sum, `${path}.sum`)} <span class="muted">(n = ${fig(reported, `${path}.reported`)})</span>`;
}

/** The groups the page needs for `by`: the document's series, or its `groups` when `--by` was that. */
export function groupsFor(
  doc: ReportDocument,
  by: GroupBy,
): { groups: readonly SeriesGroup[]; path: string; all: { n: number; path: string } } | undefined {
  const own = by === 'session' || by === 'turn' ? undefined : doc.series?.[by];
  if (own !== undefined) {
    // R4-12: the task series holds the first of the scope's task groups; task_groups counts them all
    const total = by === 'task' ? doc.series?.task_groups : undefined;
    return {
      groups: own,
      path: `series.${by}`,
      all:
        total === undefined ? { n: own.length, path: `series.${by}.length` } : { n: total, path: 'series.task_groups' },
    };
  }
  if (doc.filters.by === by)
    return { groups: doc.groups, path: 'groups', all: { n: doc.groups.length, path: 'groups.length' } };
  return undefined;
}

function scope(doc: ReportDocument): Html {
  const f = doc.filters;
  const parts: Html[] = [];
  if (f.since !== null) parts.push(html`since ${at(f.since)}`);
  if (f.until !== null) parts.push(html`until ${at(f.until)}`);
  if (f.task !== null) parts.push(html`task ${id(f.task)}`);
  if (f.session !== null) parts.push(html`session ${id(f.session)}`);
  if (parts.length === 0) parts.push(html`the whole store`);
  return html`${parts.map((p, i) => html`${i > 0 ? ', ' : ''}${p}`)}`;
}

/**
 * A note of the document as page text (R4-10): inline code for its `backticks`, no rule ids; the
 * lower-bound note is left out, the banner states it once.
 */
function note(text: string): Html | undefined {
  if (text.includes('capture_since') && text.includes('lower bound')) return undefined;
  if (text.includes(' are unpriced (the host found no price')) return undefined;
  const plain = text
    .replace(/;\s*(?:AC|R\d+)-\d+\)/g, ')')
    .replace(/\s*\((?:AC|R\d+)-\d+(?:,\s*(?:AC|R\d+)-\d+)*\)/g, '')
    .replace(/\s*\b(?:AC|R\d+)-\d+\b/g, '');
  const parts = plain.split('`');
  return html`<li data-text="" dir="auto">${parts.map((p, i) => (i % 2 === 1 ? html`<code>${p}</code>` : p))}</li>`;
}

function banner(doc: ReportDocument): Html {
  const c = doc.completeness;
  const open = c.shortfall.open;
  const shortfall = open
    ? html`<div class="shortfall" role="alert">
  <strong>Open shortfall: ${fig(c.shortfall.count, 'completeness.shortfall.count')} qualifying messages have no row.</strong>
  The figures below miss them until they are recorded.${
    c.missing.length > 0
      ? html` Missing keys (up to twenty):
  <ul>${c.missing.map(
    (m, i) => html`<li>session ${id(m.task_session_id, `m${i}s`)}, tool call ${id(m.tool_call_id, `m${i}t`)}</li>`,
  )}</ul>`
      : ''
  }
</div>`
    : c.shortfall.checked
      ? html`<p class="verified">No open shortfall (${fig(c.shortfall.count, 'completeness.shortfall.count')} missing).</p>`
      : html`<p class="lower-bound">The shortfall could not be checked (see the notes below): completeness is unknown.</p>`;
  const lowerBound =
    c.lower_bound_sessions > 0
      ? html`<p class="lower-bound">${fig(c.lower_bound_sessions, 'completeness.lower_bound_sessions')} sessions in scope had activity before capture began: their fan-out is a lower bound (marked ≥ below).</p>`
      : html`<p class="muted">${fig(c.lower_bound_sessions, 'completeness.lower_bound_sessions')} sessions in scope had activity before capture began: no fan-out here is a lower bound.</p>`;
  const notes = c.notes.map(note).filter((n) => n !== undefined);
  // R5-1: the unpriced events, said once (the note that repeats them is left out, note())
  const unpriced =
    c.unpriced_events === null
      ? html`<p class="muted">Unpriced cost events: ${fig(null, 'completeness.unpriced_events', UNPRICED_NOT_KNOWN)}.</p>`
      : c.unpriced_events === 0
        ? html`<p class="muted">${fig(0, 'completeness.unpriced_events')} cost events in scope are unpriced: every cost is as the ledger priced it.</p>`
        : html`<p class="lower-bound">${fig(c.unpriced_events, 'completeness.unpriced_events')} cost events in scope are unpriced (the host found no price for them): every cost that leaves one out is a lower bound, marked ≥.</p>`;
  // R4-3: values the report could not read, per column (each one not reported for its figure)
  const columns = Object.entries(c.unreadable) as [keyof typeof c.unreadable, number][];
  const odd = columns.filter(([, n]) => n > 0);
  const unreadable =
    odd.length === 0
      ? html`<p class="muted">No unreadable value in scope.</p>`
      : html`<p class="lower-bound">Values the report could not read, each not reported for its figure (every other figure is exact): ${odd.map(
          ([column, n], i) =>
            html`${i > 0 ? ', ' : ''}<code>${column}</code> ${fig(n, `completeness.unreadable.${column}`)}`,
        )}.</p>`;
  return html`<section id="completeness" class="banner${open ? ' open' : ''}" aria-labelledby="completeness-h">
<h2 id="completeness-h">Completeness</h2>
<dl>
  <div><dt>Verified through (scheduled check)</dt><dd>${instant(c.verified_through, 'completeness.verified_through', 'no readable checkpoint (see the notes)')}</dd></div>
  <div><dt>Capture since</dt><dd>${instant(c.capture_since, 'completeness.capture_since', 'never activated')}</dd></div>
  <div><dt>Backfill through</dt><dd>${instant(c.backfill_through, 'completeness.backfill_through', 'no backfill ran')}</dd></div>
</dl>
${shortfall}
${lowerBound}
${unpriced}
${unreadable}
${notes.length > 0 ? html`<ul class="notes">${notes}</ul>` : ''}
</section>`;
}

function totals(t: Figures): Html {
  const p = 'totals';
  const item = (label: string, value: Html) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`;
  return html`<section id="totals" class="totals" aria-labelledby="totals-h">
<h2 id="totals-h">Totals</h2>
<dl>
  ${item('Subagents', fig(t.subagents, `${p}.subagents`))}
  ${item('Top-level / nested', html`${fig(t.top_level, `${p}.top_level`)} / ${fig(t.nested, `${p}.nested`)}`)}
  ${item('Live / backfill', html`${fig(t.live, `${p}.live`)} / ${fig(t.backfill, `${p}.backfill`)}`)}
  ${item('Async / settled / failed', html`${fig(t.async, `${p}.async`)} / ${fig(t.settled, `${p}.settled`)} / ${fig(t.failed, `${p}.failed`)}`)}
  ${item('Turns with a fan-out', fig(t.turns, `${p}.turns`))}
  ${item('Executions (unknown rows)', html`${fig(t.executions, `${p}.executions`)} (${fig(t.unknown_execution, `${p}.unknown_execution`)})`)}
  ${item('Context at finish, tokens, as reported', sumWithN(t.tokens.sum, t.tokens.reported, `${p}.tokens`))}
  ${item(
    'Context at finish: median / p95 / largest',
    html`${fig(t.tokens.p50, `${p}.tokens.p50`)} / ${fig(t.tokens.p95, `${p}.tokens.p95`)} / ${fig(t.tokens.max, `${p}.tokens.max`)}`,
  )}
  ${item('Tool uses', sumWithN(t.tool_uses.sum, t.tool_uses.reported, `${p}.tool_uses`))}
  ${item(
    'Duration: median / p95 / longest',
    html`${duration(t.duration_ms.p50, `${p}.duration_ms.p50`)} / ${duration(t.duration_ms.p95, `${p}.duration_ms.p95`)} / ${duration(t.duration_ms.max, `${p}.duration_ms.max`)} <span class="muted">(n = ${fig(t.duration_ms.reported, `${p}.duration_ms.reported`)})</span>`,
  )}
  ${item('Sessions / contexts', html`${fig(t.sessions, `${p}.sessions`, 'n/a')} / ${fig(t.contexts, `${p}.contexts`, 'n/a')}`)}
  ${item('Rows whose session is gone', fig(t.orphan_rows, `${p}.orphan_rows`))}
  ${item('Cost', scopeCost(costBound(t, p), t.cost_subcents, `${p}.cost_subcents`, 'no cost data'))}
  ${item('Estimated part of the cost', scopeCost(estimatedBound(t, p), t.estimated_cost_subcents, `${p}.estimated_cost_subcents`, 'n/a'))}
  ${item('Cost by source', costSources(t))}
  ${item('Cost per context', scopeCost(costBound(t, p), t.cost_per_context_subcents, `${p}.cost_per_context_subcents`, 'n/a'))}
  ${spendItems(t, item)}
  ${item('First observed', instant(t.first_observed_at, `${p}.first_observed_at`, 'none'))}
  ${item('Last observed', instant(t.last_observed_at, `${p}.last_observed_at`, 'none'))}
</dl>
<p class="muted unit">${inlineCode(SPEND_SOURCE_WORDS)} Spend is shown apart from the ledger's cost, which may already include it: no figure adds the two.</p>
<p class="muted unit">Costs are in US dollars, from the host's cost ledger (office_cost_events, which counts subcents: ten thousand to the dollar); ≥ marks a cost that leaves out unpriced events, each with its own count. The estimated part is the cost of the events whose token counts the host marked as not authoritative. Measured is the cost the agent reported itself, list-priced what the host priced at a list price, other the events that say neither. Durations are what the subagents reported. Context at finish is the tokens of context each subagent reported having when it finished (its last request): not what it consumed over its run, and not what the cost paid for.</p>
</section>`;
}

/** Page text with `backticks` as inline code. */
const inlineCode = (text: string) =>
  html`${text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;

/**
 * R6-6: what the subagents' own runs spent (R6-5's totals.spend), apart from the ledger's cost and
 * from context at finish: the coverage in its words ("usage known for N of M subagents"), the
 * cost by source (≥ where a run is unpriced or not final), and what one subagent's run cost.
 */
function spendItems(t: Figures, item: (label: string, value: Html) => Html): Html {
  const p = 'totals.spend';
  const s = t.spend;
  if (s.subagents_with_usage === null)
    return item(
      'Spend (each subagent’s own run)',
      html`<span class="none">not collected (the store has no <code>task_session_subagent_usage</code> table)</span>`,
    );
  if (s.subagents_with_usage === 0)
    return item(
      'Spend (each subagent’s own run)',
      html`usage known for ${fig(0, `${p}.subagents_with_usage`)} of ${fig(t.subagents, 'totals.subagents')} subagents <span class="muted">(<code>subagent-context spend</code> reads it from the agents' records)</span>`,
    );
  const lowerBound = s.cost_lower_bound === true;
  // a sum leaving out unpriced or unfinished runs is a lower bound (rounded down); a run's own cost is not
  const money = (value: number | null, field: string, decimals?: MoneyOptions['decimals'], bound = lowerBound) =>
    cost(value, `${p}.${field}`, 'none priced', { decimals, lowerBound: bound });
  const mark = lowerBound ? html`<span class="lower-bound">≥</span> ` : '';
  const decimals = moneyDecimals([s.measured_cost_subcents, s.list_priced_cost_subcents]);
  return html`${item(
    'Spend (each subagent’s own run)',
    html`usage known for ${fig(s.subagents_with_usage, `${p}.subagents_with_usage`)} of ${fig(t.subagents, 'totals.subagents')} subagents <span class="muted">(${fig(s.complete, `${p}.complete`)} final, ${fig(s.unpriced, `${p}.unpriced`)} unpriced)</span>`,
  )}
  ${item(
    'What their runs cost (measured, list-priced)',
    html`${mark}${money(s.cost_subcents, 'cost_subcents')} (measured ${money(s.measured_cost_subcents, 'measured_cost_subcents', decimals, false)}, list-priced ${money(s.list_priced_cost_subcents, 'list_priced_cost_subcents', decimals, false)})`,
  )}
  ${item(
    'One subagent’s run: median / p95 / largest',
    html`${money(s.cost_p50_subcents, 'cost_p50_subcents', undefined, false)} / ${money(s.cost_p95_subcents, 'cost_p95_subcents', undefined, false)} / ${money(s.cost_max_subcents, 'cost_max_subcents', undefined, false)}`,
  )}`;
}

/**
 * R5-2: the cost by where it came from: measured (the agent's own figure), list-priced (the host's
 * price), and the rest (`other`: events with no cost_source or one the host has not defined), the
 * difference of the document's figures, shown without a path of its own.
 */
function costSources(t: Figures): Html {
  const p = 'totals';
  if (t.cost_subcents === null) return html`<span class="none">no cost data</span>`;
  const measured = t.measured_cost_subcents;
  const listed = t.list_priced_cost_subcents;
  if (measured === null || listed === null)
    return html`<span class="none">not known (the ledger has no cost_source)</span>`;
  const other = t.cost_subcents - measured - listed;
  // R6-11: the three parts are one column: one precision
  const decimals = moneyDecimals([measured, listed, other]);
  return html`measured ${cost(measured, `${p}.measured_cost_subcents`, 'n/a', { decimals })}, list-priced ${cost(listed, `${p}.list_priced_cost_subcents`, 'n/a', { decimals })}, other <data value="${other}">${dollars(other, { decimals })}</data>`;
}

function chartTable(chart: Chart): Html {
  const t = chart.table;
  if (t === null) return html``;
  const shown = t.rows;
  // R6-11: a column of dollars at one precision
  const decimals = t.columns.map((_, i) => moneyDecimals(shown.map((r) => r.cells[i - 1]?.value)));
  return html`<details class="numbers"><summary>The numbers</summary>
<div class="scroll" tabindex="0" role="region" aria-label="${chart.title}: the numbers">
<table>
<thead><tr>${t.columns.map((c, i) => html`<th scope="col"${i > 0 ? html` class="num"` : ''}>${c}</th>`)}</tr></thead>
<tbody>
${shown.map(
  (r) =>
    html`<tr><th scope="row">${host(r.label, PAGE_DEFAULTS.idChars)}</th>${r.cells.map((c, i) => html`<td class="num">${c.unit === 'dollars' ? cost(c.value, c.path, c.none ?? 'not reported', { decimals: decimals[i + 1] }) : c.unit === 'share' ? fig(c.value, c.path, c.none, percent) : fig(c.value, c.path, c.none)}</td>`)}</tr>`,
)}
</tbody>
</table>
${t.more ? html`<p class="muted">and ${plural(t.more, 'more row')} (report --json has them all)</p>` : ''}
</div>
</details>`;
}

function chartFigure(chart: Chart): Html {
  const svg = (markup: string, variant: string) =>
    chartMarkup(
      markup.replace(
        /^<svg /,
        `<svg role="img" aria-labelledby="${chart.id}-title ${chart.id}-caption" class="${variant}" `,
      ),
    );
  const body =
    chart.svg === null
      ? html`<p class="empty">Nothing to plot.</p>`
      : html`<div class="drawing">${svg(chart.svg.wide, 'wide')}${svg(chart.svg.narrow, 'narrow')}</div>`;
  return html`<figure class="chart" id="${chart.id}">
<h3 id="${chart.id}-title">${chart.title}</h3>
${body}
<figcaption id="${chart.id}-caption">${inlineCode(chart.caption)}</figcaption>
${chartTable(chart)}
</figure>`;
}

function charts(doc: ReportDocument): Html {
  const days = groupsFor(doc, 'day');
  const list = [
    perDayChart(days),
    liveBackfillChart(days, doc.totals),
    fanOutChart(doc.totals),
    fanOutCostChart(doc.fan_out_cost, doc.completeness.notes, fanOutCostClosing(doc)),
    byTypeChart(groupsFor(doc, 'type')),
    spendByTypeChart(groupsFor(doc, 'type'), doc.totals),
    byModelChart(doc.totals),
    durationChart(doc.distributions, doc.totals),
  ];
  return html`<section id="charts" aria-labelledby="charts-h">
<h2 id="charts-h">Charts</h2>
<div class="charts">${list.map(chartFigure)}</div>
</section>`;
}

/** R6-11: the task table's two money columns, each at one precision. */
interface TaskMoney {
  cost: MoneyOptions['decimals'];
  perContext: MoneyOptions['decimals'];
}

function taskRow(g: SeriesGroup, path: string, firstTree: number | undefined, money: TaskMoney): Html {
  const title = g.title ?? null;
  return html`<tr data-key="${idAttribute(g.key)}">
<th scope="row">${title !== null ? host(title, PAGE_DEFAULTS.textChars, 'task-title') : ''}${key(g.key)}${g.lower_bound ? html` <span class="lower-bound" title="a session had activity before capture began: the fan-out is a lower bound">≥</span>` : ''}${firstTree === undefined ? '' : html` <a class="to-tree" href="#turn-${firstTree}">trees</a>`}</th>
<td class="num">${fig(g.subagents, `${path}.subagents`)}</td>
<td class="num">${sumWithN(g.tokens.sum, g.tokens.reported, `${path}.tokens`)}</td>
<td class="num">${fig(g.sessions, `${path}.sessions`, 'n/a')}</td>
<td class="num">${fig(g.contexts, `${path}.contexts`, 'n/a')}</td>
<td class="num">${scopeCost(costBound(g, path), g.cost_subcents, `${path}.cost_subcents`, 'n/a', true, money.cost)}</td>
<td class="num">${scopeCost(costBound(g, path), g.cost_per_context_subcents, `${path}.cost_per_context_subcents`, 'n/a', true, money.perContext)}</td>
</tr>`;
}

function tasks(doc: ReportDocument, limit: number, shownTrees: number): Html {
  const found = groupsFor(doc, 'task');
  const heading = html`<h2 id="tasks-h">Tasks</h2>`;
  if (found === undefined) {
    return html`<section id="tasks" aria-labelledby="tasks-h">${heading}<p class="muted">This document has no task groups.</p></section>`;
  }
  // the first tree shown on the page for each task: its row links there
  const firstTree = new Map<string, number>();
  for (const [i, t] of doc.trees.slice(0, shownTrees).entries()) {
    if (!firstTree.has(t.task_id)) firstTree.set(t.task_id, i);
  }
  const shown = found.groups.slice(0, limit);
  const money: TaskMoney = {
    cost: moneyDecimals(shown.map((g) => g.cost_subcents)),
    perContext: moneyDecimals(shown.map((g) => g.cost_per_context_subcents)),
  };
  const caption =
    shown.length < found.all.n
      ? html`The first <data value="${shown.length}" data-shown="">${count(shown.length)}</data> of ${fig(found.all.n, found.all.path)} tasks, sorted by ${doc.filters.sort}.`
      : html`${fig(found.all.n, found.all.path)} tasks, sorted by ${doc.filters.sort}.`;
  return html`<section id="tasks" aria-labelledby="tasks-h">${heading}
<div class="scroll" tabindex="0" role="region" aria-labelledby="tasks-h">
<table>
<caption>${caption} Context at finish is the tokens of context each subagent reported having when it finished, summed (n: rows that reported it): not what it consumed, and not what the cost paid for. Cost is from the host's cost events; ≥ marks a cost that leaves out unpriced events. A task's trees link goes to its most recent turn below.</caption>
<thead><tr><th scope="col">Task</th><th scope="col" class="num">Subagents</th><th scope="col" class="num">Context at finish, tokens, as reported</th><th scope="col" class="num">Sessions</th><th scope="col" class="num">Contexts</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Cost per context</th></tr></thead>
<tbody>
${shown.map((g, i) => taskRow(g, `${found.path}.${i}`, g.key === null ? undefined : firstTree.get(g.key), money))}
</tbody>
</table>
</div>
</section>`;
}

const FAILED = new Set(['error', 'failed', 'cancelled']);
/** Nesting drawn up to this depth; deeper subagents are listed at it, their depth stated. */
const DRAWN_DEPTH = 8;

/**
 * The status a person means (docs/page.md#the-status): an async subagent's own `agent_status` (its tool
 * call completes at launch), else the tool call's `tool_status`; the other where one is missing.
 */
export function nodeStatus(n: TreeNode): { status: string | null; column: 'agent_status' | 'tool_status' } {
  if (n.is_async) {
    return n.agent_status !== null
      ? { status: n.agent_status, column: 'agent_status' }
      : { status: n.tool_status, column: 'tool_status' };
  }
  return n.tool_status !== null
    ? { status: n.tool_status, column: 'tool_status' }
    : { status: n.agent_status, column: 'agent_status' };
}

function nodeMarkup(n: TreeNode, path: string, depth: number): string {
  const { status, column } = nodeStatus(n);
  const metric = (label: string, value: Html) => html`<span class="metric">${label} ${value}</span>`;
  return html`<div class="node">
${depth > DRAWN_DEPTH ? html`<span class="muted depth">depth ${count(depth)} ·</span> ` : ''}<span class="type">${n.subagent_type === null ? html`<span class="none">type not reported</span>` : host(n.subagent_type, PAGE_DEFAULTS.idChars)}</span>
· <span class="model">${n.model === null ? html`<span class="none">model not reported</span>` : host(n.model, PAGE_DEFAULTS.idChars)}</span>
· <span class="status${status !== null && FAILED.has(status) ? ' failed' : ''}" title="${column}">${status === null ? 'no status' : host(status, PAGE_DEFAULTS.idChars)}</span>
· ${metric('context at finish', fig(n.total_tokens, `${path}.total_tokens`))}
· ${metric('tool uses', fig(n.tool_use_count, `${path}.tool_use_count`))}
· ${metric('duration', duration(n.duration_ms, `${path}.duration_ms`))}
· ${n.source}${n.is_async ? ' · async' : ''}
${n.orphan === true ? html` · <span class="status failed" title="parent_tool_call_id names no row of this turn">parent not found</span>` : ''}
${id(n.tool_call_id, 'muted')}
${n.description !== null ? html`<span class="desc">${host(n.description)}</span>` : ''}
</div>`.value;
}

/** A turn's subagents in pre-order (the order the page lists them), with depth; no recursion. */
function* preorder(top: readonly TreeNode[]): Generator<{ node: TreeNode; depth: number }> {
  const stack: { list: readonly TreeNode[]; next: number }[] = [{ list: top, next: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (frame.next >= frame.list.length) {
      stack.pop();
      continue;
    }
    const node = frame.list[frame.next++]!;
    yield { node, depth: stack.length - 1 };
    if (node.children.length > 0) stack.push({ list: node.children, next: 0 });
  }
}

/** Every subagent of a turn (no recursion). */
export function countNodes(top: readonly TreeNode[]): number {
  let n = 0;
  for (const _ of preorder(top)) n++;
  return n;
}

interface Budget {
  /** bytes of tree markup left before the trees stop (PAGE_DEFAULTS.treeBytes) */
  bytes: number;
}

/**
 * One turn's list: at most `nodesPerTurn` subagents in pre-order, nested up to DRAWN_DEPTH, and
 * the figure path `trees.i.nodes.k` (the k-th in pre-order: a path that does not grow with depth).
 */
function turnList(t: TurnTree, i: number, budget: Budget): { markup: string; drawn: number } {
  const out: string[] = ['<ul class="tree">'];
  let open = -1; // drawn depth of the last item
  let drawn = 0;
  for (const { node, depth } of preorder(t.subagents)) {
    if (drawn >= PAGE_DEFAULTS.nodesPerTurn || budget.bytes <= 0) break;
    const level = Math.min(depth, DRAWN_DEPTH);
    if (open < 0) out.push('<li>');
    else if (level > open) out.push('<ul class="tree"><li>');
    else out.push(`${'</li></ul>'.repeat(open - level)}</li><li>`);
    const markup = nodeMarkup(node, `trees.${i}.nodes.${drawn}`, depth);
    out.push(markup);
    budget.bytes -= bytes(markup) + 24;
    open = level;
    drawn++;
  }
  if (open >= 0) out.push(`${'</li></ul>'.repeat(open)}</li>`);
  out.push('</ul>');
  return { markup: out.join(''), drawn };
}

/**
 * Issue 58: a turn's latest activity, the order the trees are listed in (lib/report/trees.ts: its
 * rows' newest observed_at): the latest observed_at of its subagents (the document's RFC 3339 UTC
 * text, which orders as it reads).
 */
function lastActivity(t: TurnTree): string | undefined {
  let last: string | undefined;
  for (const { node } of preorder(t.subagents))
    if (last === undefined || node.observed_at > last) last = node.observed_at;
  return last;
}

function tree(t: TurnTree, i: number, titles: ReadonlyMap<string, string>, budget: Budget): Html {
  const total = countNodes(t.subagents);
  const last = lastActivity(t);
  const { markup, drawn } = turnList(t, i, budget);
  // the tree's own title where the document has it, else its task group's
  const title = t.task_title === undefined ? titles.get(t.task_id) : (t.task_title ?? undefined);
  const more =
    drawn < total
      ? html`<p class="more">and ${plural(total - drawn, 'more subagent')} in this turn (the page draws at most ${count(PAGE_DEFAULTS.nodesPerTurn)} a turn; report --json --trees has them all).</p>`
      : '';
  // the time the list is sorted by comes first; the turn's start after it (issue 58: the start alone read unsorted)
  const summary = html`<summary>${last === undefined ? '' : html`last activity ${at(last)} · `}started ${at(t.started_at)} · ${title === undefined ? '' : html`${host(title, PAGE_DEFAULTS.textChars, 'tree-title')} · `}task ${id(t.task_id)} · session ${id(t.task_session_id)} · turn ${t.turn_id === null ? html`<span class="none">not recorded</span>` : id(t.turn_id)} · ${plural(total, 'subagent')}, ${count(t.subagents.length)} top-level</summary>`;
  budget.bytes -= bytes(summary.value);
  return html`<details class="turn" id="turn-${i}" data-turn="${idAttribute(t.turn_id)}">
${summary}
${trusted(markup)}
${more}
</details>`;
}

function trees(doc: ReportDocument, limit: number): { markup: Html; shown: number } {
  const wanted = doc.trees.slice(0, limit);
  const titles = new Map<string, string>();
  for (const g of groupsFor(doc, 'task')?.groups ?? [])
    if (g.key !== null && g.title !== null) titles.set(g.key, g.title);
  const budget: Budget = { bytes: PAGE_DEFAULTS.treeBytes };
  const drawn: Html[] = [];
  for (const [i, t] of wanted.entries()) {
    if (budget.bytes <= 0) break;
    drawn.push(tree(t, i, titles, budget));
  }
  const note =
    doc.trees.length === 0
      ? html`<p class="muted">This document has no fan-out trees.</p>`
      : html`<p class="muted">The ${count(drawn.length)} turns with the most recent activity${drawn.length < doc.trees.length ? html` (of ${count(doc.trees.length)} in the document)` : ''}, by their last activity (a subagent observed), latest first; each shows its last activity, then when the turn started. Open one to see its subagents, nested under their parent. The status is an async subagent's own (agent_status), else its tool call's (tool_status).</p>`;
  const cut =
    drawn.length < wanted.length
      ? html`<p class="more">and ${count(wanted.length - drawn.length)} more turns (the page stays under 2 MB; report --json --trees has them all).</p>`
      : '';
  return {
    markup: html`<section id="trees" aria-labelledby="trees-h">
<h2 id="trees-h">Fan-out trees</h2>
${note}
${drawn}
${cut}
</section>`,
    shown: drawn.length,
  };
}

/** The page for one report document: a pure function of the document and the options. */
export function renderHtml(doc: ReportDocument, options: HtmlOptions = {}): string {
  const treeLimit = options.trees ?? PAGE_DEFAULTS.trees;
  const taskLimit = options.tasks ?? PAGE_DEFAULTS.tasks;
  const treeSection = trees(doc, treeLimit);
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="subagent-context report --html (document version ${doc.version})">
<title>Subagents report, ${humanInstant(doc.generated_at)}</title>
<style>${trusted(STYLE)}</style>
</head>
<body>
<header>
<h1>Subagents report</h1>
<p class="meta">Generated ${at(doc.generated_at)} for ${scope(doc)}: the same figures as the JSON report (<code>report --json</code>, document version ${doc.version}).</p>
</header>
<main>
${banner(doc)}
${totals(doc.totals)}
${charts(doc)}
${tasks(doc, taskLimit, treeSection.shown)}
${treeSection.markup}
</main>
<footer>subagent-context: every number here is a figure of the report document. A sum is over the rows that reported it (n); "not reported" is never 0.</footer>
</body>
</html>
`;
  return page.value;
}
