/*
 * The page's one escaping boundary (docs/page.md#escaping): every string that came from the
 * database (titles, descriptions, types, models, ids, notes) reaches the HTML through `text()`,
 * in element content and in double-quoted attribute values alike. A `description` of
 * `<script>…</script>` is shown as those characters and runs nothing; `</style>` cannot close the
 * style sheet; quotes cannot end an attribute.
 */

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  // U+2028/U+2029 are harmless in HTML but end a line in a script; written as references they stay
  // visible as the characters they are wherever the page is copied.
  '\u2028': '&#x2028;',
  '\u2029': '&#x2029;',
};

// C0 controls other than tab, LF and CR, DEL and the C1 controls are parse errors in HTML (or,
// like ESC and BEL, terminal commands when the file is printed): they are shown as U+FFFD (R4-2).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
export const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** The HTML text of a string from anywhere (element content or a double-quoted attribute value). */
export function text(value: string): string {
  return value.replace(CONTROL, '\uFFFD').replace(/[&<>"'\u2028\u2029]/g, (c) => ENTITIES[c]!);
}

/** A tagged template: every interpolated value is escaped unless it is already `Html`. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlPart = Html | string | number | null | undefined | readonly HtmlPart[];

function part(value: HtmlPart): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  return text(String(value));
}

/** `html\`<td>${title}</td>\`` escapes `title`; nested `html` fragments and arrays of them pass through. */
export function html(strings: TemplateStringsArray, ...values: HtmlPart[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Markup that is already safe (the page's own markup and style sheet). */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/**
 * The charts' SVG from ECharts: it escapes markup characters in its labels but passes controls
 * through, so the boundary's control rule applies to the whole drawing too (R4-2: no raw control
 * character anywhere in the file), and U+2028/U+2029 become references as in text().
 */
export function chartMarkup(svg: string): Html {
  return new Html(svg.replace(CONTROL, '\uFFFD').replace(/[\u2028\u2029]/g, (c) => ENTITIES[c]!));
}
