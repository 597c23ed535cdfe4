/**
 * Words every renderer (table, CSV, page) shows for the same thing, so a person reads one label for
 * one meaning (issue 34): a group whose key the host never reported (NULL) is "(not reported)",
 * distinct from a key the host stored as '' ("(empty)"), which is a value, not a missing one.
 */
export const NOT_REPORTED_LABEL = '(not reported)';
export const EMPTY_KEY_LABEL = '(empty)';

/** What a spreadsheet runs as a formula when a cell starts with it (csv-stringify's escape_formulas list). */
const FORMULA_START = /^[=+\-@\t\r]/;

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
