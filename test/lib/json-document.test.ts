import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDocument } from '../../lib/json-document.js';
import { formatRfc3339, parseRfc3339 } from '../../lib/time.js';
import { hostileText, MIB_OF_HOSTILE_TEXT } from '../support/hostile-text.js';
import { group, reportDoc } from '../support/report-document.js';

// Issue 25: a --json document gives an instant (bigint microseconds in memory) as RFC 3339 UTC
// with microseconds, at any depth, for every instant the store can hold; nothing else changes.

const MIN = -62_135_596_800_000_000n; // 0001-01-01T00:00:00Z
const MAX = 253_402_300_799_999_999n; // 9999-12-31T23:59:59.999999Z

it('issue 25: every instant, at any depth, is RFC 3339 with microseconds that reads back as the same instant', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: MIN, max: MAX }), fc.jsonValue(), (at, other) => {
      const doc = JSON.parse(jsonDocument({ at, nested: [{ at }], other }));
      expect(doc.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect(parseRfc3339(doc.at)).toBe(at);
      expect(doc.nested[0].at).toBe(doc.at);
      expect(doc.other).toEqual(JSON.parse(JSON.stringify(other)));
    }),
  );
});

it('issue 25: the document is indented JSON on one trailing newline, as the CLI prints it', () => {
  expect(jsonDocument({ checkedAt: 1_796_130_000_123_456n, n: 1 })).toBe(
    `{\n  "checkedAt": "${formatRfc3339(1_796_130_000_123_456n)}",\n  "n": 1\n}\n`,
  );
});

const withText = (text: string) =>
  reportDoc([group({ key: text, title: text, models: { counts: [{ model: text, subagents: 1 }], unreported: 0 } })], {
    missing: [{ task_session_id: text, tool_call_id: text }],
  });

describe('report --json (R4-1: data is never rewritten)', () => {
  it('R4-1: any string (markup, quotes, controls, U+2028/2029, lone surrogates) reads back exactly', () => {
    fc.assert(
      fc.property(hostileText('sqlite'), (text) => {
        const doc = withText(text);
        expect(JSON.parse(jsonDocument(doc))).toEqual(doc);
      }),
      { numRuns: 300 },
    );
  });

  it('R4-1: a 1 MiB string reads back exactly', () => {
    const doc = withText(MIB_OF_HOSTILE_TEXT);
    expect(JSON.parse(jsonDocument(doc)).groups[0].title).toBe(MIB_OF_HOSTILE_TEXT);
  });

  it('R4-4: the text is JSON.stringify(doc, null, 2) and a newline for a document of ordinary depth (docs/report.md)', () => {
    const doc = withText('a "quoted" key');
    const text = jsonDocument(doc);
    expect(text).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    // two spaces a level, written out: the first member of the document sits one level in
    expect(text.split('\n')[1]).toMatch(/^ {2}"/);
  });
});
