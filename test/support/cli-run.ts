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
