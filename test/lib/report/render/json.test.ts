import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDocument } from '../../../../lib/cli/json.js';
import { renderReportJson } from '../../../../lib/report/render/json.js';
import { hostileText, MIB_OF_HOSTILE_TEXT } from '../../../support/hostile-text.js';
import { group, reportDoc } from '../../../support/report-document.js';

const withText = (text: string) =>
  reportDoc([group({ key: text, title: text, models: { counts: [{ model: text, subagents: 1 }], unreported: 0 } })], {
    missing: [{ task_session_id: text, tool_call_id: text }],
  });

describe('report --json (R4-1: data is never rewritten)', () => {
  it('R4-1: any string (markup, quotes, controls, U+2028/2029, lone surrogates) reads back exactly', () => {
    fc.assert(
      fc.property(hostileText('sqlite'), (text) => {
        const doc = withText(text);
        expect(JSON.parse(renderReportJson(doc))).toEqual(doc);
        expect(JSON.parse(jsonDocument(doc))).toEqual(doc);
      }),
      { numRuns: 300 },
    );
  });

  it('R4-1: a 1 MiB string reads back exactly', () => {
    const doc = withText(MIB_OF_HOSTILE_TEXT);
    expect(JSON.parse(renderReportJson(doc)).groups[0].title).toBe(MIB_OF_HOSTILE_TEXT);
  });

  it('R4-4: the text is JSON.stringify(doc, null, 2) for a document of ordinary depth (docs/report.md)', () => {
    const doc = withText('a "quoted" key');
    const text = renderReportJson(doc);
    expect(text).toBe(JSON.stringify(doc, null, 2));
    // two spaces a level, written out: the first member of the document sits one level in
    expect(text.split('\n')[1]).toMatch(/^ {2}"/);
  });
});
