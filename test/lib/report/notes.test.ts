import { describe, expect, it } from 'vitest';
import { NOTHING_UNREADABLE } from '../../../lib/report/document.js';
import { type Overflow, overflowOf, type ScopeFigures, valueNotes } from '../../../lib/report/notes.js';
import { figures } from '../../support/report-document.js';

/*
 * The notes buildReport derives from figures it has read (lib/report/notes.ts), with figures
 * written by hand: a sum beyond 2^53 − 1 needs over 2^22 rows at the metrics' maximum (2^31 − 1)
 * in one scope, more than a database test can afford on PGlite (issue 50), so the rule is held here
 * on the statement's output instead; sql.ts's boundedSum is proven on every target.
 */

const EXACT = figures({
  tokens: { sum: 4, reported: 2, p50: 2, p95: 2, max: 2 },
  tool_uses: { sum: 4, reported: 2 },
  cost_subcents: 9,
});
const BEYOND = {
  tokens: { ...EXACT, tokens: { sum: null, reported: 2, p50: 1, p95: 1, max: 1 } },
  tool_uses: { ...EXACT, tool_uses: { sum: null, reported: 2 } },
  cost: { ...EXACT, cost_subcents: null },
};
const NONE: Overflow = { tokens: 0, tool_uses: 0, cost: 0, spend: 0 };

const scope = (by: ScopeFigures['by'], f = EXACT, costEvents = 1): ScopeFigures => ({ by, figures: f, costEvents });

describe('overflowOf', () => {
  it.each([
    ['tokens', BEYOND.tokens, { ...NONE, tokens: 1 }],
    ['tool_uses', BEYOND.tool_uses, { ...NONE, tool_uses: 1 }],
    ['cost', BEYOND.cost, { ...NONE, cost: 1 }],
  ] as const)('R4-3: a null %s sum with values in scope counts one scope beyond 2^53 − 1', (_figure, f, expected) => {
    expect(overflowOf([scope(null, f)], null)).toEqual(expected);
  });

  it('R4-3: a null sum with nothing reported (or no cost event) is no overflow', () => {
    const unreported = figures({
      tokens: { sum: null, reported: 0, p50: null, p95: null, max: null },
      tool_uses: { sum: null, reported: 0 },
      cost_subcents: null,
    });
    expect(overflowOf([scope(null, unreported, 0)], null)).toEqual(NONE);
    expect(overflowOf([scope(null, EXACT)], null)).toEqual(NONE);
  });

  it("R4-3: the totals and the report's own --by groups count, each once; the page's series levels do not", () => {
    const scopes = [
      scope(null, BEYOND.tokens),
      scope('task', BEYOND.tokens),
      scope('task', BEYOND.tokens),
      scope('day', BEYOND.tokens),
      scope('type', BEYOND.cost),
    ];
    expect(overflowOf(scopes, 'task')).toEqual({ ...NONE, tokens: 3 });
    expect(overflowOf(scopes, null)).toEqual({ ...NONE, tokens: 1 });
    expect(overflowOf(scopes, 'type')).toEqual({ ...NONE, tokens: 1, cost: 1 });
  });
});

describe('valueNotes', () => {
  it('R4-3: one note per figure beyond 2^53 − 1, naming the figure and how many scopes', () => {
    expect(valueNotes(EXACT, NOTHING_UNREADABLE, { tokens: 2, tool_uses: 0, cost: 1, spend: 0 })).toEqual([
      'the tokens sum of 2 scope(s) is null: it exceeds 2^53 − 1, beyond what a JSON reader keeps exactly.',
      'the cost sum of 1 scope(s) is null: it exceeds 2^53 − 1, beyond what a JSON reader keeps exactly.',
    ]);
  });

  it('R4-3, R4-7, R5-1: exact figures, all priced, no orphan: no note', () => {
    expect(valueNotes(figures({ unpriced_events: 0 }), NOTHING_UNREADABLE, NONE)).toEqual([]);
  });

  it('R4-7: rows of sessions no longer in task_sessions are named, with their count', () => {
    expect(valueNotes(figures({ orphan_rows: 2 }), NOTHING_UNREADABLE, NONE)).toEqual([
      '2 row(s) in scope belong to a session that is no longer in task_sessions: they count as subagents (orphan_rows), never as a session.',
    ]);
  });
});
