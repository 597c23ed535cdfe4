import { runCli } from '../../lib/cli/main.js';
import { startLocalPipeline } from '../../local/pipeline.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real CLI in-process (lib/cli/main.ts), its output captured; `env` is all the environment it sees. */
export async function runCliCaptured(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { isTTY?: boolean } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    argv,
    {
      stdout: { write: (text: string) => (stdout += text), isTTY: options.isTTY ?? false },
      stderr: { write: (text: string) => (stderr += text), isTTY: false },
      env,
    },
    { startPipeline: startLocalPipeline },
  );
  return { code, stdout, stderr };
}

export interface CliJsonRun extends CliRun {
  /** stdout parsed as the --json document; undefined when stdout is not JSON */
  json: any;
}

/** `runCliCaptured`, with stdout parsed as the `--json` document it should be. */
export async function runCliJson(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { isTTY?: boolean } = {},
): Promise<CliJsonRun> {
  const run = await runCliCaptured(argv, env, options);
  let json: unknown;
  try {
    json = JSON.parse(run.stdout);
  } catch {
    json = undefined;
  }
  return { ...run, json };
}

/** The running test database's own WebSocket proxy (PostgreSQL targets), so a test can cut the connection. */
export function testProxyEnv(): NodeJS.ProcessEnv {
  return process.env.DATABASE_WS_PROXY ? { DATABASE_WS_PROXY: process.env.DATABASE_WS_PROXY } : {};
}
