import { describe, expect, it } from 'vitest';
import type { ReportDocument } from '../../../../lib/report/document.js';
import { countNodes, renderHtml } from '../../../../lib/report/render/html.js';
import { hugeTurn, makeReportDocument } from '../../../../local/report-documents.js';
import { decode, section } from '../../../support/page-figures.js';

/*
 * The page's words, written out by hand (docs/page.md#what-is-on-it, R3-8, R3-9, R4-10): the
 * header, each banner state, the totals' labels, the tasks caption, the trees' notes and summaries,
 * a chart's frame. html.test.ts holds every number to the document (its figure paths); here the
 * sentences around them are read as a person reads them: tags removed, whitespace collapsed.
 */

/** What a reader sees of `html`: the charts' drawings as `[svg]`, no tags, whitespace collapsed. */
const words = (html: string) =>
  decode(html.replace(/<svg[\s\S]*?<\/svg>/g, '[svg]').replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();

/** A small document: 12 subagents, 2 days, 3 tasks (the first with no reported tokens), 3 turns. */
function small(change: (d: ReportDocument) => void = () => {}): ReportDocument {
  const d = makeReportDocument({ subagents: 12, days: 2, tasks: 3, types: 1, models: 1, trees: 3 });
  change(d);
  return d;
}

describe("the page's words (docs/page.md)", () => {
  it('R3-9: the head and frame: language, charset, viewport, colour schemes, generator, title, footer', () => {
    const page = renderHtml(small());
    const head = page.slice(0, page.indexOf('<style>'));
    expect(head).toBe(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src &#39;none&#39;; script-src &#39;none&#39;; base-uri &#39;none&#39;; form-action &#39;none&#39;">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="subagent-context report --html (document version 1)">
<title>Subagents report, 31 Oct 2026, 00:00 UTC</title>
`);
    expect(page.slice(page.indexOf('</main>'))).toBe(`</main>
<footer>subagent-context: every number here is a figure of the report document. A sum is over the rows that reported it (n); "not reported" is never 0.</footer>
</body>
</html>
`);
    expect(page).toContain('</style>\n</head>\n<body>\n<header>\n<h1>Subagents report</h1>\n');
  });

  it('R3-9: the header names the scope: the whole store, or each filter that was set, in order', () => {
    const meta = (d: ReportDocument) => {
      const page = renderHtml(d);
      return words(page.slice(page.indexOf('<p class="meta">'), page.indexOf('</header>')));
    };
    expect(meta(small())).toBe(
      'Generated 31 Oct 2026, 00:00 UTC for the whole store: the same figures as the JSON report ( report --json , document version 1).',
    );
    const scoped = small((d) => {
      d.filters = {
        ...d.filters,
        since: '2026-10-01T00:00:00.000000Z',
        until: '2026-10-30T12:00:00.000000Z',
        task: 'task-0',
        session: 'session-0',
      };
    });
    expect(meta(scoped)).toBe(
      'Generated 31 Oct 2026, 00:00 UTC for since 1 Oct 2026, 00:00 UTC , until 30 Oct 2026, 12:00 UTC , task task-0 , session session-0 : the same figures as the JSON report ( report --json , document version 1).',
    );
    expect(renderHtml(scoped)).toContain('until <time datetime="2026-10-30T12:00:00.000000Z">');
    const untilOnly = small((d) => {
      d.filters = { ...d.filters, until: '2026-10-30T12:00:00.000000Z' };
    });
    expect(meta(untilOnly)).toMatch(/^Generated 31 Oct 2026, 00:00 UTC for until 30 Oct 2026, 12:00 UTC : the same/);
    const sessionOnly = small((d) => {
      d.filters = { ...d.filters, session: 'session-9' };
    });
    expect(meta(sessionOnly)).toMatch(/^Generated 31 Oct 2026, 00:00 UTC for session session-9 : the same/);
  });

  it('R3-8: the banner when the shortfall is open, closed, or could not be checked; the lower-bound sentence either way', () => {
    const open = small((d) => {
      d.completeness.shortfall = { open: true, count: 3, checked: true };
      d.completeness.missing = [{ task_session_id: 'session-1', tool_call_id: 'toolu_missing_1' }];
    });
    const openBanner = section(renderHtml(open), 'completeness');
    expect(openBanner).toContain('<section id="completeness" class="banner open" aria-labelledby="completeness-h">');
    expect(words(openBanner)).toBe(
      'Completeness Verified through (scheduled check) 30 Oct 2026, 01:00 UTC Capture since 4 Oct 2026, 00:00 UTC Backfill through 3 Oct 2026, 23:59 UTC Open shortfall: 3 qualifying messages have no row. The figures below miss them until they are recorded. Missing keys (up to twenty): session session-1 , tool call toolu_missing_1 2 sessions in scope had activity before capture began: their fan-out is a lower bound (marked ≥ below). 0 cost events in scope are unpriced: every cost is as the ledger priced it. No unreadable value in scope.',
    );
    // the document's one note is the lower-bound sentence, which the banner states itself (above)
    expect(openBanner).not.toContain('<ul class="notes">');
    expect(openBanner).toContain('<code dir="auto" class="m0s">session-1</code>');
    expect(openBanner).toContain('<code dir="auto" class="m0t">toolu_missing_1</code>');
    const noKeys = small((d) => {
      d.completeness.shortfall = { open: true, count: 3, checked: true };
      d.completeness.missing = [];
    });
    expect(words(section(renderHtml(noKeys), 'completeness'))).toContain(
      'Open shortfall: 3 qualifying messages have no row. The figures below miss them until they are recorded. 2 sessions',
    );
    const closed = section(renderHtml(small()), 'completeness');
    expect(closed).toContain('<section id="completeness" class="banner" aria-labelledby="completeness-h">');
    expect(closed).toContain('<p class="verified">No open shortfall (');
    expect(words(closed)).toContain('No open shortfall ( 0 missing). 2 sessions in scope');
    const unchecked = small((d) => {
      d.completeness.shortfall = { open: false, count: 0, checked: false };
      d.completeness.lower_bound_sessions = 0;
      d.completeness.verified_through = null;
      d.completeness.capture_since = null;
      d.completeness.backfill_through = null;
    });
    const uncheckedBanner = section(renderHtml(unchecked), 'completeness');
    expect(words(uncheckedBanner)).toBe(
      'Completeness Verified through (scheduled check) no readable checkpoint (see the notes) Capture since never activated Backfill through no backfill ran The shortfall could not be checked (see the notes below): completeness is unknown. 0 sessions in scope had activity before capture began: no fan-out here is a lower bound. 0 cost events in scope are unpriced: every cost is as the ledger priced it. No unreadable value in scope.',
    );
    expect(uncheckedBanner).toContain('<p class="lower-bound">The shortfall could not be checked');
    expect(uncheckedBanner).toContain(
      '<p class="muted"><data value="0" data-figure="completeness.lower_bound_sessions">',
    );
    expect(closed).toContain('<p class="lower-bound"><data value="2" data-figure="completeness.lower_bound_sessions">');
    expect(closed).not.toContain('<ul class="notes">');
  });

  it('R4-3, R4-10: unreadable values listed per column in a sentence; other notes as a list', () => {
    const d = small((d) => {
      d.completeness.unreadable = { ...d.completeness.unreadable, total_tokens: 3, occurred_at: 1 };
      d.completeness.notes = ['a plain note', 'another'];
    });
    const banner = section(renderHtml(d), 'completeness');
    expect(words(banner)).toContain(
      'Values the report could not read, each not reported for its figure (every other figure is exact): total_tokens 3 , occurred_at 1 .',
    );
    expect(banner).toContain('<p class="lower-bound">Values the report could not read');
    expect(banner).toContain(
      '<ul class="notes"><li data-text="" dir="auto">a plain note</li><li data-text="" dir="auto">another</li></ul>',
    );
  });

  it('R4-10: a note loses its rule ids however they are written, and only the lower-bound note naming capture_since is dropped', () => {
    const notes = (list: string[]) => {
      const d = small((d) => {
        d.completeness.notes = list;
      });
      return [...section(renderHtml(d), 'completeness').matchAll(/<li data-text="" dir="auto">(.*?)<\/li>/g)].map(
        (m) => m[1],
      );
    };
    expect(
      notes([
        'one (R3-8) two',
        'three (R3-8, AC-25) four',
        'five (see this; AC-25) six',
        'seven R12-3 eight AC-4',
        'a lower bound, but not of capture',
        'capture_since alone',
        // after the 2026-12-02 mutation run of html.ts: no space, several digits, a list without spaces
        'a (see;AC-25) b',
        'c (see; R12-3) d',
        'e(AC-25) f',
        'g (R12-3) h',
        'i (AC-25, R3-8) j',
        'k (R3-8,AC-25) l',
        'm (AC-1, R12-3) n',
        'q,R3-8 r',
        'o R12-34 p',
      ]),
    ).toEqual([
      'one two',
      'three four',
      'five (see this) six',
      'seven eight',
      'a lower bound, but not of capture',
      'capture_since alone',
      'a (see) b',
      'c (see) d',
      'e f',
      'g h',
      'i j',
      'k l',
      'm n',
      'q, r',
      'o p',
    ]);
    expect(notes(['before capture_since: a lower bound'])).toEqual([]);
  });

  it('R3-9, R6-6: the totals, each label and its figures written out, spend apart from cost and context at finish', () => {
    const totals = section(renderHtml(small()), 'totals');
    expect(words(totals)).toBe(
      "Totals Subagents 12 Top-level / nested 12 / 0 Live / backfill 6 / 6 Async / settled / failed 9 / 10 / 0 Turns with a fan-out 6 Executions (unknown rows) 1 ( 0 ) Context at finish, tokens, as reported 82,474 (n = 2 ) Context at finish: median / p95 / largest 38,411 / 171,902 / 203,377 Tool uses 34 (n = 2 ) Duration: median / p95 / longest 48.2 s / 5 min 2 s / 20 min 4 s (n = 2 ) Sessions / contexts 1 / 13 Rows whose session is gone 0 Cost $0.92 Estimated part of the cost $0.0917 Cost by source measured $0.5504 , list-priced $0.2752 , other $0.0918 Cost per context $0.0706 Spend (each subagent’s own run) usage known for 7 of 12 subagents ( 7 final, 0 unpriced) What their runs cost (measured, list-priced) $1.29 (measured $0.90 , list-priced $0.39 ) One subagent’s run: median / p95 / largest $0.13 / $0.60 / $1.18 First observed 1 Oct 2026, 00:00 UTC Last observed 30 Oct 2026, 00:00 UTC What a subagent spent is its own run's usage, read from the agent's record of it (Claude Code transcripts, OpenCode child sessions, Codex rollouts) by subagent-context spend ; its context at finish is not spend and is never added to it. Spend is shown apart from the ledger's cost, which may already include it: no figure adds the two. Costs are in US dollars, from the host's cost ledger (office_cost_events, which counts subcents: ten thousand to the dollar); ≥ marks a cost that leaves out unpriced events, each with its own count. The estimated part is the cost of the events whose token counts the host marked as not authoritative. Measured is the cost the agent reported itself, list-priced what the host priced at a list price, other the events that say neither. Durations are what the subagents reported. Context at finish is the tokens of context each subagent reported having when it finished (its last request): not what it consumed over its run, and not what the cost paid for.",
    );
    const none = small((d) => {
      d.totals = {
        ...d.totals,
        sessions: null,
        contexts: null,
        cost_subcents: null,
        estimated_cost_subcents: null,
        cost_per_context_subcents: null,
        first_observed_at: null,
        last_observed_at: null,
        duration_ms: { reported: 0, p50: null, p95: null, max: null },
      };
    });
    expect(words(section(renderHtml(none), 'totals'))).toContain(
      'Duration: median / p95 / longest not reported / not reported / not reported (n = 0 ) Sessions / contexts n/a / n/a Rows whose session is gone 0 Cost no cost data Estimated part of the cost n/a Cost by source no cost data Cost per context n/a Spend',
    );
    expect(words(section(renderHtml(none), 'totals'))).toContain('First observed none Last observed none');
  });

  it('R3-9: the tasks table: its caption (all, or the first of more), headings, each row with its title, id and trees link', () => {
    const d = small();
    const all = section(renderHtml(d, { trees: 2 }), 'tasks');
    expect(words(all)).toMatch(
      /^Tasks 3 tasks, sorted by key\. Context at finish is the tokens of context each subagent reported having when it finished, summed \(n: rows that reported it\): not what it consumed, and not what the cost paid for\. Cost is from the host's cost events; ≥ marks a cost that leaves out unpriced events\. A task's trees link goes to its most recent turn below\. Task Subagents Context at finish, tokens, as reported Sessions Contexts Cost Cost per context Task 0: make the thing faster task-0 trees /,
    );
    expect(all).toContain(
      '<thead><tr><th scope="col">Task</th><th scope="col" class="num">Subagents</th><th scope="col" class="num">Context at finish, tokens, as reported</th><th scope="col" class="num">Sessions</th><th scope="col" class="num">Contexts</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Cost per context</th></tr></thead>',
    );
    // each task with a tree on the page links to the first (most recent) of them; task-2's is not drawn
    expect(all).toContain('<a class="to-tree" href="#turn-0">trees</a>');
    expect(all).toContain('<a class="to-tree" href="#turn-1">trees</a>');
    expect(all).toContain('<tr data-key="task-2">');
    const row2 = all.slice(all.indexOf('<tr data-key="task-2">'));
    expect(row2.slice(0, row2.indexOf('</th>'))).not.toContain('to-tree');
    expect(all).toContain('<bdi class="task-title" data-text="">Task 0: make the thing faster</bdi>');
    const some = section(renderHtml(d, { tasks: 2 }), 'tasks');
    expect(words(some)).toMatch(/^Tasks The first 2 of 3 tasks, sorted by key\. Context at finish/);
    expect(some).toContain('The first <data value="2" data-shown="">2</data> of ');
    expect(some.match(/<tr data-key=/g)).toHaveLength(2);
    // a task's link goes to its most recent turn, the first listed: two turns of task-0
    const twice = small((d) => {
      d.trees[1] = { ...d.trees[1]!, task_id: 'task-0' };
    });
    const linked = section(renderHtml(twice), 'tasks');
    expect(linked.match(/href="#turn-0"/g)).toHaveLength(1);
    expect(linked).not.toContain('href="#turn-1"');
    // links only to the trees drawn on the page
    expect(section(renderHtml(d, { trees: 1 }), 'tasks')).not.toContain('href="#turn-1"');
    const untitled = small((d) => {
      d.groups[0]!.title = null;
      d.groups[1]!.key = null;
      d.groups[2]!.key = '';
    });
    const rows = section(renderHtml(untitled), 'tasks');
    expect(rows).toContain('<th scope="row"><code dir="auto">task-0</code>');
    expect(rows).toContain('<tr data-key="">\n<th scope="row"><bdi class="task-title" data-text="">Task 1');
    expect(words(rows)).toContain('Task 1: make the thing work (not reported) 5 41,237 (n = 1 ) 1 6');
    expect(words(rows)).toContain('Task 2: make the thing work (empty) 4 not reported (n = 0 ) 1 5');
    // a task with no sessions, contexts or cost in the store: n/a, never 0 or nothing (R3-6)
    const unknown = small((d) => {
      d.groups[0] = {
        ...d.groups[0]!,
        sessions: null,
        contexts: null,
        cost_subcents: null,
        cost_per_context_subcents: null,
      };
    });
    const first = section(renderHtml(unknown), 'tasks');
    const row0 = first.slice(
      first.indexOf('<tr data-key="task-0">'),
      first.indexOf('</tr>', first.indexOf('<tr data-key="task-0">')),
    );
    expect(words(row0)).toMatch(/^Task 0: make the thing faster task-0 trees \d+ .* n\/a n\/a n\/a n\/a$/);
    const noTasks = small((d) => {
      d.filters = { ...d.filters, by: null };
      d.series = { ...d.series, task: undefined };
    });
    expect(words(section(renderHtml(noTasks), 'tasks'))).toBe('Tasks This document has no task groups.');
  });

  it('issue 58: the trees are listed by their last activity, and each summary shows it first, so the list reads sorted whatever the turns’ starts', () => {
    // a turn that started first but was active last comes first
    const d = small((doc) => {
      const [a, b] = doc.trees;
      doc.trees = [
        { ...a!, started_at: '2026-10-01T00:00:00.000000Z' },
        { ...b!, started_at: '2026-10-20T00:00:00.000000Z' },
      ];
    });
    const summaries = [
      ...section(renderHtml(d), 'trees').matchAll(/<summary>last activity <time datetime="([^"]+)">/g),
    ].map((m) => m[1]!);
    expect(summaries).toHaveLength(2);
    expect([...summaries].sort().reverse()).toEqual(summaries);
    expect(words(section(renderHtml(d), 'trees'))).toContain('started 1 Oct 2026, 00:00 UTC');
  });

  it('R3-9, R4-10: the trees: the note, each turn’s summary and each subagent’s line written out', () => {
    const page = renderHtml(small(), { trees: 2 });
    const trees = section(page, 'trees');
    expect(words(trees)).toMatch(
      /^Fan-out trees The 2 turns with the most recent activity \(of 3 in the document\), by their last activity \(a subagent observed\), latest first; each shows its last activity, then when the turn started\. Open one to see its subagents, nested under their parent\. The status is an async subagent's own \(agent_status\), else its tool call's \(tool_status\)\. last activity 30 Oct 2026, 00:00 UTC · started 30 Oct 2026, 00:00 UTC · Task 0: make the thing faster · task task-0 · session session-0 · turn turn-0 · 2 subagents, 1 top-level Explore · claude-sonnet-4 · complete · context at finish 38,041 · tool uses 38 · duration 7 min 47 s · backfill toolu_000000 Look into part 0 of the change general-purpose · model not reported · async_launched · context at finish not reported · tool uses not reported · duration not reported · backfill · async toolu_04pqc8 Look into part 1000 of the change last activity [^·]+ · started 29 Oct 2026, 23:00 UTC · /,
    );
    expect(trees).toContain('<details class="turn" id="turn-0" data-turn="turn-0">');
    expect(trees).toContain('<bdi class="tree-title" data-text="">Task 0: make the thing faster</bdi> · task ');
    expect(trees).toContain('<code dir="auto" class="muted">toolu_000000</code>');
    expect(trees).toContain('<span class="desc"><bdi data-text="">Look into part 0 of the change</bdi></span>');
    expect(words(section(renderHtml(small()), 'trees'))).toMatch(
      /^Fan-out trees The 3 turns with the most recent activity, by their last activity \(a subagent observed\), latest first;/,
    );
    // a turn the document gives no subagents: an empty list, counted as 0
    const empty = small((d) => {
      d.trees = [{ ...d.trees[0]!, subagents: [] }];
    });
    const emptyTrees = section(renderHtml(empty), 'trees');
    expect(words(emptyTrees)).toContain(' · 0 subagents, 0 top-level');
    expect(emptyTrees).toContain('<ul class="tree"></ul>');
    const none = small((d) => {
      d.trees = [];
    });
    expect(words(section(renderHtml(none), 'trees'))).toBe('Fan-out trees This document has no fan-out trees.');
  });

  it('R3-9: a subagent whose type, model or status is not reported, a turn not recorded, an orphan: each in words', () => {
    const d = small((d) => {
      const n = d.trees[0]!.subagents[0]!;
      d.trees[0] = {
        ...d.trees[0]!,
        turn_id: null,
        task_id: 'task-none',
        subagents: [
          {
            ...n,
            subagent_type: null,
            model: null,
            agent_status: null,
            tool_status: null,
            is_async: false,
            orphan: true,
            description: null,
            children: [],
          },
        ],
      };
    });
    const trees = section(renderHtml(d), 'trees');
    const first = trees.slice(0, trees.indexOf('</details>'));
    expect(words(first)).toMatch(
      / · task task-none · session session-0 · turn not recorded · 1 subagent, 1 top-level type not reported · model not reported · no status · context at finish /,
    );
    expect(words(first)).toContain(' · backfill · parent not found toolu_000000');
    expect(first).toContain('data-turn=""');
    expect(first).toContain('<span class="status" title="agent_status">no status</span>');
    expect(first).toContain(
      '<span class="status failed" title="parent_tool_call_id names no row of this turn">parent not found</span>',
    );
    expect(first).not.toContain('class="desc"');
    // no description: the node ends with its tool call id
    expect(first).toContain('<code dir="auto" class="muted">toolu_000000</code>\n\n</div>');
    for (const status of ['error', 'failed', 'cancelled', 'completed']) {
      const s = small((d) => {
        d.trees[0]!.subagents[0] = { ...d.trees[0]!.subagents[0]!, is_async: false, tool_status: status };
      });
      const pill = section(renderHtml(s), 'trees').match(/<span class="status([^"]*)" title="tool_status">/)![1];
      expect(pill, status).toBe(status === 'completed' ? '' : ' failed');
    }
  });

  it('R4-4: a turn past nodesPerTurn says how many more; past the byte budget the page stops drawing turns and says how many are left', () => {
    const d = small();
    const at = d.trees[0]!.started_at;
    d.trees = [hugeTurn('wide', 201, at)];
    const one = section(renderHtml(d), 'trees');
    expect(one.match(/<div class="node">/g)).toHaveLength(200);
    expect(words(one)).toContain(
      'and 1 more subagent in this turn (the page draws at most 200 a turn; report --json --trees has them all).',
    );
    d.trees = [hugeTurn('wide', 200, at)];
    expect(section(renderHtml(d), 'trees')).not.toContain('more subagent');
    // 800,000 bytes of trees: about four turns of 200 subagents; twenty asked for
    d.trees = Array.from({ length: 20 }, (_, i) => ({ ...hugeTurn('wide', 300, at), turn_id: `t${i}` }));
    const many = section(renderHtml(d, { trees: 20 }), 'trees');
    const drawn = many.match(/<details class="turn"/g)!.length;
    expect(drawn).toBeGreaterThan(1);
    expect(drawn).toBeLessThan(20);
    expect(words(many)).toContain(
      `and ${20 - drawn} more turns (the page stays under 2 MB; report --json --trees has them all).`,
    );
    expect(words(many)).toContain(`The ${drawn} turns with the most recent activity (of 20 in the document)`);
    // the last turn drawn stopped where the budget ran out, and says so
    const last = many.slice(many.lastIndexOf('<details class="turn"'));
    const nodes = last.match(/<div class="node">/g)!.length;
    expect(nodes).toBeLessThan(200);
    expect(words(last)).toContain(`and ${300 - nodes} more subagents in this turn`);
    // under the budget it is about the page's bytes (UTF-8): the trees' markup stays under 800,000 and some
    expect(Buffer.byteLength(many, 'utf8')).toBeLessThan(800_000 + 20_000);
    expect(Buffer.byteLength(many, 'utf8')).toBeGreaterThan(800_000 - 20_000);
    expect(countNodes(d.trees[0]!.subagents)).toBe(300);
  });

  it('R3-9, R4-10: each chart is a figure named by its title and caption, its drawings labelled, its numbers in a table under it', () => {
    const charts = section(renderHtml(small()), 'charts');
    expect(charts).toContain('<section id="charts" aria-labelledby="charts-h">\n<h2 id="charts-h">Charts</h2>');
    expect(charts).toContain(
      '<figure class="chart" id="chart-per-day">\n<h3 id="chart-per-day-title">Subagents per day, and their context at finish</h3>\n<div class="drawing"><svg role="img" aria-labelledby="chart-per-day-title chart-per-day-caption" class="wide" width="540"',
    );
    expect(charts).toContain(
      '<svg role="img" aria-labelledby="chart-per-day-title chart-per-day-caption" class="narrow" width="340"',
    );
    expect(charts).toContain('<figcaption id="chart-per-day-caption">2 days, on a time axis:');
    expect(charts).toContain(
      '<details class="numbers"><summary>The numbers</summary>\n<div class="scroll" tabindex="0" role="region" aria-label="Subagents per day, and their context at finish: the numbers">',
    );
    expect(charts).toContain(
      '<thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Subagents</th><th scope="col" class="num">Context at finish, tokens, as reported</th></tr></thead>',
    );
    expect(charts).toContain(
      '<tr><th scope="row"><bdi data-text="">1 Oct 2026</bdi></th><td class="num"><data value="6" data-figure="series.day.0.subagents">6</data></td>',
    );
    expect(charts).not.toContain('more row');
    // nothing left out: the table ends there
    expect(charts).toContain(
      '</tbody>\n</table>\n\n</div>\n</details>\n</figure><figure class="chart" id="chart-live-backfill">',
    );
    // more type rows than the table lists: it says how many more
    const types = makeReportDocument({ types: 60 });
    expect(words(section(renderHtml(types), 'charts'))).toContain('and 11 more rows (report --json has them all)');
    const fewer = makeReportDocument({ types: 50 });
    expect(words(section(renderHtml(fewer), 'charts'))).toContain('and 1 more row (report --json has them all)');
    // nothing to plot: said, no drawing, no table
    const empty = makeReportDocument({ subagents: 0, days: 0, tasks: 0, types: 0, models: 0, trees: 0 });
    empty.series = { ...empty.series, type: [] };
    const fanOut = section(renderHtml(empty), 'charts');
    const figure = fanOut.slice(fanOut.indexOf('<figure class="chart" id="chart-fan-out">'));
    expect(figure.slice(0, figure.indexOf('</figure>'))).toBe(
      '<figure class="chart" id="chart-fan-out">\n<h3 id="chart-fan-out-title">Fan-out per turn</h3>\n<p class="empty">Nothing to plot.</p>\n<figcaption id="chart-fan-out-caption">No turn launched a subagent in scope.</figcaption>\n\n',
    );
  });
});

describe('the page’s limits, written out (R4-2, R4-4)', () => {
  it('R4-4: host text past 160 characters (an id past 80) is cut, its full length stated', () => {
    const d = small((d) => {
      d.groups[0]!.title = 't'.repeat(161);
      d.groups[1]!.title = 'u'.repeat(160);
      d.groups[0]!.key = 'k'.repeat(81);
      d.groups[1]!.key = 'j'.repeat(80);
    });
    const tasks = section(renderHtml(d), 'tasks');
    expect(tasks).toContain(
      `<bdi class="task-title" data-text="">${'t'.repeat(160)}</bdi><span class="cut" data-text="">… (161 characters)</span>`,
    );
    expect(tasks).toContain(`<bdi class="task-title" data-text="">${'u'.repeat(160)}</bdi><code`);
    expect(tasks).toContain(
      `<code dir="auto">${'k'.repeat(80)}</code><span class="cut" data-text="">… (81 characters)</span>`,
    );
    expect(tasks).toContain(`<code dir="auto">${'j'.repeat(80)}</code></th>`);
  });

  it('R4-4: nesting is drawn eight levels deep; from the ninth a subagent states its depth; the lists are balanced', () => {
    const d = small();
    d.trees = [hugeTurn('deep', 12, d.trees[0]!.started_at)];
    const trees = section(renderHtml(d), 'trees');
    expect(trees).not.toContain('depth 8 ·');
    expect(trees).toContain('<span class="muted depth">depth 9 ·</span>');
    expect(trees).toContain('depth 11 ·');
    const count = (s: string) => trees.split(s).length - 1;
    expect(count('<ul class="tree">')).toBe(9);
    expect(count('<ul')).toBe(count('</ul>'));
    expect(count('<li>')).toBe(count('</li>'));
    // a wide turn: one list, every subagent an item of it
    d.trees = [hugeTurn('wide', 5, d.trees[0]!.started_at)];
    const wide = section(renderHtml(d), 'trees');
    expect(wide.split('<ul class="tree">').length - 1).toBe(1);
    expect(wide.split('<li>').length - 1).toBe(5);
    expect(wide.split('</li>').length - 1).toBe(5);
    // back up from a nested subagent to its parent's sibling: the nested list closes first
    const mixed = small();
    const at = mixed.trees[0]!.started_at;
    const [a, b] = hugeTurn('wide', 2, at).subagents;
    const child = { ...a!, tool_call_id: 'nested', parent_tool_call_id: a!.tool_call_id, children: [] };
    mixed.trees = [{ ...mixed.trees[0]!, subagents: [{ ...a!, children: [child] }, b!] }];
    const back = section(renderHtml(mixed), 'trees');
    const from = back.indexOf('>nested</code>');
    expect(back.slice(from, back.indexOf(`>${b!.tool_call_id}</code>`))).toContain('</li></ul></li><li>');
  });
});
