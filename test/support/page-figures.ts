/*
 * Reading the page's figures back out of its HTML (lib/report/render/html.ts marks each one with
 * the path in the report document it came from), so a test can hold every number on the page to
 * the `--json` report (R3-9).
 */

export interface PageFigure {
  path: string;
  /** the value attribute: a number, null (shown as words), or an instant's text */
  value: number | string | null;
  /** what the reader sees */
  shown: string;
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

export function decode(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39|#x([0-9a-f]+));/gi, (m, name: string, hex?: string) =>
    hex !== undefined ? String.fromCodePoint(Number.parseInt(hex, 16)) : (ENTITY[name] ?? m),
  );
}

/** The HTML of `<section id="…">` up to its end (sections do not nest on the page). */
export function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}"`);
  if (start < 0) throw new Error(`the page has no section #${id}`);
  return html.slice(start, html.indexOf('</section>', start) + '</section>'.length);
}

/** Every figure in `html`: `<data value data-figure>`, `<time datetime data-figure>`, null instants. */
export function pageFigures(html: string): PageFigure[] {
  const out: PageFigure[] = [];
  for (const m of html.matchAll(/<data (?:class="none" )?value="([^"]*)" data-figure="([^"]*)">([^<]*)<\/data>/g)) {
    out.push({ path: m[2]!, value: m[1] === 'null' ? null : Number(m[1]), shown: decode(m[3]!) });
  }
  for (const m of html.matchAll(/<time datetime="([^"]*)" data-figure="([^"]*)">([^<]*)<\/time>/g)) {
    out.push({ path: m[2]!, value: decode(m[1]!), shown: decode(m[3]!) });
  }
  for (const m of html.matchAll(/<span class="none" data-figure="([^"]*)" data-null="">([^<]*)<\/span>/g)) {
    out.push({ path: m[1]!, value: null, shown: decode(m[2]!) });
  }
  return out;
}

/**
 * The value at a dotted path (`series.task.3.tokens.sum`, `groups.length`) of a document. A tree's
 * `nodes.k` is its k-th subagent in pre-order (parents before children, siblings in order): the
 * page's path for a node, which does not grow with depth (R4-4); found here without recursion.
 */
export function resolve(doc: unknown, path: string): unknown {
  let at: unknown = doc;
  const keys = path.split('.');
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (at === null || typeof at !== 'object') throw new Error(`${path}: nothing at ${key}`);
    if (key === 'nodes' && 'subagents' in at) {
      at = nthInPreorder((at as { subagents: Tree[] }).subagents, Number(keys[++i]));
      continue;
    }
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

interface Tree {
  children: Tree[];
}

function nthInPreorder(top: Tree[], k: number): Tree | undefined {
  const stack: Tree[] = [...top].reverse();
  for (let seen = 0; stack.length > 0; seen++) {
    const node = stack.pop()!;
    if (seen === k) return node;
    for (let c = node.children.length - 1; c >= 0; c--) stack.push(node.children[c]!);
  }
  return undefined;
}

/**
 * Digits on the page that are not a marked figure: everything left after removing the figures,
 * instants, ids (`<code>`), strings from the document (`data-text`), the page's own labels
 * (`<dt>`: "p95") and the markup itself.
 */
export function strayNumbers(html: string): string[] {
  const text = html
    .replace(/<data [^>]*>[^<]*<\/data>/g, ' ')
    .replace(/<time [^>]*>[^<]*<\/time>/g, ' ')
    .replace(/<code[^>]*>[^<]*<\/code>/g, ' ')
    .replace(/<dt>[^<]*<\/dt>/g, ' ')
    .replace(/<(\w+) [^>]*data-text=""[^>]*>[^<]*<\/\1>/g, ' ')
    .replace(/<[^>]*>/g, ' ');
  return decode(text).match(/\d[\d,.]*/g) ?? [];
}
