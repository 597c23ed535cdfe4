import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderReportTable } from '../../../../lib/report/render/table.js';
import { group, reportDoc } from '../../../support/report-document.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const table = (doc: ReturnType<typeof reportDoc>, color = false) => renderReportTable(doc, { color });
const groupLines = (text: string) =>
  text.split('\n').slice(text.split('\n').findIndex((l) => l.startsWith('== by')) + 1);

describe('report table (R4-2: terminal safety; labels and units)', () => {
  it.each([
    ['CSI clear screen', 'a\u001b[2Jb', 'a\\x1B[2Jb'],
    ['OSC 52', '\u001b]52;c;aGk=\u0007', '\\x1B]52;c;aGk=\\x07'],
    ['C1 CSI', '\u009b2J', '\\x9B2J'],
    ['a forged line', 'x\r\ng1-task-9  99', 'x\\x0D\\x0Ag1-task-9  99'],
    ['RTL override', 'abc\u202edef', 'abc\\u202Edef'],
  ])('R4-2: a title, key and model holding %s are shown escaped', (_what, raw, shown) => {
    const doc = reportDoc(
      [group({ key: raw, title: raw, models: { counts: [{ model: raw, subagents: 1 }], unreported: 0 } })],
      { missing: [{ task_session_id: raw, tool_call_id: raw }] },
      { models: { counts: [{ model: raw, subagents: 1 }], unreported: 0 } },
    );
    const text = table(doc);
    expect(text).not.toMatch(TERMINAL_CONTROL);
    expect(text).toContain(`${shown}  ${shown}`); // the key, then the title
    expect(text).toMatch(new RegExp(`^models\\s+${shown.replace(/[\\[\]()]/g, '\\$&')} 1`, 'm'));
  });

  it('R4-2: for any title, the group is one line and every column stays aligned', () => {
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.array(fc.string({ unit, maxLength: 12 }), { minLength: 1, maxLength: 4 }), (titles) => {
        const text = table(reportDoc(titles.map((title, i) => group({ key: `t${i}`, title }))));
        expect(text).not.toMatch(TERMINAL_CONTROL);
        const lines = groupLines(text);
        expect(lines).toHaveLength(2 + titles.length);
        // the dashes under each header mark the columns: every row's cells start where they do
        const starts = [...lines[1]!.matchAll(/-+/g)].map((m) => m.index);
        for (const line of lines.slice(2)) {
          const subagents = starts[3]!; // key, title, subagents: right-aligned numbers end under their dashes
          expect(line.slice(subagents - 2, subagents)).toBe('  ');
        }
      }),
    );
  });

  it('R4-2: colour codes never count in a width', () => {
    const ESC = '\u001b';
    const text = table(reportDoc([group()], { shortfall: { open: true, count: 2, checked: true } }), true);
    const lines = text.split('\n');
    const shortfall = lines.find((l) => l.startsWith('shortfall'))!;
    const capture = lines.find((l) => l.startsWith('capture_since'))!;
    expect(shortfall.endsWith(`${ESC}[31mOPEN: 2 message key(s) without a row${ESC}[0m`)).toBe(true);
    // both values start in one column
    expect(shortfall.indexOf(`${ESC}[31m`)).toBe(capture.indexOf('2026'));
  });

  it('a key the host never reported and a key "" have their own labels, in groups and models', () => {
    const text = table(
      reportDoc(
        [group({ key: null }), group({ key: '' })],
        {},
        {
          models: { counts: [{ model: '', subagents: 1 }], unreported: 2 },
        },
      ),
    );
    expect(
      groupLines(text)
        .slice(2)
        .map((l) => l.split('  ')[0]),
    ).toEqual(['(not reported)', '(empty)']);
    expect(text).toMatch(/^models\s+\(empty\) 1, \(not reported\) 2$/m);
  });

  it('costs carry their unit, subcents (with dollars in the totals)', () => {
    const text = table(
      reportDoc(
        [group({ cost_subcents: 15_000, cost_per_context_subcents: 3_750 })],
        {},
        {
          cost_subcents: 15_000,
          estimated_cost_subcents: 500,
          cost_per_context_subcents: 3_750,
        },
      ),
    );
    expect(text).toMatch(/^cost\s+15,000 subcents \(\$1\.50; estimated 500 subcents\)$/m);
    expect(text).toMatch(/^cost per context\s+3,750 subcents \(\$0\.38\)$/m);
    expect(groupLines(text)[0]).toMatch(/cost \(subcents\)\s+per context \(subcents\)/);
  });

  it('the lower bound is said once, and the table’s own words hold no rule id or markdown', () => {
    const text = table(
      reportDoc([group({ lower_bound: true })], {
        lower_bound_sessions: 2,
        notes: [
          '2 session(s) in scope have activity before capture_since: their fan-out is a lower bound (groups marked lower_bound; AC-25).',
        ],
      }),
    );
    expect(text.match(/is a lower bound/g)).toHaveLength(1);
    expect(text).not.toMatch(/\b(?:AC|R)\d+(?:-\d+)?\b|`/);
  });

  it('R4-1: host text that looks like a secret is printed as it is', () => {
    const text = table(reportDoc([group({ title: 'Rotate password: hunter2 in prod', key: 'postgres://u:p@h/d' })]));
    expect(text).toContain('postgres://u:p@h/d  Rotate password: hunter2 in prod');
  });
  it('R4-3, R4-7: unreadable values are named per column, orphan rows in the totals and a column of their own', () => {
    const unreadable = {
      total_tokens: 2,
      tool_use_count: 0,
      duration_ms: 0,
      observed_at: 1,
      cost_subcents: 0,
      occurred_at: 0,
    };
    const text = table(reportDoc([group({ orphan_rows: 3 })], { unreadable }, { orphan_rows: 3 }));
    expect(text).toMatch(/^unreadable\s+total_tokens 2, observed_at 1 \(not reported for their figures\)$/m);
    expect(text).toMatch(/^orphan rows\s+3 \(subagent rows whose session is not in task_sessions\)$/m);
    expect(groupLines(text)[0]).toMatch(/sessions\s+orphan rows\s+contexts/);
    expect(table(reportDoc([group()]))).toMatch(/^unreadable\s+none$/m);
    expect(table(reportDoc([group()]))).not.toMatch(/orphan rows/);
  });
});
