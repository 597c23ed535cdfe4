import { spawnSync } from 'node:child_process';
import { existsSync, renameSync } from 'node:fs';

/** Where Stryker's json reporter writes (its default). */
const REPORT = 'reports/mutation/mutation.json';

/** The read side's tests, by what they prove (shared by several files below). */
const RENDER = [
  'test/lib/report/render.test.ts',
  'test/lib/report/render/render-edges.test.ts',
  'test/lib/report/render/csv.test.ts',
];
const PAGE = ['test/lib/report/render/html.test.ts', 'test/lib/report/render/render-edges.test.ts'];
const EXPORT_RUNS = ['test/lib/export/otlp-export.test.ts', 'test/lib/export/export-edges.test.ts'];

/**
 * `npm run mutate [file or folder…]`: StrykerJS mutation testing (not in CI: it is CPU-heavy), one
 * file at a time (concurrency 1 unless MUTATE_CONCURRENCY says), each against the tests that prove
 * its rules. Scores and survivors are reported in docs/mutation.md. Target: ≥ 85% per file.
 */
export const MUTATED: Readonly<Record<string, readonly string[]>> = {
  'lib/redact.ts': ['test/lib/redact.test.ts', 'test/lib/errors.test.ts'],
  'lib/text.ts': ['test/lib/text.test.ts', 'test/lib/migrate/text-parity.test.ts'],
  'lib/normalize.ts': ['test/lib/normalize.test.ts'],
  'lib/health/checkpoint.ts': ['test/lib/health/checkpoint.test.ts'],
  'lib/db/pipeline.ts': ['test/lib/db/pipeline.test.ts', 'test/lib/db/database.test.ts'],
  'lib/merge.ts': ['test/lib/merge.test.ts'],

  // The read side (issue 30): the query layer, its renderers, the export and the flags.
  // build.test.ts proves what build.ts adds (filters, notes, trees, page data, lists, order);
  // cut.test.ts the cuts, series.task_groups and tree titles (R4-12); figures, figures-edges,
  // generated and unreadable-property.test.ts the document over stores. Left out: sessions.test.ts
  // and unreadable.test.ts (10 s a run, through the CLI), which prove sql.ts's figures
  'lib/report/build.ts': [
    'test/lib/report/build.test.ts',
    'test/lib/report/cut.test.ts',
    'test/lib/report/figures.test.ts',
    'test/lib/report/figures-edges.test.ts',
    'test/lib/report/generated.test.ts',
    'test/lib/report/unreadable-property.test.ts',
    'test/lib/report/cost-sources.test.ts',
    'test/lib/report/fan-out-cost.test.ts',
  ],
  // notes.test.ts proves the overflow count and the value notes on figures written by hand (a sum
  // beyond 2^53 − 1 needs over 2^22 rows in one scope); the rest each note's condition in reports
  'lib/report/notes.ts': [
    'test/lib/report/notes.test.ts',
    'test/lib/report/build.test.ts',
    'test/lib/report/figures.test.ts',
    'test/lib/report/figures-edges.test.ts',
    'test/lib/report/cost-sources.test.ts',
    'test/lib/report/fan-out-cost.test.ts',
  ],
  // catalog.test.ts proves each flag and refusal on each schema; figures-edges.test.ts what the
  // flags change in a report (the ledger without turn_id, R3-7)
  'lib/report/catalog.ts': ['test/lib/report/catalog.test.ts', 'test/lib/report/figures-edges.test.ts'],
  // completeness.test.ts proves the keys, notes and window itself; figures-edges.test.ts the same in reports
  'lib/report/completeness.ts': ['test/lib/report/completeness.test.ts', 'test/lib/report/figures-edges.test.ts'],
  // document.test.ts imports the module inside its tests: a schema that fails to build fails a test
  'lib/report/document.ts': [
    'test/lib/report/document.test.ts',
    'test/lib/report/render.test.ts',
    'test/lib/report/figures.test.ts',
  ],
  'lib/report/json-schema.ts': ['test/lib/report/render.test.ts'],
  // sort.test.ts proves the order itself; figures-edges.test.ts the same order on each dialect's rows
  'lib/report/sort.ts': ['test/lib/report/sort.test.ts', 'test/lib/report/figures-edges.test.ts'],
  // cut.test.ts proves the cuts (R4-12: a level's first N groups ranked in SQL by the sort);
  // window.test.ts the window at every level and its bounds for rows, sessions and cost events;
  // scope-edges.test.ts one-sided windows, --task with --session, the lower bound's two paths;
  // cost-sources and host-ledger the ledger's figures (R5-1, R5-2, R5-4); build.test.ts the page's
  // duration histogram (R3-9: statement 2's `duration` rows); statements.test.ts the statements
  // called directly (ReportScope's defaults, two cut levels) and R4-12's plan rules on their text
  // (what each stores, reads and skips: no document tells them apart). Left out: the tests that
  // reach sql.ts only through the CLI's child process (sessions, unreadable, collation, async-rule):
  // the vitest runner switches the mutant in its own process only, so they cannot kill one
  'lib/report/sql.ts': [
    'test/lib/report/figures.test.ts',
    'test/lib/report/figures-edges.test.ts',
    'test/lib/report/generated.test.ts',
    'test/lib/report/additive.test.ts',
    'test/lib/report/dialects.test.ts',
    'test/lib/report/cut.test.ts',
    'test/lib/report/window.test.ts',
    'test/lib/report/scope-edges.test.ts',
    'test/lib/report/cost-sources.test.ts',
    'test/lib/report/host-ledger.test.ts',
    'test/lib/report/fan-out-cost.test.ts',
    'test/lib/report/unreadable-property.test.ts',
    'test/lib/report/build.test.ts',
    'test/lib/report/statements.test.ts',
  ],
  // fan-out-cost.test.ts holds the section to a model written in the test (R5-3, fast-check);
  // cost-sources.test.ts the section's null and its note on a ledger without turn_id;
  // fan-out-cost-gap.test.ts each store the catalog describes and the statement's task_sessions join
  'lib/report/fan-out-cost-sql.ts': [
    'test/lib/report/fan-out-cost.test.ts',
    'test/lib/report/cost-sources.test.ts',
    'test/lib/report/fan-out-cost-gap.test.ts',
  ],
  // trees.test.ts proves the reading and nesting on each schema; otlp-conventions.test.ts the
  // changed-order listing's unreadable counts and an unreadable metric named (R4-3); the export
  // runs the position, pages and ties. trees-scale.test.ts (R4-4: 100,000 deep, 30,000 wide) is
  // left out: 8.5 s on SQLite for every mutant it covers, and nestTurn's property test in
  // trees.test.ts proves the same nesting row by row
  'lib/report/trees.ts': ['test/lib/report/trees.test.ts', 'test/lib/export/otlp-conventions.test.ts', ...EXPORT_RUNS],
  // charts.test.ts proves each chart's drawing, caption and table, drawing them inside each test;
  // the page's tests draw every chart for every page (html.test.ts at load: each mutant would
  // re-run all of them) and prove the page around the charts, not the charts
  'lib/report/render/charts.ts': ['test/lib/report/render/charts.test.ts'],
  'lib/report/render/csv.ts': RENDER,
  'lib/report/render/escape.ts': PAGE,
  'lib/report/render/html.ts': [...PAGE, 'test/lib/report/render/html-text.test.ts'],
  'lib/report/render/labels.ts': [...RENDER, ...PAGE],
  // the style sheet and the policy are module constants: each mutant re-runs every covering test,
  // and the browser tests start Chromium for each; html.test.ts reads the policy and the sheet's
  // media queries (the browser tests, which read the drawn page, are left out of the mutation run)
  'lib/report/render/style.ts': PAGE,
  'lib/report/render/units.ts': ['test/lib/report/render/units.test.ts', ...PAGE],
  'lib/report/render/table.ts': ['test/lib/report/render/table.test.ts', ...RENDER, 'test/bin/report.test.ts'],
  'lib/export/handler.ts': ['test/functions/export-handler.test.ts', 'test/functions/export.test.ts'],
  // position.test.ts proves the stored form and the compare-and-set; position-ties.test.ts the
  // order's byte comparison and the exact resume at ties (R4-8, issue 48); export-edges and the CLI
  // (in-process: runCliCaptured) when a run reads and moves it (otlp-export.test.ts reaches it only
  // through whole runs)
  'lib/export/position.ts': [
    'test/lib/export/position.test.ts',
    'test/lib/export/position-ties.test.ts',
    'test/lib/export/export-edges.test.ts',
    'test/bin/cli-export-position.test.ts',
  ],
  // otlp-changes.test.ts proves the change detection and the partial successes (R4-8), run.ts's own;
  // run.test.ts the order, lookback, settle lag, batches and refusals; otlp-conventions.test.ts the
  // page read turn by turn when a value cannot be read (R4-3); position-ties.test.ts the resume after
  // the exact point at ties, with any lookback, batch and failing batch (R4-8, issue 48); the CLI's
  // position flags run in-process (runCliCaptured), so they reach the mutant
  'lib/export/run.ts': [
    ...EXPORT_RUNS,
    'test/lib/export/otlp-changes.test.ts',
    'test/lib/export/run.test.ts',
    'test/lib/export/position-ties.test.ts',
    'test/lib/export/otlp-conventions.test.ts',
    'test/bin/cli-export-position.test.ts',
  ],
  'lib/export/otlp/config.ts': [
    'test/lib/export/otlp-config.test.ts',
    'test/lib/export/otlp-output.test.ts',
    'test/bin/cli-export.test.ts',
  ],
  'lib/export/otlp/ids.ts': [
    'test/lib/export/otlp-config.test.ts',
    'test/lib/export/export-edges.test.ts',
    'test/lib/export/otlp-spans.test.ts',
  ],
  // otlp-span-fields.test.ts writes out every field of every span; otlp-conventions.test.ts the same
  // rules on stored rows. Left out: the export runs (run.ts's rules, reaching spans only through a
  // receiver) and otlp-spans.test.ts (R4-4's 100,000-deep chain: ~3 s for every mutant, and the
  // walk's order and parents are written out in otlp-span-fields.test.ts)
  'lib/export/otlp/spans.ts': ['test/lib/export/otlp-span-fields.test.ts', 'test/lib/export/otlp-conventions.test.ts'],
  // the export runs and the CLI reach the body only through a refusal's message, which
  // otlp-output.test.ts proves; with them, each of the file's static mutants re-ran 178 tests (~2 min)
  'lib/peer.ts': ['test/lib/export/otlp-output.test.ts', 'test/lib/publish/s3-messages.test.ts'],
  'lib/export/otlp/digest.ts': ['test/lib/export/otlp-changes.test.ts', ...EXPORT_RUNS],
  // the table is module state: each of its mutants would re-run every covering test, so only the
  // test that proves the table (the export runs reach it only through spans.ts)
  'lib/export/otlp/provider.ts': ['test/lib/export/otlp-output.test.ts'],
  // unreadable-turn.test.ts writes out each reason; otlp-conventions.test.ts proves the skip in a run
  'lib/export/unreadable.ts': ['test/lib/export/unreadable-turn.test.ts', 'test/lib/export/otlp-conventions.test.ts'],
  // otlp-transport.test.ts proves the transport alone (what is sent, retried, waited, said);
  // export-edges.test.ts its rules inside a run (back-off, 429). The other export runs and the CLI
  // reach it only through runExport
  'lib/export/otlp/transport.ts': ['test/lib/export/otlp-transport.test.ts', 'test/lib/export/export-edges.test.ts'],
  // R6-3: the agents' record readers, each against its own tests; records.test.ts holds every
  // reader's "never throws" property (its 100 MB transcript runs in a child process: no mutant there)
  'lib/producer/usage/records.ts': [
    'test/lib/producer/usage/records.test.ts',
    'test/lib/producer/usage/claude-transcript.test.ts',
    'test/lib/producer/usage/opencode-session.test.ts',
    'test/lib/producer/usage/codex-rollout.test.ts',
  ],
  'lib/producer/usage/claude-requests.ts': [
    'test/lib/producer/usage/claude-requests.test.ts',
    'test/lib/producer/usage/claude-transcript.test.ts',
    'test/lib/producer/usage/claude-stream.test.ts',
  ],
  'lib/producer/usage/claude-transcript.ts': [
    'test/lib/producer/usage/claude-transcript.test.ts',
    'test/lib/producer/usage/records.test.ts',
  ],
  'lib/producer/usage/claude-stream.ts': [
    'test/lib/producer/usage/claude-stream.test.ts',
    'test/lib/producer/usage/records.test.ts',
  ],
  'lib/producer/usage/opencode-session.ts': [
    'test/lib/producer/usage/opencode-session.test.ts',
    'test/lib/producer/usage/opencode-edges.test.ts',
    'test/lib/producer/usage/records.test.ts',
  ],
  'lib/producer/usage/codex-rollout.ts': [
    'test/lib/producer/usage/codex-rollout.test.ts',
    'test/lib/producer/usage/records.test.ts',
  ],
  'lib/producer/usage/price.ts': ['test/lib/producer/usage/price.test.ts'],
  'lib/cli/flags.ts': ['test/lib/cli/flags.test.ts', 'test/bin/cli-export.test.ts'],
  // json.test.ts proves the serialiser (R4-1, R4-4, issue 25); json-text.test.ts the pieces it joins
  'lib/cli/json.ts': ['test/lib/cli/json.test.ts', 'test/lib/json-text.test.ts', 'test/bin/report.test.ts'],
};

