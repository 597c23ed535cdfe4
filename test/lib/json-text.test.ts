import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JSON_CHUNK_CHARS, jsonChunks, jsonText, MAX_INDENT_LEVELS } from '../../lib/json-text.js';

interface Link {
  id: number;
  children: Link[];
}

/** A chain `{ id, children: [ … ] }` `depth` levels deep, built without recursion. */
function chain(depth: number): Link {
  const root: Link = { id: 0, children: [] };
  let at = root;
  for (let i = 1; i < depth; i++) {
    const next: Link = { id: i, children: [] };
    at.children.push(next);
    at = next;
  }
  return root;
}

describe('jsonText: JSON without recursion (R4-4)', () => {
  it('R4-4: equals JSON.stringify for any JSON value (compact and indented), shallower than the indent cap', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.constantFrom(0, 2, 4), (value, indent) => {
        expect(jsonText(value, { indent })).toBe(JSON.stringify(value, null, indent));
      }),
    );
  });

  it('R4-4: equals JSON.stringify on what JSON drops or changes: undefined, functions, NaN, -0, toJSON, a replacer', () => {
    const value = {
      a: undefined,
      f: () => 1,
      n: Number.NaN,
      i: Number.POSITIVE_INFINITY,
      z: -0,
      list: [undefined, () => 1, Symbol('s'), 1],
      d: new Date(Date.UTC(2026, 11, 1, 17, 41, 25, 512)),
      big: 12n,
      s: 'quote " backslash \\ control \u0001 line \u2028 lone \ud800',
    };
    const replacer = (_k: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);
    expect(jsonText(value, { indent: 2, replacer })).toBe(JSON.stringify(value, replacer, 2));
    expect(jsonText(undefined)).toBeUndefined();
    expect(() => jsonText({ big: 1n })).toThrow(TypeError);
  });

  it('R4-4: a cycle is a TypeError, as JSON.stringify says; a shared (non-cyclic) object is written twice', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => jsonText(loop)).toThrow(/circular/);
    const shared = { x: 1 };
    expect(jsonText({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}');
  });

  it('R4-4: a chain 100,000 deep (where JSON.stringify overflows the stack) serializes and reads back, indented text linear in size', () => {
    const deep = chain(100_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const text = jsonText(deep, { indent: 2 })!;
    // each level is five lines (id, children, the element, two closers), none indented past the cap
    expect(text.length).toBeLessThan(100_000 * (40 + 5 * 2 * MAX_INDENT_LEVELS));
    let at = JSON.parse(text) as Link;
    let depth = 1;
    while (at.children.length > 0) {
      at = at.children[0]!;
      depth++;
    }
    expect([depth, at.id]).toEqual([100_000, 99_999]);
    expect(jsonText(deep)).toBe(text.replace(/\n */g, '').replace(/": /g, '":'));
  });
  it('R4-12: small containers written by JSON.stringify itself give the same text and call the replacer as often, with the same holders and keys', () => {
    const value = {
      a: [1, { b: 2n, c: [3n, { d: 'x' }] }],
      e: { f: 4n },
      wide: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])),
    };
    const calls = (run: (replacer: (this: unknown, key: string, v: unknown) => unknown) => unknown) => {
      const seen: string[] = [];
      const text = run(function (this: unknown, key, v) {
        seen.push(`${Array.isArray(this) ? 'array' : typeof this}:${key}`);
        return typeof v === 'bigint' ? `${v}` : v;
      });
      return { text, seen };
    };
    const ours = calls((replacer) => jsonText(value, { indent: 2, replacer }));
    const native = calls((replacer) => JSON.stringify(value, replacer, 2));
    expect(ours.text).toBe(native.text);
    expect(ours.seen).toEqual(native.seen);
  });

  it('R4-12: a chain deeper than the indent cap keeps the capped indentation whether or not its parts are small', () => {
    const deep = chain(MAX_INDENT_LEVELS + 3);
    const lines = jsonText({ wrap: [deep] }, { indent: 2 })!.split('\n');
    const widest = Math.max(...lines.map((l) => l.length - l.trimStart().length));
    expect(widest).toBe(2 * MAX_INDENT_LEVELS);
    expect(JSON.parse(lines.join('\n'))).toEqual({ wrap: [deep] });
  });
});

describe('jsonChunks: the same text in pieces (R4-12)', () => {
  it('R4-12: the pieces join to JSON.stringify for any JSON value, none of them empty', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(0, 2), (value, indent) => {
        const pieces = [...jsonChunks(value, { indent })];
        expect(pieces.join('')).toBe(JSON.stringify(value, null, indent));
        expect(pieces.every((p) => p.length > 0)).toBe(true);
      }),
    );
  });

  it('R4-12: a document many times the piece size comes in pieces of about JSON_CHUNK_CHARS, one value beyond at most', () => {
    const longest = 5_000;
    const groups = Array.from({ length: 2_000 }, (_, i) => ({ key: `g${i}`, text: 'x'.repeat(i % longest), n: i }));
    const pieces = [...jsonChunks({ groups }, { indent: 2 })];
    expect(pieces.join('')).toBe(JSON.stringify({ groups }, null, 2));
    expect(pieces.length).toBeGreaterThan(20); // 2 MB of text
    // each piece stops at the first value that brings it to JSON_CHUNK_CHARS
    for (const p of pieces) expect(p.length).toBeLessThan(JSON_CHUNK_CHARS + longest + 100);
  });

  it('R4-12: a value JSON omits gives no piece; a primitive one piece', () => {
    expect([...jsonChunks(undefined)]).toEqual([]);
    expect([...jsonChunks('a\u2028')]).toEqual([JSON.stringify('a\u2028')]);
  });
});
