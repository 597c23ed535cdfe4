/*
 * The one JSON serializer of the documents the project prints (`--json`, R4-4). JSON.stringify
 * recurses once per nesting level, so a fan-out tree whose parent chain is 100,000 deep (host data
 * can be any depth) overflows the stack; this one walks the value with an explicit stack instead.
 * Its output equals JSON.stringify(value, replacer, indent) for every value of nesting depth up to
 * MAX_INDENT_LEVELS; deeper levels keep that level's indentation, so the text stays linear in the
 * value's size (a fully indented 100,000-deep chain would be quadratic: tens of gigabytes).
 * V8's JSON.parse is iterative and reads any depth back.
 */

/** Levels beyond this are indented like this one (the text is the same JSON value either way). */
export const MAX_INDENT_LEVELS = 12;

export interface JsonTextOptions {
  /** spaces per level (JSON.stringify's `space`): 0 for compact text */
  indent?: number;
  /** JSON.stringify's replacer function: called with the holder as `this`, after toJSON */
  replacer?: (this: unknown, key: string, value: unknown) => unknown;
}

interface Frame {
  container: object;
  array: boolean;
  keys: readonly string[];
  length: number;
  next: number;
  written: number;
  indent: string;
}

/** A primitive's JSON text; null for an object or array; undefined for what JSON omits. */
function primitiveText(value: unknown): string | null | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt (give a replacer)');
    case 'object':
      return null;
    default:
      return undefined;
  }
}

/** At most this many values in a container JSON.stringify writes whole (nativeText). */
const NATIVE_VALUES = 4_096;

/**
 * R4-12: a small, shallow container's text from JSON.stringify itself, re-indented by the caller
 * (a JSON string holds no raw line feed): walking it here value by value was most of
 * `report --by task --json`'s time at 50,000 groups. Undefined where the walk must do it: deeper
 * than `levels` (JSON.stringify would recurse, or indent past MAX_INDENT_LEVELS; a cycle is
 * deeper than any bound), more than NATIVE_VALUES values, or a toJSON of its own (the walk called
 * it already). The replacer is not called again for the container itself, as the walk did that.
 */
function nativeText(
  container: object,
  levels: number,
  replacer: JsonTextOptions['replacer'],
  gap: string,
): string | undefined {
  if (typeof (container as { toJSON?: unknown }).toJSON === 'function') return undefined;
  let values = 0;
  const fits = (value: object, left: number): boolean => {
    if (left <= 0) return false;
    for (const key in value) {
      if (++values > NATIVE_VALUES) return false;
      const child = (value as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null && !fits(child, left - 1)) return false;
    }
    return true;
  };
  if (!fits(container, levels)) return undefined;
  let root = true;
  const rest =
    replacer === undefined
      ? undefined
      : function (this: unknown, key: string, value: unknown) {
          if (root) {
            root = false;
            return value;
          }
          return replacer.call(this, key, value);
        };
  return JSON.stringify(container, rest, gap);
}

/** JSON.stringify(value, replacer, indent) without recursion (see the file's comment). */
export function jsonText(value: unknown, options: JsonTextOptions = {}): string | undefined {
  const chunks = [...jsonChunks(value, options)];
  return chunks.length === 0 ? undefined : chunks.join('');
}

/** About how many characters jsonChunks gathers before it yields them. */
export const JSON_CHUNK_CHARS = 1 << 16;

/**
 * jsonText's text in pieces of about JSON_CHUNK_CHARS characters (one more value's text at most),
 * nothing for a value JSON omits. R4-12: a document of 500,000 groups is longer than the longest
 * string V8 can make (2^29 − 24 characters), so `--json` writes these pieces as they come.
 */
export function* jsonChunks(value: unknown, options: JsonTextOptions = {}): Generator<string> {
  const gap = ' '.repeat(Math.min(10, Math.max(0, options.indent ?? 0)));
  const replacer = options.replacer;
  const prepare = (holder: object, key: string, raw: unknown): unknown => {
    let v = raw;
    if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') v = toJSON.call(v, key);
    }
    return replacer === undefined ? v : replacer.call(holder, key, v);
  };
  const root = prepare({ '': value }, '', value);
  const first = primitiveText(root);
  if (first !== null) {
    if (first !== undefined) yield first;
    return;
  }

  let out: string[] = [];
  let size = 0;
  const push = (text: string) => {
    out.push(text);
    size += text.length;
  };
  const stack: Frame[] = [];
  const onPath = new Set<object>();
  const open = (container: object, indent: string) => {
    if (onPath.has(container)) throw new TypeError('Converting circular structure to JSON');
    onPath.add(container);
    const array = Array.isArray(container);
    const keys = array ? [] : Object.keys(container);
    const length = array ? (container as unknown[]).length : keys.length;
    stack.push({ container, array, keys, length, next: 0, written: 0, indent });
  };
  open(root as object, '');
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.next >= f.length) {
      stack.pop();
      onPath.delete(f.container);
      const close = f.array ? ']' : '}';
      if (f.written === 0) push(f.array ? '[]' : '{}');
      else push(gap === '' ? close : `\n${f.indent}${close}`);
      continue;
    }
    const key = f.array ? String(f.next) : f.keys[f.next]!;
    f.next++;
    const v = prepare(f.container, key, (f.container as Record<string, unknown>)[key]);
    let text = primitiveText(v);
    if (text === undefined) {
      if (!f.array) continue; // an object member JSON omits
      text = 'null';
    }
    const inner = stack.length > MAX_INDENT_LEVELS ? f.indent : f.indent + gap;
    const separator = f.written === 0 ? (f.array ? '[' : '{') : ',';
    const name = f.array ? '' : `${JSON.stringify(key)}:${gap === '' ? '' : ' '}`;
    push(gap === '' ? `${separator}${name}` : `${separator}\n${inner}${name}`);
    f.written++;
    if (text === null) {
      const whole = nativeText(v as object, MAX_INDENT_LEVELS - stack.length, replacer, gap);
      if (whole === undefined) open(v as object, inner);
      else push(gap === '' ? whole : whole.replaceAll('\n', `\n${inner}`));
    } else push(text);
    if (size >= JSON_CHUNK_CHARS) {
      yield out.join('');
      out = [];
      size = 0;
    }
  }
  if (out.length > 0) yield out.join('');
}
