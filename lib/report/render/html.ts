import { PAGE_DEFAULTS } from '../../defaults.js';
import type { Figures, Group, GroupBy, ReportDocument, TreeNode, TurnTree } from '../document.js';
import {
  byModelChart,
  byTypeChart,
  type Chart,
  durationChart,
  fanOutChart,
  liveBackfillChart,
  perDayChart,
} from './charts.js';
import { type Html, html, trusted } from './escape.js';
import { CONTENT_SECURITY_POLICY, STYLE } from './style.js';

/*
 * The page (R3-9, docs/page.md): one self-contained HTML file rendered from a report
 * document, never from the database. Every number on it is a figure of the document, shown in a
 * `<data value="…" data-figure="path">` (or `<time datetime data-figure>`) element whose path names
 * where in the document it came from, so a test can hold the page to the `--json` report.
 */

export interface HtmlOptions {
  /** fan-out trees for at most this many of the document's (most recent first) turns */
  trees?: number;
  /** task rows shown at most (in the document's order) */
  tasks?: number;
}

/** A figure: its value and, for a null, the words shown instead of a number (NULL is never 0, R3-6). */
function fig(value: number | null, path: string, none = 'not reported'): Html {
  if (value === null) return html`<data class="none" value="null" data-figure="${path}">${none}</data>`;
  return html`<data value="${value}" data-figure="${path}">${value.toLocaleString('en-US')}</data>`;
}

function instant(value: string | null, path: string, none: string): Html {
  if (value === null) return html`<span class="none" data-figure="${path}" data-null="">${none}</span>`;
  return html`<time datetime="${value}" data-figure="${path}">${value}</time>`;
}

/** A metric sum with its n: `12,345 (n = 57)`; not reported when n is 0. */
function sumWithN(sum: number | null, reported: number, path: string): Html {
  return html`${fig(sum, `${path}.sum`)} <span class="muted">(n = ${fig(reported, `${path}.reported`)})</span>`;
}

/** The groups the page needs for `by`: the document's series, or its `groups` when `--by` was that. */
export function groupsFor(doc: ReportDocument, by: GroupBy): { groups: readonly Group[]; path: string } | undefined {
  const own = doc.series?.[by as keyof NonNullable<ReportDocument['series']>];
  if (own !== undefined) return { groups: own, path: `series.${by}` };
  if (doc.filters.by === by) return { groups: doc.groups, path: 'groups' };
  return undefined;
}

function scope(doc: ReportDocument): Html {
  const f = doc.filters;
  const parts: Html[] = [];
  if (f.since !== null) parts.push(html`since <time datetime="${f.since}">${f.since}</time>`);
  if (f.until !== null) parts.push(html`until <time datetime="${f.until}">${f.until}</time>`);
  if (f.task !== null) parts.push(html`task <code>${f.task}</code>`);
  if (f.session !== null) parts.push(html`session <code>${f.session}</code>`);
  if (parts.length === 0) parts.push(html`the whole store`);
  return html`${parts.map((p, i) => html`${i > 0 ? ', ' : ''}${p}`)}`;
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
    (m, i) =>
      html`<li>session <code data-figure="completeness.missing.${i}.task_session_id">${m.task_session_id}</code>, tool call <code data-figure="completeness.missing.${i}.tool_call_id">${m.tool_call_id}</code></li>`,
  )}</ul>`
      : ''
  }
</div>`
    : c.shortfall.checked
      ? html`<p class="verified">No open shortfall (${fig(c.shortfall.count, 'completeness.shortfall.count')} missing).</p>`
      : html`<p class="lower-bound">The shortfall could not be checked (see the notes below): completeness is unknown.</p>`;
  const lowerBound =
    c.lower_bound_sessions > 0
      ? html`<p class="lower-bound">${fig(c.lower_bound_sessions, 'completeness.lower_bound_sessions')} sessions in scope had activity before capture_since: their fan-out is a lower bound (marked ≥ below).</p>`
      : html`<p class="muted">${fig(c.lower_bound_sessions, 'completeness.lower_bound_sessions')} sessions in scope had activity before capture_since: no fan-out here is a lower bound.</p>`;
  return html`<section id="completeness" class="banner${open ? ' open' : ''}" aria-labelledby="completeness-h">
<h2 id="completeness-h">Completeness</h2>
<dl>
  <div><dt>Verified through (scheduled check)</dt><dd>${instant(c.verified_through, 'completeness.verified_through', 'the check has not run')}</dd></div>
  <div><dt>Capture since</dt><dd>${instant(c.capture_since, 'completeness.capture_since', 'never activated')}</dd></div>
  <div><dt>Backfill through</dt><dd>${instant(c.backfill_through, 'completeness.backfill_through', 'no backfill ran')}</dd></div>
</dl>
${shortfall}
${lowerBound}
${c.notes.length > 0 ? html`<ul class="notes">${c.notes.map((n) => html`<li data-text="">${n}</li>`)}</ul>` : ''}
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
  ${item('Reported tokens', sumWithN(t.tokens.sum, t.tokens.reported, `${p}.tokens`))}
  ${item('Tool uses', sumWithN(t.tool_uses.sum, t.tool_uses.reported, `${p}.tool_uses`))}
  ${item(
    'Duration ms, median / p95 / max',
    html`${fig(t.duration_ms.p50, `${p}.duration_ms.p50`)} / ${fig(t.duration_ms.p95, `${p}.duration_ms.p95`)} / ${fig(t.duration_ms.max, `${p}.duration_ms.max`)} <span class="muted">(n = ${fig(t.duration_ms.reported, `${p}.duration_ms.reported`)})</span>`,
  )}
  ${item('Sessions / contexts', html`${fig(t.sessions, `${p}.sessions`, 'n/a')} / ${fig(t.contexts, `${p}.contexts`, 'n/a')}`)}
  ${item('Cost (subcents), estimated part', html`${fig(t.cost_subcents, `${p}.cost_subcents`, 'no cost data')}, ${fig(t.estimated_cost_subcents, `${p}.estimated_cost_subcents`, 'n/a')}`)}
  ${item('Cost per context (subcents)', fig(t.cost_per_context_subcents, `${p}.cost_per_context_subcents`, 'n/a'))}
  ${item('First observed', instant(t.first_observed_at, `${p}.first_observed_at`, 'none'))}
  ${item('Last observed', instant(t.last_observed_at, `${p}.last_observed_at`, 'none'))}
</dl>
</section>`;
}

