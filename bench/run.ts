/**
 * `npm run bench`: sets the benchmark's environment before any module reads it (the functions'
 * logger reads its level at import), then runs bench/main.ts. Sizes: BENCH_SCALE, BENCH_RUNS,
 * BENCH_MESSAGES, BENCH_STORE_RUNS, BENCH_COLD_RUNS, BENCH_ONLY, BENCH_OUT (see BENCHMARKS.md); the heavy
 * modes' own in their files (health-scale-main.ts, read-side-main.ts, publish-main.ts).
 */
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// The AWS SDK warns once about Node 20 (Lambda runs nodejs22.x); it is not a benchmark finding.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// `npm run bench -- health`: only the health check at 1M/10M messages (heavy; issue 13).
// `npm run bench -- read`: the read side at 1M/10M messages (heavy; R4-12, issue 35).
// `npm run bench -- publish`: the publish function at 1M messages, its cold start and bundle (R5-6, issue 49).
// `npm run bench -- spend`: spend over 10,000 agent records against wc -l (R6-4, issue 56).
const mode = process.argv.slice(2);
await (mode.includes('health')
  ? import('./health-scale-main.js')
  : mode.includes('read')
    ? import('./read-side-main.js')
    : mode.includes('publish')
      ? import('./publish-main.js')
      : mode.includes('spend')
        ? import('./spend-main.js')
        : import('./main.js'));
