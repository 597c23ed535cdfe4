import { defineConfig } from 'vitest/config';

// `npm run mutate` (scripts/mutate.ts): StrykerJS runs, for each file it mutates, only the test
// files that prove that file's rules (MUTATE_TESTS), not every test that imports it transitively
// (lib/redact.ts is imported by nearly everything).
export default defineConfig({
  test: {
    include: (process.env.MUTATE_TESTS ?? '').split(',').filter(Boolean),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