function chartFigure(chart: Chart): Html {
  const body =
    chart.svg === null
      ? html`<p class="empty">Nothing to plot.</p>`
      : // ECharts escapes its labels; role and name make the SVG one image with a text alternative.
        trusted(chart.svg.replace(/^<svg /, `<svg role="img" aria-labelledby="${chart.id}-title" `));
  return html`<figure class="chart" id="${chart.id}">
<h3 id="${chart.id}-title">${chart.title}</h3>
${body}
<figcaption>${chart.caption}</figcaption>
</figure>`;
}

function charts(doc: ReportDocument): Html {
  const days = groupsFor(doc, 'day')?.groups;
  const list = [
    perDayChart(days),
    liveBackfillChart(days, doc.totals),
    fanOutChart(doc.totals),
    byTypeChart(groupsFor(doc, 'type')?.groups),
    byModelChart(doc.totals),
    durationChart(doc.distributions, doc.totals),
  ];
  return html`<section id="charts" aria-labelledby="charts-h">
<h2 id="charts-h">Charts</h2>
<div class="charts">${list.map(chartFigure)}</div>
</section>`;
}

function taskRow(g: Group, path: string): Html {
  const title = g.title ?? null;
  return html`<tr data-key="${g.key ?? ''}">
<th scope="row">${title !== null ? html`<span class="task-title" data-text="">${title}</span>` : ''}<code>${g.key ?? '(no task)'}</code>${g.lower_bound ? html` <span class="lower-bound" title="a session had activity before capture_since: the fan-out is a lower bound">≥</span>` : ''}</th>
<td class="num">${fig(g.sessions, `${path}.sessions`, 'n/a')}</td>
<td class="num">${fig(g.subagents, `${path}.subagents`)}</td>
<td class="num">${fig(g.contexts, `${path}.contexts`, 'n/a')}</td>
<td class="num">${sumWithN(g.tokens.sum, g.tokens.reported, `${path}.tokens`)}</td>
<td class="num">${fig(g.cost_subcents, `${path}.cost_subcents`, 'n/a')}</td>
<td class="num">${fig(g.cost_per_context_subcents, `${path}.cost_per_context_subcents`, 'n/a')}</td>
</tr>`;
}

