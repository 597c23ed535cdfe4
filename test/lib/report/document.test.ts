import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/*
 * lib/report/document.ts, the one definition of the report document (docs/report.md). Its module is
 * imported inside each test, never at the top of this file: a schema that cannot be built (say an
 * omitted key its base no longer has) then fails a test here, where a top-level import would only
 * fail the file's load, which a mutation run does not count as a failing test (docs/mutation.md).
 */

const document = () => import('../../../lib/report/document.js');
const COMMITTED = new URL('../../../schema/report.v1.schema.json', import.meta.url);

describe('the report document', () => {
  it('R3-5: the module builds its schema, and the JSON Schema it generates is the committed one', async () => {
    const { reportJsonSchema } = await import('../../../lib/report/json-schema.js');
    expect(reportJsonSchema()).toEqual(JSON.parse(readFileSync(COMMITTED, 'utf8')));
  });

  it('R4-3: NOTHING_UNREADABLE names every column completeness.unreadable counts, each at 0', async () => {
    const { NOTHING_UNREADABLE, completeness } = await document();
    const columns = Object.keys(completeness.shape.unreadable.shape);
    expect(columns.length).toBeGreaterThan(0);
    expect(NOTHING_UNREADABLE).toEqual(Object.fromEntries(columns.map((c) => [c, 0])));
    expect(Object.isFrozen(NOTHING_UNREADABLE)).toBe(true);
  });

  it('R6-5: SPEND_NOT_COLLECTED names every spend figure in the schema order, each null, and is frozen', async () => {
    const { SPEND_NOT_COLLECTED, spendFigures } = await document();
    const figures = Object.keys(spendFigures.shape);
    expect(figures).toHaveLength(15);
    expect(Object.keys(SPEND_NOT_COLLECTED)).toEqual(figures);
    expect(Object.values(SPEND_NOT_COLLECTED).every((v) => v === null)).toBe(true);
    expect(Object.isFrozen(SPEND_NOT_COLLECTED)).toBe(true);
  });

  it('R3-9, R5-4: a series group is its group without the figures a series level does not compute, tokens as {sum, reported}', async () => {
    const { seriesGroupOf, seriesGroup } = await document();
    const { group } = await import('../../support/report-document.js');
    const g = group({
      key: 'day-1',
      tokens: { sum: 10, reported: 2, p50: 4, p95: 6, max: 6 },
      duration_ms: { reported: 1, p50: 5, p95: 5, max: 5 },
      models: { counts: [{ model: 'm', subagents: 3 }], unreported: 0 },
      fan_out: [{ top_level: 3, turns: 1 }],
    });
    const s = seriesGroupOf(g);
    // exactly the series shape's keys: the figures left out are absent, never null or 0
    expect(Object.keys(s).sort()).toEqual(Object.keys(seriesGroup.shape).sort());
    for (const left of ['duration_ms', 'executions', 'unknown_execution', 'turns', 'models', 'fan_out'])
      expect(s).not.toHaveProperty(left);
    expect(s.tokens).toEqual({ sum: 10, reported: 2 });
    expect(s).toMatchObject({ key: 'day-1', subagents: g.subagents, contexts: g.contexts, sessions: g.sessions });
  });
});
