import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../../../lib/display-width.js';
import { buildReport } from '../../../../lib/report/build.js';
import type { GroupBy } from '../../../../lib/report/document.js';
import { LEAVE_OUT_FIRST, renderReportTable } from '../../../../lib/report/render/table.js';
import { parseRfc3339 } from '../../../../lib/time.js';
import { hostileText } from '../../../support/hostile-text.js';
import { fanOutCost, figures as figureFigures, group, reportDoc } from '../../../support/report-document.js';
import { buildWideReportStore, LONG_SESSION, LONG_TASK } from '../../../support/report-store.js';
import { isLeftOut, leftOut, linesWiderThan, lostFigures, tableCells } from '../../../support/table-figures.js';
import { TARGETS, useTestDatabase } from '../../../support/targets.js';

/*
 * Issue 58 #17: on a terminal of any width from 40 columns, every line of `report` fits: the facts,
 * notes and prose wrap (a value under its value column), the tables leave columns out by one
 * priority (LEAVE_OUT_FIRST: cost stays longer than context at finish) and say which, and no figure
 * is cut on the way. A pipe (no width) prints every column on one line, as before.
 */

const NOW = parseRfc3339('2026-07-26T00:00:00Z')!;
const WIDTHS = [40, 60, 80, 120] as const;

describe.each(TARGETS)('issue 58 #17: the report table fits a terminal on %s', (name) => {
  const t = useTestDatabase(name, { subagentTable: false });

  it('issue 58 #17: at 40, 60, 80 and 120 columns, by task, session, type and day, every line fits and every figure is whole or its column named as left out', async () => {
    await buildWideReportStore(t.db);
    for (const by of ['task', 'session', 'type', 'day'] as GroupBy[]) {
      const doc = await buildReport(t.db, { by, now: NOW, graceSeconds: 0 });
      const full = renderReportTable(doc, { color: false });
      // the store fills every section: long ids, figures in the billions, spend, the fan-out cost
      expect(full).toMatch(/^spend cost {2,}/m);
      expect(full).toMatch(/subagent share/);
      expect(full).toContain(by === 'task' ? LONG_TASK : by === 'session' ? LONG_SESSION : '== by');
      expect(full).toMatch(/max 2,000,000,000/);
      const rows = [doc.fan_out_cost!.buckets.length, doc.groups.length];
      for (const width of WIDTHS) {
        const narrow = renderReportTable(doc, { color: false, width });
        expect(linesWiderThan(narrow, width), `by ${by} at ${width}`).toEqual([]);
        expect(lostFigures(full, narrow, rows), `by ${by} at ${width}`).toEqual([]);
      }
      // a pipe: nothing wrapped, nothing left out
      expect(leftOut(full)).toEqual([]);
    }
  });

  it('issue 58 #17: by task at 60 columns keeps the cost and leaves out context at finish first, and says how to see it', async () => {
    await buildWideReportStore(t.db);
    const doc = await buildReport(t.db, { by: 'task', now: NOW, graceSeconds: 0 });
    const narrow = renderReportTable(doc, { color: false, width: 60 });
    const groups = narrow.slice(narrow.indexOf('== by task'));
    const [fanOut, table] = tableCells(renderReportTable(doc, { color: false }), [7, doc.groups.length]);
    const notes = leftOut(groups);
    expect(isLeftOut(notes, 'cost (subcents)')).toBe(false);
    expect(groups).toMatch(/cost\s*\n?.*\(subcents\)/);
    // every group column the table has is either shown or named, and context at finish only goes once cost stays
    for (const column of table!.filter((c) => c.header !== 'key'))
      if (isLeftOut(notes, column.header)) expect(LEAVE_OUT_FIRST.groups).toContain(column.header);
    expect(groups.replace(/\n/g, ' ')).toMatch(
      /\(left out: .+; --json or --csv has every column; a wider terminal \(or COLUMNS=200\) shows more\)$/,
    );
    // the fan-out table at 60: fewer columns, by the same rule, and the buckets' sums stay
    const section = narrow.slice(narrow.indexOf('== fan-out'), narrow.indexOf('events without a turn'));
    expect(section).toMatch(/^fan-out\s+turns\s+costed\s+sum\s+mean/m);
    expect(isLeftOut(leftOut(section), 'sum')).toBe(false);
    expect(fanOut!.map((c) => c.header)).toContain('subagent share');
    expect(isLeftOut(leftOut(section), 'subagent share')).toBe(true);
  });
});

