import { runCli } from '../lib/cli/main.js';

// EMF metric documents are for CloudWatch; on a terminal they would bury the result.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
// Local tooling: the SDK's Node 20 end-of-support notice is for the deployed functions (nodejs22.x).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