/**
 * `npm run mutate [file or folder…]`: a folder (say `lib/report/render`) stands for every mapped
 * file under it; nothing: every mapped file.
 */
function selected(args: readonly string[]): string[] {
  if (args.length === 0) return Object.keys(MUTATED);
  return args.flatMap((arg) => {
    if (MUTATED[arg]) return [arg];
    const prefix = `${arg.replace(/\/+$/, '')}/`;
    const under = Object.keys(MUTATED).filter((file) => file.startsWith(prefix));
    if (under.length === 0)
      throw new Error(`${arg} is neither a mutated file nor a folder holding one: ${Object.keys(MUTATED).join(', ')}`);
    return under;
  });
}

/**
 * Test runners at once: 1 by default (the machine is shared); MUTATE_CONCURRENCY=2 on a quiet
 * 2-core machine, each runner a vitest process of its own with its own SQLite files.
 */
const CONCURRENCY = /^[1-9]\d*$/.test(process.env.MUTATE_CONCURRENCY ?? '') ? process.env.MUTATE_CONCURRENCY! : '1';

const files = selected(process.argv.slice(2));
let failed = 0;
for (const file of files) {
  const tests = MUTATED[file]!;
  const run = spawnSync(
    process.execPath,
    [
      'node_modules/@stryker-mutator/core/bin/stryker.js',
      'run',
      '--mutate',
      file,
      '--concurrency',
      CONCURRENCY,
      '--reporters',
      'clear-text,progress,json',
    ],
    { stdio: 'inherit', env: { ...process.env, MUTATE_TESTS: tests.join(',') } },
  );
  if (run.status !== 0) failed += 1;
  // one JSON report per file (reports/ is git-ignored), so a folder's run keeps every file's survivors
  if (existsSync(REPORT)) renameSync(REPORT, `reports/mutation/${file.replaceAll('/', '_')}.json`);
}
process.exit(failed === 0 ? 0 : 1);
