import { runCli } from '../lib/cli/main.js';
import { startLocalPipeline } from '../local/pipeline.js';

// EMF metric documents are for CloudWatch; on a terminal they would bury the result.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// Local tooling: the SDK's Node 20 end-of-support notice is for the deployed functions (nodejs22.x).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
const code = await runCli(process.argv.slice(2), io, { startPipeline: startLocalPipeline });
process.exitCode = code;
// Idle keep-alive sockets (SQS, the database pool) would hold the process for seconds after the
// answer; once stdout has drained there is nothing left to wait for.
process.stdout.write('', () => setTimeout(() => process.exit(code), 50).unref());
