import { readFileSync } from 'node:fs';
import type { StartIngestPipeline } from '../lib/cli/commands/ingest.js';
import { CliFailure } from '../lib/cli/failure.js';
import { EXIT_INTERRUPTED, installInterrupt } from '../lib/cli/interrupt.js';
import { runCli } from '../lib/cli/main.js';
import { FAUXQS_MISSING_HINT } from '../lib/hints.js';

// EMF metric documents are for CloudWatch; on a terminal they would bury the result.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// Local tooling: the SDK's Node 20 end-of-support notice is for the deployed functions (nodejs22.x).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * `ingest` alone needs the local SQS emulator (fauxqs, an optional dependency): loaded when it
 * runs, so migrate, health and report work in an install without it.
 */
const startPipeline: StartIngestPipeline = async (options) => {
  let pipeline: typeof import('../local/pipeline.js');
  try {
    pipeline = await import('../local/pipeline.js');
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new CliFailure(FAUXQS_MISSING_HINT);
  }
  return pipeline.startLocalPipeline(options);
};

/** The package's version: package.json is one folder up from bin/cli.ts, two from dist/bin/cli.js. */
function packageVersion(): string | undefined {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'subagent-context') return pkg.version;
    } catch {
      // not here; the next candidate
    }
  }
  return undefined;
}

const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
// issue 51: Ctrl-C asks the command to stop at its next boundary and say where it stands; a second one stops at once
const interrupt = installInterrupt(
  process,
  (text) => process.stderr.write(text),
  () => process.exit(EXIT_INTERRUPTED),
);
const code = await runCli(process.argv.slice(2), io, { startPipeline, version: packageVersion(), interrupt });
interrupt.dispose();
process.exitCode = code;
// Idle keep-alive sockets (SQS, the database pool) would hold the process for seconds after the
// answer; once stdout has drained there is nothing left to wait for.
process.stdout.write('', () => setTimeout(() => process.exit(code), 50).unref());
