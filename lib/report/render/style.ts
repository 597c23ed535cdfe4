/*
 * The page's style sheet and Content-Security-Policy (docs/page.md#content-security-policy).
 *
 * The policy: nothing may load or run. `default-src 'none'` covers scripts (there are none: the
 * charts are SVG drawn on the server), fonts, images, frames and fetches, so the file makes no
 * request when it is opened. Styles are the one exception, `style-src 'unsafe-inline'`: ECharts'
 * SVG carries `style="…"` attributes, which a hash cannot allow without 'unsafe-hashes' and one
 * hash per distinct attribute. Inline style is safe here because nothing from the database
 * reaches the markup unescaped (lib/report/render/escape.ts), and with every URL source at 'none'
 * a style cannot fetch anything either.
 */

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "img-src 'none'",
  "script-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export const STYLE = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1d21; --muted: #4f5560; --line: #d5d8de; --panel: #f4f6f8;
  --bad-bg: #fde8e8; --bad-fg: #8a1010; --bad-line: #c62828; --ok-fg: #1b5e20; --warn-fg: #7a4b00;
  --link: #1f4fb3;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171a; --fg: #e8eaed; --muted: #aab1bc; --line: #3a3f47; --panel: #1e2126;
    --bad-bg: #3b1414; --bad-fg: #ffb4b4; --bad-line: #ef5350; --ok-fg: #a5d6a7; --warn-fg: #ffcc80;
    --link: #9cb9ff;
  }
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0 auto; max-width: 1120px; padding: 24px; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; overflow-wrap: anywhere; }
@media (max-width: 600px) { body { padding: 12px; } }
main, section, figure, details { min-width: 0; max-width: 100%; }
a { color: var(--link); }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.2rem; margin: 32px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 1rem; margin: 0 0 4px; }
p.meta, .muted { color: var(--muted); }
code { font: 0.86em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
bdi, code { unicode-bidi: isolate; }
.cut { color: var(--muted); font-size: 0.85em; }
data, .num { font-variant-numeric: tabular-nums; }
.none { color: var(--muted); }
.banner { border: 1px solid var(--line); border-left: 6px solid var(--ok-fg); background: var(--panel);
  padding: 12px 16px; border-radius: 6px; }
.banner h2 { margin-top: 0; }
.banner.open { border-left-color: var(--bad-line); }
.banner dl, .totals dl { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 16rem), 1fr)); gap: 8px 24px; margin: 8px 0; }
.banner dt, .totals dt { color: var(--muted); font-size: 0.85rem; }
.banner dd, .totals dd { margin: 0; font-weight: 600; }
.shortfall { background: var(--bad-bg); color: var(--bad-fg); border: 1px solid var(--bad-line); border-radius: 6px;
  padding: 8px 12px; margin: 8px 0; }
.shortfall strong { font-size: 1.05rem; }
.shortfall ul { margin: 4px 0 0; padding-left: 20px; }
.verified { color: var(--ok-fg); font-weight: 600; }
.lower-bound { color: var(--warn-fg); }
.unpriced { color: var(--muted); font-size: 0.85em; }
.unpriced.cell { display: block; }
#tasks thead th.num { white-space: normal; }
.notes { margin: 8px 0 0; padding-left: 20px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 480px), 1fr)); gap: 16px; }
figure.chart { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; background: var(--panel); }
figure.chart svg { display: block; width: 100%; height: auto; }
figure.chart svg.narrow { display: none; }
@media (max-width: 560px) {
  figure.chart svg.wide { display: none; }
  figure.chart svg.narrow { display: block; }
}
figure.chart figcaption { color: var(--muted); font-size: 0.85rem; }
figure.chart svg text { fill: var(--fg); stroke: none; }
figure.chart svg path[stroke="#dbdee4"], figure.chart svg path[stroke="#e0e6f1"], figure.chart svg path[stroke="#E0E6F1"] { stroke: var(--line); }
figure.chart svg path[stroke="#54555a"], figure.chart svg path[stroke="#6e7079"], figure.chart svg path[stroke="#6E7079"] { stroke: var(--muted); }
details.numbers > summary { cursor: pointer; color: var(--link); font-size: 0.9rem; }
.scroll { overflow-x: auto; max-width: 100%; }
.scroll:focus-visible { outline: 2px solid var(--link); }
figure.chart .empty { padding: 24px 0; color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
caption { text-align: left; color: var(--muted); padding: 4px 0; caption-side: bottom; }
th, td { padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: normal; }
tbody th[scope="row"] { min-width: 12rem; font-weight: 400; }
tbody th[scope="row"] code { overflow-wrap: anywhere; }
/* issue 51: on a phone the task column gives way, so the figures show before the table's own scroll;
   the caption stays in view of the box (it is as wide as the table otherwise, cut by the scroll) */
@media (max-width: 600px) {
  tbody th[scope="row"] { min-width: 5rem; }
  th, td { padding: 6px 4px; }
  thead th.num { white-space: normal; }
  .scroll > table > caption { position: sticky; left: 0; max-width: calc(100vw - 24px); }
}
th { text-align: left; font-weight: 600; }
thead th { background: var(--panel); }
time { white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
.task-title { display: block; font-weight: 600; }
.to-tree { font-size: 0.85rem; white-space: nowrap; }
details.turn { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; background: var(--panel); }
details.turn > summary { cursor: pointer; padding: 6px 10px; }
details.turn > summary:focus-visible { outline: 2px solid var(--link); }
ul.tree { list-style: none; margin: 0; padding: 4px 10px 8px 18px; }
ul.tree ul.tree { border-left: 2px solid var(--line); margin-left: 6px; padding-bottom: 0; }
ul.tree li { margin: 4px 0; }
.node .type { font-weight: 600; }
.node .status { border: 1px solid var(--line); border-radius: 4px; padding: 0 4px; font-size: 0.8rem; display: inline-block; white-space: nowrap; }
.node .status.failed { color: var(--bad-fg); border-color: var(--bad-line); }
.node .desc { display: block; color: var(--muted); white-space: pre-wrap; overflow-wrap: anywhere; }
.more { color: var(--muted); margin: 4px 10px 8px; }
footer { margin-top: 32px; color: var(--muted); font-size: 0.8rem; }
@media print {
  :root { --bg: #fff; --fg: #000; --muted: #333; --panel: #fff; --line: #999; }
  body { max-width: none; padding: 0; font-size: 11pt; }
  .charts { display: block; }
  figure.chart, details.turn, tr { break-inside: avoid; }
  details.turn::details-content { content-visibility: visible; display: block; }
}
`;
