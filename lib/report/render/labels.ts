import { dollars } from '../../money.js';
import type { FanOutCostBucket, ReportDocument } from '../document.js';

/**
 * Words every renderer (table, CSV, page) shows for the same thing, so a person reads one label for
 * one meaning (issue 34): a group whose key the host never reported (NULL) is "(not reported)",
 * distinct from a key the host stored as '' ("(empty)"), which is a value, not a missing one.
 */
export const NOT_REPORTED_LABEL = '(not reported)';
export const EMPTY_KEY_LABEL = '(empty)';

/**
 * R5-1: the words beside a cost that leaves out unpriced events (a lower bound, shown "≥"):
 * "3 events unpriced", the same in the table and on the page.
 */
export const unpricedWords = (events: number): string =>
  `${events.toLocaleString('en-US')} event${events === 1 ? '' : 's'} unpriced`;

/** R5-1: what the renderers say when `unpriced_events` is null (the ledger has no cost_source, or no ledger). */
export const UNPRICED_NOT_KNOWN = 'not known (the ledger does not record which events were priced)';

/**
 * R5-3: why `fan_out_cost` is null, from the document's notes (the builder states it there once):
 * the note that says so, without its "… is null: " lead; the cost ledger's own note where the store
 * has none.
 */
export function fanOutCostGap(notes: readonly string[]): string {
  const own = notes.find((n) => n.startsWith('fan_out_cost is null: '));
  if (own !== undefined) return own.slice('fan_out_cost is null: '.length);
  const ledger = notes.find((n) => n.startsWith('cost figures are null: '));
  if (ledger !== undefined) return ledger.slice('cost figures are null: '.length);
  return 'see the notes';
}

/**
 * R5-3, R6-6: what a turn's cost includes, and where what each subagent spent comes from instead
 * (the table, the CSV's docs and the page say the same).
 */
export const TURN_COST_WORDS =
  "A turn's cost is the sum of its cost events; where the agent reports the session's cost (Claude Code does), it includes what the turn's subagents spent. It is the whole turn's cost, never a per-subagent figure: what each subagent spent comes from the agents' own records of its run (Claude Code transcripts, OpenCode child sessions, Codex rollouts), read by `subagent-context spend`, and is shown apart as spend.";

/** What a spreadsheet runs as a formula when a cell starts with it: csv-stringify's escape_formulas list, the fullwidth forms included. */
const FORMULA_START = /^[=+\-@\t\r＝＋－＠]/;

/**
 * R4-6 (docs/report.md#one-rule-for-host-text): host text in the table and the CSV, read back
 * exactly by one rule: a leading `'` is an escape, and one is added to a value that starts with
 * `'` or with a formula character (`=`, `+`, `-`, `@`, tab, CR). So `=1+1` shows as `'=1+1` and
 * `'=1+1` as `''=1+1`: drop one leading `'` (when there is one) to get the stored text.
 */
export function escapedText(text: string): string {
  return text.startsWith("'") || FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * A group key (or a model) in the table and the CSV: NULL is `(not reported)`, '' is `(empty)`, and a
 * host value spelled like either label carries the leading `'` as well, so no two keys print alike:
 * a cell that is exactly a label is the label; otherwise drop one leading `'` to get the key.
 */
export function keyText(key: string | null): string {
  if (key === null) return NOT_REPORTED_LABEL;
  if (key === '') return EMPTY_KEY_LABEL;
  return key === NOT_REPORTED_LABEL || key === EMPTY_KEY_LABEL ? `'${key}` : escapedText(key);
}

/**
 * R6-10: the line that closes the fan-out cost's sum (the table, the CSV's comment cells and the
 * page say the same): the costed turns' cost over every bucket, the priced events of the turns
 * that are not costed and the events on no turn, against the totals' cost. Without filters they
 * add up, each event once; with a filter or a window the turns and the events are selected apart
 * (docs/report.md#what-a-fan-out-costs), so they need not, and the line says so. Every subcent is
 * shown (lib/money.ts at 4 decimals), so the sum adds up as printed. Null without the section.
 */
export function fanOutCostClosing(doc: ReportDocument): string | null {
  const fc = doc.fan_out_cost;
  if (fc === null) return null;
  const sum = (figure: (b: FanOutCostBucket) => number | null) =>
    fc.buckets.reduce<number | null>((total, b) => {
      const value = figure(b);
      return value === null ? total : (total ?? 0) + value;
    }, null);
  const costed = sum((b) => b.cost_subcents);
  const uncosted = sum((b) => b.uncosted_turns_priced_cost_subcents);
  const unattributed = fc.unattributed_cost_subcents;
  const total = doc.totals.cost_subcents;
  // a part with no event is "nothing", never $0 (NULL is never 0)
  const money = (subcents: number | null) => (subcents === null ? 'nothing' : dollars(subcents, { decimals: 4 }));
  const parts = `${money(costed)} in costed turns + ${money(uncosted)} priced in turns not costed + ${money(unattributed)} on no turn`;
  const closes = (costed ?? 0) + (uncosted ?? 0) + (unattributed ?? 0) === (total ?? 0);
  if (closes) return `${parts} = ${money(total)}, the total cost`;
  const f = doc.filters;
  const filtered = [f.since, f.until, f.task, f.session].some((v) => v !== null);
  return `${parts}; the total cost is ${money(total)}: ${
    filtered
      ? 'a filter or a window selects turns and cost events apart, so the two need not agree'
      : 'they do not agree (see the notes)'
  }`;
}
