import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../lib/db/database.js';
import { jsonDocument } from '../../../lib/json-document.js';
import { buildReport } from '../../../lib/report/build.js';
import { GROUP_BY } from '../../../lib/report/document.js';
import { readAll } from '../../../lib/store/read.js';
import { KEY_OF, onlyRowFigures, rowFigures } from '../../support/report-oracle.js';
import { buildReportStore } from '../../support/report-store.js';
import { FIXTURES, TARGETS, useTestDatabase } from '../../support/targets.js';

/** Every --json the report can print for the store, generated_at blanked (the one field allowed to differ). */
async function everyReport(db: Queryable): Promise<string[]> {
  const texts: string[] = [];
  for (const by of [undefined, ...GROUP_BY]) {
    const doc = await buildReport(db, { by, trees: 3, pageData: by === undefined });
    texts.push(jsonDocument({ ...doc, generated_at: '' }));
  }
  return texts;
}

/**
 * Agreement between dialects cannot see a bug in the SQL they share: every group's row figures
 * are also held to the rows' own (test/support/report-oracle.ts), on each target.
 */
async function expectGroupsAreTheRows(db: Queryable, target: string): Promise<void> {
  const rows = await readAll(db);
  for (const by of GROUP_BY) {
    const doc = await buildReport(db, { by });
    const keys = new Set(rows.map(KEY_OF[by]));
    expect(new Set(doc.groups.filter((g) => g.subagents > 0).map((g) => g.key)), `${target} --by ${by}`).toEqual(keys);
    for (const g of doc.groups) {
      expect(onlyRowFigures(g), `${target} --by ${by} ${g.key}`).toEqual(
        rowFigures(rows.filter((r) => KEY_OF[by](r) === g.key)),
      );
    }
  }
}

describe.each(FIXTURES)('report --json across dialects on the %s host schema', (fixture) => {
  const targets = TARGETS.map((name) => useTestDatabase(name, { fixture }));

  it.runIf(process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_TARGETS === undefined)(
    'R3-5: with TEST_DATABASE_URL set the PostgreSQL server is one of the dialects compared',
    () => {
      expect(TARGETS).toEqual(['sqlite', 'pglite', 'postgres']);
    },
  );

  it(`R3-5: ${TARGETS.join(', ')} print byte-identical JSON for the same store (apart from generated_at), every --by, each group its rows' own figures`, async () => {
    const outputs: string[][] = [];
    for (const t of targets) {
      await buildReportStore(t.db, fixture);
      outputs.push(await everyReport(t.db));
      await expectGroupsAreTheRows(t.db, t.name);
    }
    const [first, ...others] = outputs;
    expect(first!.length).toBe(GROUP_BY.length + 1);
    expect(first![0]).toMatch(/"live": 4/);
    for (const other of others) expect(other).toEqual(first);
  }, 180_000);
});
