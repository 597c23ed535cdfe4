import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../../lib/cli/exit-codes.js';
import { NAMESPACE, SCHEMA_URL, turnSpans } from '../../../lib/export/otlp/spans.js';
import type { ReportDocument } from '../../../lib/report/document.js';
import { runCliJson } from '../../support/cli-run.js';
import { insertRows } from '../../support/subagent-rows.js';
import { TARGETS, useTestDatabase } from '../../support/targets.js';

/*
 * R4-3 (docs/report.md: `async` is rows with is_async = 1): the host's column has no CHECK, so it
 * can hold 2, 0.5 or 'true' (SQLite; PostgreSQL's integer holds 2 and -1). One rule reads them
 * everywhere: the totals, the trees, the page and the spans agree on which rows are async.
 */

const dir = mkdtempSync(join(tmpdir(), 'async-rule-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AT = '2026-08-12T10:00:00.000001Z';

describe.each(TARGETS)('R4-3 on %s: one rule reads is_async', (target) => {
  const t = useTestDatabase(target, { fixture: 'host' });
  const odd = target === 'sqlite' ? ['2', '0.5', "'true'", '-1', "'1'"] : ['2', '-1'];

  it('R4-3: only is_async = 1 is async, in the totals, the trees, the page and the spans alike', async () => {
    const ids = ['one', ...odd.map((_, i) => `odd${i}`)];
    await insertRows(
      t.db,
      ids.map((id) => ({
        task_session_id: 's1',
        task_id: 't1',
        turn_id: 'u1',
        tool_call_id: id,
        observed_at: AT,
        settled_at: AT,
        is_async: id === 'one' ? 1 : 0,
      })),
    );
    for (const [i, value] of odd.entries())
      await t.db.query(`UPDATE task_session_subagents SET is_async = ${value} WHERE tool_call_id = 'odd${i}'`);
    // SQLite's INTEGER affinity stores the text '1' as the integer 1: async, as the writers mean it
    const asyncIds = target === 'sqlite' ? ['odd4', 'one'] : ['one'];

    const file = join(dir, `${target}.html`);
    const run = await runCliJson(
      ['report', '--database-url', t.url, '--grace-seconds', '0', '--json', '--html', file],
      t.proxy ? { DATABASE_WS_PROXY: t.proxy.address } : {},
    );
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const doc = run.json as ReportDocument;
    expect(doc.totals.async).toBe(asyncIds.length);
    const nodes = doc.trees.flatMap((tree) => tree.subagents);
    expect(nodes).toHaveLength(ids.length);
    expect(
      nodes
        .filter((n) => n.is_async)
        .map((n) => n.tool_call_id)
        .sort(),
    ).toEqual(asyncIds);
    // the page marks the same rows async
    expect(readFileSync(file, 'utf8').match(/ · async/g)).toHaveLength(asyncIds.length);
    // the spans read the trees
    const spans = doc.trees.flatMap((tree) =>
      turnSpans(tree, {
        resource: resourceFromAttributes({}),
        scope: { name: 'subagent-context', schemaUrl: SCHEMA_URL },
        openSpans: false,
      }),
    );
    expect(spans.filter((s) => s.attributes[`${NAMESPACE}.is_async`] === true)).toHaveLength(asyncIds.length);
  });
});
