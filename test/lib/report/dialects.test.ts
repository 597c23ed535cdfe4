import { describe, expect, it } from 'vitest';
import { buildReport } from '../../../lib/report/build.js';
import { GROUP_BY } from '../../../lib/report/document.js';
import { renderReportJson } from '../../../lib/report/render/json.js';
import { buildReportStore } from '../../support/report-store.js';
import { FIXTURES, TARGETS, useTestDatabase } from '../../support/targets.js';

/** Every --json the report can print for the store, generated_at blanked (the one field allowed to differ). */
async function everyReport(db: Parameters<typeof buildReport>[0]): Promise<string[]> {
  const texts: string[] = [];
  for (const by of [undefined, ...GROUP_BY]) {
    const doc = await buildReport(db, { by, trees: 3, pageData: by === undefined });
    texts.push(renderReportJson({ ...doc, generated_at: '' }));
  }
  return texts;
}

describe.each(FIXTURES)('report --json across dialects on the %s host schema', (fixture) => {
  const targets = TARGETS.map((name) => useTestDatabase(name, { fixture }));

  it(`R3-5: ${TARGETS.join(', ')} print byte-identical JSON for the same store (apart from generated_at), every --by`, async () => {
    const outputs: string[][] = [];
    for (const t of targets) {
      await buildReportStore(t.db, fixture);
      outputs.push(await everyReport(t.db));
    }
    const [first, ...others] = outputs;
    expect(first!.length).toBe(GROUP_BY.length + 1);
    expect(first![0]).toMatch(/"live": 4/);
    for (const other of others) expect(other).toEqual(first);
  }, 120_000);
});
