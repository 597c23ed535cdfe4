import { spawnSync } from 'node:child_process';

/**
 * `npm run mutate [file…]`: StrykerJS mutation testing (not in CI: it is CPU-heavy), one file at a
 * time with concurrency 1, each against the tests that prove its rules. Scores and survivors are
 * reported in docs/mutation.md. Target: ≥ 85% per file.
 */
export const MUTATED: Readonly<Record<string, readonly string[]>> = {
  'lib/redact.ts': ['test/lib/redact.test.ts', 'test/lib/errors.test.ts'],
  'lib/text.ts': ['test/lib/text.test.ts', 'test/lib/migrate/text-parity.test.ts'],
  'lib/normalize.ts': ['test/lib/normalize.test.ts'],
  'lib/health/checkpoint.ts': ['test/lib/health/checkpoint.test.ts'],
  'lib/db/pipeline.ts': ['test/lib/db/pipeline.test.ts', 'test/lib/db/database.test.ts'],
  'lib/merge.ts': ['test/lib/merge.test.ts'],
};

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(MUTATED);
let failed = 0;
for (const file of files) {
  const tests = MUTATED[file];
  if (!tests) throw new Error(`${file} is not one of the mutated files: ${Object.keys(MUTATED).join(', ')}`);
  const run = spawnSync(
    process.execPath,
    [
      'node_modules/@stryker-mutator/core/bin/stryker.js',
      'run',
      '--mutate',
      file,
      '--concurrency',
      '1',
      '--reporters',
      'clear-text,progress',
    ],
    { stdio: 'inherit', env: { ...process.env, MUTATE_TESTS: tests.join(',') } },
  );
  if (run.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