describe('issue 58 #17: one priority for leaving columns out', () => {
  it('issue 58 #17: every column of the groups and fan-out tables is named in LEAVE_OUT_FIRST, cost after context at finish', () => {
    const spend = { ...figureFigures().spend, subagents_with_usage: 1, complete: 1, cost_subcents: 5 };
    const doc = {
      ...reportDoc(
        [group({ title: 'a title', orphan_rows: 1, unpriced_events: 1, spend, tokens: { ...figureFigures().tokens } })],
        {},
        { spend },
      ),
      fan_out_cost: fanOutCost({
        '1': {
          unreadable_cost_turns: 1,
          spend_known_turns: 1,
          subagent_cost_subcents: 1,
          subagent_share: 0.5,
          uncosted_turns_priced_cost_subcents: 1,
        },
      }),
    };
    const [fanOut, groups] = tableCells(renderReportTable(doc, { color: false }), [7, 1]);
    expect(
      groups!
        .map((c) => c.header)
        .slice(1)
        .sort(),
    ).toEqual([...LEAVE_OUT_FIRST.groups].sort());
    expect(
      fanOut!
        .map((c) => c.header)
        .slice(1)
        .sort(),
    ).toEqual([...LEAVE_OUT_FIRST.fanOut].sort());
    const at = (header: string) => LEAVE_OUT_FIRST.groups.indexOf(header as never);
    expect(at('context at finish (tokens)')).toBeLessThan(at('cost (subcents)'));
  });

  it('issue 58 #17: a fact too long for its line wraps under the value column, a note under its words; an id longer than the line is broken only at the width', () => {
    const id = `s-${'9'.repeat(70)}`;
    const doc = reportDoc([], { missing: [{ task_session_id: id, tool_call_id: 'c1' }], notes: [`about ${id} here`] });
    const lines = renderReportTable(doc, { color: false, width: 60 }).split('\n');
    const at = lines.findIndex((l) => l.startsWith('  missing'));
    const column = lines[at]!.indexOf('s-');
    expect(lines[at]!.slice(0, column)).toMatch(/^ {2}missing {2,}$/);
    expect(lines[at]).toHaveLength(60);
    expect(lines[at + 1]!.slice(0, column).trim()).toBe('');
    expect(lines[at]!.slice(column) + lines[at + 1]!.slice(column)).toBe(`${id} c1`);
    const note = lines.findIndex((l) => l.startsWith('note: '));
    expect(lines.slice(note, note + 3)).toEqual([
      'note: about',
      `      ${id.slice(0, 54)}`,
      `      ${id.slice(54)} here`,
    ]);
  });
});

describe('issue 58 #17: hostile ids and labels never widen a line', () => {
  const text = fc.oneof(
    hostileText('sqlite'),
    fc.string({ unit: 'grapheme', maxLength: 120 }),
    fc
      .array(fc.constantFrom('中', '文', '😀', '👨‍👩‍👧', '🇺🇸', 'e\u0301', 'x', ' '), { maxLength: 90 })
      .map((a) => a.join('')),
  );

  it('issue 58 #17: for any width from 40 and any keys, titles, models, missing ids, notes and filters, no line is wider than the width', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 40, max: 200 }),
        fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 3 }),
        text,
        text,
        (width, keys, model, note) => {
          const doc = reportDoc(
            keys.map(([key, title]) => group({ key, title, cost_subcents: 987_654_321_098, subagents: 123_456 })),
            {
              missing: keys.map(([key, title]) => ({ task_session_id: key, tool_call_id: title })),
              notes: [note, `the ledger names ${model}`],
            },
            { models: { counts: [{ model, subagents: 9_876_543 }], unreported: 0 } },
          );
          const hostile = {
            ...doc,
            filters: { ...doc.filters, task: model, session: note },
            fan_out_cost: fanOutCost({ '1': { turns: 123_456_789, cost_subcents: 987_654_321_098 } }),
          };
          for (const line of renderReportTable(hostile, { color: false, width }).split('\n'))
            expect(displayWidth(line)).toBeLessThanOrEqual(width);
        },
      ),
      { numRuns: 200 },
    );
  });
});