function tasks(doc: ReportDocument, limit: number): Html {
  const found = groupsFor(doc, 'task');
  const heading = html`<h2 id="tasks-h">Tasks</h2>`;
  if (found === undefined) {
    return html`<section id="tasks" aria-labelledby="tasks-h">${heading}<p class="muted">This document has no task groups (report --by task or --html).</p></section>`;
  }
  const shown = found.groups.slice(0, limit);
  const caption =
    shown.length < found.groups.length
      ? html`The first <data value="${shown.length}" data-shown="">${shown.length}</data> of ${fig(found.groups.length, `${found.path}.length`)} tasks, sorted by ${doc.filters.sort}.`
      : html`${fig(found.groups.length, `${found.path}.length`)} tasks, sorted by ${doc.filters.sort}.`;
  return html`<section id="tasks" aria-labelledby="tasks-h">${heading}
<table>
<caption>${caption} Tokens are what subagents reported (n: rows that reported). Cost is in subcents, from the host's cost events.</caption>
<thead><tr><th scope="col">Task</th><th scope="col" class="num">Sessions</th><th scope="col" class="num">Subagents</th><th scope="col" class="num">Contexts</th><th scope="col" class="num">Reported tokens</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Cost per context</th></tr></thead>
<tbody>
${shown.map((g, i) => taskRow(g, `${found.path}.${i}`))}
</tbody>
</table>
</section>`;
}

const FAILED = new Set(['error', 'failed', 'cancelled']);

function node(n: TreeNode, path: string): Html {
  const status = n.tool_status ?? n.agent_status;
  const metric = (label: string, value: number | null, key: string, unit = '') =>
    html`<span class="metric">${label} ${fig(value, `${path}.${key}`)}${value === null ? '' : unit}</span>`;
  return html`<li><div class="node">
<span class="type">${n.subagent_type ?? '(type not reported)'}</span>
· <span class="model">${n.model ?? 'model not reported'}</span>
· <span class="status${status !== null && FAILED.has(status) ? ' failed' : ''}">${status ?? 'no status'}</span>
· ${metric('tokens', n.total_tokens, 'total_tokens')}
· ${metric('tool uses', n.tool_use_count, 'tool_use_count')}
· ${metric('duration', n.duration_ms, 'duration_ms', ' ms')}
· ${n.source}${n.is_async ? ' · async' : ''}
${n.orphan === true ? html` · <span class="status failed" title="parent_tool_call_id names no row of this turn">parent not found</span>` : ''}
<code class="muted">${n.tool_call_id}</code>
${n.description !== null ? html`<span class="desc">${n.description}</span>` : ''}
</div>${n.children.length > 0 ? html`<ul class="tree">${n.children.map((c, i) => node(c, `${path}.children.${i}`))}</ul>` : ''}</li>`;
}

function tree(t: TurnTree, i: number): Html {
  const path = `trees.${i}`;
  return html`<details class="turn" data-turn="${t.turn_id ?? ''}">
<summary><time datetime="${t.started_at}">${t.started_at}</time> · task <code>${t.task_id}</code> · session <code>${t.task_session_id}</code> · turn <code>${t.turn_id ?? '(not recorded)'}</code> · ${t.subagents.length} top-level</summary>
<ul class="tree">${t.subagents.map((n, j) => node(n, `${path}.subagents.${j}`))}</ul>
</details>`;
}

function trees(doc: ReportDocument, limit: number): Html {
  const shown = doc.trees.slice(0, limit);
  const note =
    doc.trees.length === 0
      ? html`<p class="muted">This document has no fan-out trees (report --trees N or --html).</p>`
      : html`<p class="muted">The ${shown.length} most recent turns${shown.length < doc.trees.length ? html` of ${doc.trees.length} in the document` : ''}, newest first; open one to see its subagents, nested under their parent.</p>`;
  return html`<section id="trees" aria-labelledby="trees-h">
<h2 id="trees-h">Fan-out trees</h2>
${note}
${shown.map(tree)}
</section>`;
}

/** The page for one report document: a pure function of the document and the options. */
export function renderHtml(doc: ReportDocument, options: HtmlOptions = {}): string {
  const treeLimit = options.trees ?? PAGE_DEFAULTS.trees;
  const taskLimit = options.tasks ?? PAGE_DEFAULTS.tasks;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="subagent-context report --html (document version ${doc.version})">
<title>Subagents report, ${doc.generated_at}</title>
<style>${trusted(STYLE)}</style>
</head>
<body>
<header>
<h1>Subagents report</h1>
<p class="meta">Generated <time datetime="${doc.generated_at}">${doc.generated_at}</time> for ${scope(doc)}. Document version ${doc.version}; the same figures as <code>report --json</code>.</p>
</header>
<main>
${banner(doc)}
${totals(doc.totals)}
${charts(doc)}
${tasks(doc, taskLimit)}
${trees(doc, treeLimit)}
</main>
<footer>subagent-context: every number here is a figure of the report document (docs/page.md). A sum is over the rows that reported it (n); "not reported" is never 0.</footer>
</body>
</html>
`;
  return page.value;
}
